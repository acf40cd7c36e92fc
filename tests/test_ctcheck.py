"""Constant time, checked statically on the compiled objects: every function of every preset's
objects (the kernels and whatever the compiler keeps out of line), gcc and clang at
-O0/-O1/-O2/-O3/-Os, has no branch or memory address that depends on data from the caller's
arrays and no division; deliberately leaky functions are caught."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import compiled_object, compilers_for, require_tool
from nttgen.ctcheck import ARCHES, check_object, disassemble
from nttgen.emit.isa import isa_class
from nttgen.generate import generate
from nttgen.rings import PRESETS

OPTS = ("-O0", "-O1", "-O2", "-O3", "-Os")


def _compile(cc: str, src: Path, opt: str, out: Path, extra: tuple[str, ...] = ()) -> Path:
    subprocess.run([cc, "-std=c99", opt, *extra, "-c", str(src), "-o", str(out)], check=True)
    return out


def _isa_compilers() -> list:  # type: ignore[type-arg]
    """(ISA, compiler) pairs: gcc and clang, except RVV (clang only: gcc 12 has no RVV
    intrinsics)."""
    isas = ["c", "avx2", "avx512", "neon", "rvv", "rvv128", "rvv256"]
    return [pytest.param(isa, cc, id=f"{cc}-{isa}") for isa in isas for cc in compilers_for(isa)]


@pytest.mark.parametrize("isa,compiler", _isa_compilers())
@pytest.mark.parametrize("ring", list(PRESETS.values()), ids=lambda r: r.name)
def test_generated_objects_are_constant_time(isa: str, compiler: str, ring) -> None:  # type: ignore[no-untyped-def]
    """Every ISA's objects on its own architecture (NEON: AArch64, RVV: RV64GCV,
    cross-compiled)."""
    arch = isa_class(isa).arch or "x86_64"
    require_tool("objdump")
    files = generate(ring, isa)
    names = {f["c_name"] for f in json.loads(files.manifest)["functions"].values()}
    for opt in OPTS:
        obj = compiled_object(compiler, isa, files, opt)
        violations = check_object(obj, arch)  # every function: helpers kept out of line too
        assert names <= set(disassemble(obj, ARCHES[arch]()))
        assert not violations, f"{compiler} {opt}:\n" + "\n".join(map(str, violations[:10]))


LEAKS = {
    "branch": (
        "extern void sink(void);\nvoid leak(const short *a) { if (a[3] > 5) { sink(); } }\n",
        "conditional branch on secret data",
    ),
    "table": (
        "static const short t[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};\n"
        "short leak(const short *a) { return t[a[0] & 15]; }\n",
        "memory address depends on secret data",
    ),
    "division": (
        "short leak(const short *a) { return (short)(a[0] / a[1]); }\n",
        "division instruction",
    ),
    "modulo": (
        "int leak(const int *a, int m) { return a[0] % m; }\n",
        "division instruction",
    ),
    "spilled": (
        "extern void sink(void);\n"
        "void leak(const short *a) { volatile short s = a[0]; if (s) { sink(); } }\n",
        "conditional branch on secret data",
    ),
    # the leak in a stage the entry point calls, kept out of line
    "in_callee": (
        "extern void sink(void);\n"
        "static __attribute__((noinline)) void stage(const short *a) {\n"
        "    for (int i = 0; i < 256; i++) { if (a[i] > 5) sink(); }\n}\n"
        "void leak(const short *a) { stage(a); stage(a + 2); }\n",
        "conditional branch on secret data",
    ),
    # AVX-512: a branch on a mask register made from data, and a gather indexed by data
    "mask_branch": (
        "#include <immintrin.h>\nextern void sink(void);\n"
        "void leak(const short *a) {\n"
        "    if (_mm512_movepi16_mask(_mm512_loadu_si512((const void *)a))) { sink(); }\n}\n",
        "conditional branch on secret data",
    ),
    "gather": (
        "#include <immintrin.h>\n"
        "void leak(int *r, const int *a, const int *t) {\n"
        "    __m512i i = _mm512_and_si512(_mm512_loadu_si512((const void *)a),"
        " _mm512_set1_epi32(15));\n"
        "    _mm512_storeu_si512((void *)r, _mm512_i32gather_epi32(i, (const void *)t, 4));\n}\n",
        "memory address depends on secret data",
    ),
}


@pytest.mark.parametrize("compiler", ["gcc", "clang-19"])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("leak", list(LEAKS))
def test_leaks_are_caught(leak: str, compiler: str, opt: str, tmp_path: Path) -> None:
    cc = require_tool(compiler)
    require_tool("objdump")
    code, reason = LEAKS[leak]
    src = tmp_path / "leak.c"
    src.write_text(code)
    obj = _compile(cc, src, opt, tmp_path / "leak.o", isa_class("avx512").cflags)
    violations = check_object(obj, "x86_64")  # every function of the object
    assert any(v.reason == reason for v in violations), [str(v) for v in violations]


@pytest.mark.parametrize("compiler", ["gcc", "clang-19"])
def test_public_loops_and_pointer_arithmetic_pass(compiler: str, tmp_path: Path) -> None:
    """Loops, pointer arithmetic, a read-only table read at public indices (the table's
    address kept in a register or spilled) and a helper of the object raise nothing at any
    level of optimisation."""
    cc = require_tool(compiler)
    require_tool("objdump")
    src = tmp_path / "ok.c"
    src.write_text(
        "static const int at[8] = {3, 1, 4, 1, 5, 2, 6, 0};\n"
        "static __attribute__((noinline)) short triple(short x) { return (short)(x * 3); }\n"
        "void ok(short *a, const short *b, unsigned long k) {\n"
        "    for (unsigned long j = 0; j < k; ++j)\n"
        "        for (int i = 0; i < 256; ++i) a[i] = (short)(a[i] + triple(b[j * 256 + i]));\n"
        "    for (int i = 0; i < 8; ++i) a[i] = b[at[i]];\n"
        "}\n"
    )
    for opt in OPTS:
        obj = _compile(cc, src, opt, tmp_path / f"ok{opt}.o")
        assert check_object(obj, "x86_64") == []


def test_architectures_are_registered() -> None:
    assert "x86_64" in ARCHES


def test_secret_stack_bytes_behave_as_a_set_of_bytes() -> None:
    """The checker keeps secret stack bytes as sorted ranges (nttgen.byte_ranges): after any
    mix of stores, overwrites and joins they hold exactly the bytes a plain set would, in the
    canonical form (sorted, disjoint, not touching), and answer overlap queries alike."""
    import random

    from nttgen.byte_ranges import ByteRanges

    rng = random.Random(5)
    for _ in range(300):
        ranges, plain = ByteRanges(), set()
        for _ in range(40):
            lo = rng.randint(-64, 64)
            hi = lo + rng.randint(0, 16)
            what = rng.random()
            if what < 0.4:
                ranges.add(lo, hi)
                plain |= set(range(lo, hi))
            elif what < 0.7:
                ranges.remove(lo, hi)
                plain -= set(range(lo, hi))
            else:
                other = ByteRanges()
                other.add(lo, hi)
                other.add(hi + 3, hi + 9)
                before = len(ranges)
                ranges |= other
                added = (set(range(lo, hi)) | set(range(hi + 3, hi + 9))) - plain
                plain |= added
                assert (len(ranges) > before) == bool(added)  # how a join sees a change
            assert {b for start, size in ranges for b in range(start, start + size)} == plain
            assert len(ranges) == len(plain)
            assert all(s < e for s, e in zip(ranges.starts, ranges.ends, strict=True))
            assert all(e < s for e, s in zip(ranges.ends, ranges.starts[1:], strict=False))
            lo = rng.randint(-70, 70)
            hi = lo + rng.randint(1, 12)
            assert ranges.overlaps(lo, hi) == bool(plain & set(range(lo, hi)))
