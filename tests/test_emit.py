"""The generated C: compiles cleanly under gcc and clang, is deterministic, carries its header,
is clang-format clean, is checked in for the presets, and has no data-dependent branch,
division, modulo or index."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import (
    ALL_ISAS,
    ALL_RINGS,
    STRICT,
    compiled_object,
    compilers_for,
    require_isa,
    require_tool,
    ring_id,
    ring_isa_cases,
)
from nttgen.emit import c_ast as C
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import generate_ntru
from nttgen.generate import canonical_command, generate
from nttgen.ntru_rings import NTRU_PRESETS
from nttgen.rings import PRESETS
from nttgen.version import __version__

ROOT = Path(__file__).resolve().parent.parent


def _write(ring, tmp_path: Path, isa: str = "c") -> Path:  # type: ignore[no-untyped-def]
    files = generate(ring, isa)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path / f"{files.stem}.c"


def _compiler_cases() -> list:  # type: ignore[type-arg]
    return [
        pytest.param(cc, *case.values, id=f"{case.id}-{cc}")
        for case in ring_isa_cases()
        for cc in compilers_for(case.values[1])
    ]


@pytest.mark.parametrize("compiler,ring,isa", _compiler_cases())
def test_compiles_warning_free(compiler: str, ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    files = generate(ring, isa)
    opts = ("-O0", "-O3") if ring.name in ("mlkem", "mldsa") else ("-O3",)
    for opt in opts:
        assert compiled_object(compiler, isa, files, opt).stat().st_size > 0


@pytest.mark.parametrize("ring", list(PRESETS.values()), ids=ring_id)
def test_header_compiles_as_cpp(ring, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cxx = require_tool("g++")
    _write(ring, tmp_path)
    files = generate(ring, "c")
    (tmp_path / "t.cpp").write_text(f'#include "{files.stem}.h"\nint main() {{ return 0; }}\n')
    subprocess.run(
        [cxx, "-Wall", "-Werror", "-c", str(tmp_path / "t.cpp"), "-o", str(tmp_path / "t.o")],
        check=True,
    )


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_generation_is_deterministic(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    from nttgen.emit.files import FileWriter
    from nttgen.generate import build_kernel_set

    first = generate(ring, isa)
    # a completely fresh build (no caches) gives the same bytes: the portable C's set, which
    # publishes the ring's contract, then the ISA's set meeting it
    ks = build_kernel_set(ring, "c")
    if isa != "c":
        ks = build_kernel_set(ring, isa, ks.published)
    again = FileWriter(ks, isa_class(isa), canonical_command(ring, isa)).files()
    assert first.items() == again.items()


def test_header_names_version_command_and_parameters() -> None:
    ring = PRESETS["mlkem"]
    files = generate(ring, "c")
    for text in (files.header, files.source):
        head = text[:3000]
        assert f"nttgen {__version__}" in head
        assert "nttgen generate --ring mlkem --isa c" in head
        assert "n = 256, q = 3329" in head and "x^256 + 1" in head
        assert "root r = 17" in head and "FIPS 203" in head
        assert "ops:" in head and "->" in head  # op counts and contracts per function
        assert not re.search(r"20\d\d-\d\d-\d\d", text)  # no dates
    custom = generate(ALL_RINGS[-1], "c")
    assert "nttgen generate --n 256 --q 3329 --lane-bits 32 --isa c" in custom.source


@pytest.mark.parametrize("isa", ALL_ISAS)
def test_symbols_are_prefixed(isa: str, tmp_path: Path) -> None:
    nm = require_tool("nm")  # GNU nm reads the other architectures' objects too
    for ring in PRESETS.values():
        obj = compiled_object(compilers_for(isa)[0], isa, generate(ring, isa), "-O2")
        out = subprocess.run(
            [nm, "--defined-only", "-g", str(obj)], capture_output=True, text=True, check=True
        )
        names = [ln.split()[-1] for ln in out.stdout.splitlines() if ln.strip()]
        assert names, "no external symbols"
        assert all(n.startswith(f"nttgen_{ring.c_name}_{isa}_") for n in names), names


@pytest.mark.parametrize("isa", ALL_ISAS)
def test_clang_format_clean(isa: str, tmp_path: Path) -> None:
    """The custom rings' files are clang-format clean. The presets' are checked where they are
    checked in (test_lint.py formats generated/, and test_generated.py
    shows the generator writes those bytes today), so they are not formatted twice."""
    cf = require_tool("clang-format-19")
    paths = []
    for ring in ALL_RINGS:
        if ring.preset or isa_class(isa).unsupported(ring.n, ring.lane):
            continue
        files = generate(ring, isa)
        for name, text in files.items():
            if name.endswith((".c", ".h")):
                p = tmp_path / name
                p.write_text(text)
                paths.append(str(p))
    proc = subprocess.run(
        [cf, f"--style=file:{ROOT / '.clang-format'}", "--dry-run", "--Werror", *paths],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[:2000]


def _code_only(text: str) -> str:
    """The release code: comments and NTTGEN_DEBUG-only blocks removed."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"#ifdef NTTGEN_DEBUG\n.*?#endif\n", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_source_has_no_secret_dependent_constructs(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """No branch, conditional, division or modulo anywhere in the kernels but the guards of
    unrolled loops over the public count k; every array index is built from loop counters and
    constants only."""
    lines = _code_only(generate(ring, isa).source).splitlines()
    # a part (c_ast.split_long_runs) only starts a new basic block: its goto jumps to the
    # very next line, unconditionally; every other goto is banned below
    parts = [i for i, ln in enumerate(lines) if re.fullmatch(r" *goto part_\d+;", ln)]
    for i in parts:
        assert lines[i + 1].strip() == lines[i].strip()[5:-1] + ":;", lines[i : i + 2]
    skip = {*parts, *(i + 1 for i in parts)}
    code = "\n".join(ln for i, ln in enumerate(lines) if i not in skip)
    counters = set(re.findall(r"for \(size_t (\w+) = 0;", code))
    # the only ifs: a capped loop's trips in straight lines (Isa.guarded_trips), each guarded
    # by the public count k and loop counters
    guards = [ln for ln in code.splitlines() if re.match(r" *if \(", ln)]
    for ln in guards:
        cond = re.fullmatch(r" *if \((.*)\) \{", ln)
        assert cond, ln
        assert set(re.findall(r"[A-Za-z_]\w*", cond[1])) <= counters | {"k"}, ln
    code = "\n".join(ln for ln in code.splitlines() if ln not in guards)
    for bad in (
        r"\bif\b",
        r"\bwhile\b",
        r"\bswitch\b",
        r"\bgoto\b",
        r"\?",
        r"&&",
        r"\|\|",
        r"[^/*]/[^/*]",
        r"%",
    ):
        hits = [
            ln for ln in code.splitlines() if re.search(bad, ln) and not ln.lstrip().startswith("#")
        ]
        assert not hits, (bad, hits[:3])
    for idx in re.findall(r"\w+\[([^\]]*)\]", code):
        for ident in re.findall(r"[A-Za-z_]\w*", idx):
            assert ident in counters | {"k"}, (
                f"index {idx!r} uses {ident!r}, neither a loop counter nor the public count k"
            )


def test_c_ast_printer() -> None:
    e = C.Bin("+", C.Bin("*", C.Name("a"), C.Int(3)), C.Bin(">>", C.Name("b"), C.Int(2)))
    assert C.format_expr(e) == "a * 3 + (b >> 2)"
    assert (
        C.format_expr(C.Bin("-", C.Name("a"), C.Bin("-", C.Name("b"), C.Name("c"))))
        == "a - (b - c)"
    )
    assert C.format_expr(C.Int(-(1 << 31))) == "(-2147483647 - 1)"
    assert C.format_expr(C.Cast("int16_t", C.Bin("+", C.Name("x"), C.Int(1)))) == "(int16_t)(x + 1)"
    assert C.add(C.Int(2), C.Int(3)) == C.Int(5) and C.mul(C.Name("i"), 1) == C.Name("i")
    assert C.wrap_text("aa bb cc", 5) == ["aa bb", "  cc"]


DEBUG_DRIVER = r"""
#include <stdint.h>
#include "%(stem)s.h"
int main(int argc, char **argv) {
    static %(elem)s a[%(n)d], b[%(n)d], r[%(n)d];
    (void)argv;
    for (int i = 0; i < %(n)d; ++i) {
        a[i] = (%(elem)s)(i %% 7);
        b[i] = (%(elem)s)(i %% 5);
    }
    if (argc > 1) {
        a[3] = (%(elem)s)%(bad)d; /* outside polymul's input contract */
    }
    %(p)s_polymul(r, a, b);
    %(p)s_ntt(a);
    return 0;
}
"""


@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=ring_id)
def test_debug_build_asserts_contracts(ring, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """-DNTTGEN_DEBUG checks every entry and exit against the proven contract."""
    cc = require_tool("gcc")
    src = _write(ring, tmp_path)
    files = generate(ring, "c")
    (tmp_path / "d.c").write_text(
        DEBUG_DRIVER
        % {
            "stem": files.stem,
            "elem": ring.lane.c_type,
            "n": ring.n,
            "p": f"nttgen_{ring.c_name}_c",
            "bad": ring.q,
        }
    )
    exe = tmp_path / "d"
    subprocess.run(
        [cc, *STRICT, "-DNTTGEN_DEBUG", "-O1", str(tmp_path / "d.c"), str(src), "-o", str(exe)],
        check=True,
    )
    assert subprocess.run([str(exe)]).returncode == 0
    bad = subprocess.run([str(exe), "bad"], capture_output=True, text=True)
    assert bad.returncode != 0 and "assert_range" in bad.stderr


NTRU_DEBUG_DRIVER = r"""
#include <stdint.h>
#include "%(stem)s.h"
int main(int argc, char **argv) {
    static int16_t a[%(p)d], b[%(p)d], r[%(p)d];
    (void)argv;
    for (int i = 0; i < %(p)d; ++i) {
        a[i] = (int16_t)(i %% 2 ? %(top)d : -%(top)d); /* the ends of the input range */
        b[i] = (int16_t)(i %% 3 - 1);
    }
    if (argc > 1) {
        b[3] = 2; /* outside polymul_small's input contract */
    }
    %(stem)s_polymul(r, a, a);
    %(stem)s_polymul_small(r, a, b);
    return 0;
}
"""


@pytest.mark.parametrize("isa", ["c", "avx2"])
def test_ntru_prime_debug_build_asserts_contracts(isa: str, tmp_path: Path) -> None:
    """NTRU Prime's files build with -DNTTGEN_DEBUG too, and assert their contracts."""
    require_isa(isa)
    cc = require_tool("gcc")
    ring = NTRU_PRESETS["sntrup761"]
    files = generate_ntru(ring, isa)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    top = (ring.q - 1) // 2
    driver = NTRU_DEBUG_DRIVER % {"stem": files.stem, "p": ring.p, "top": top}
    (tmp_path / "d.c").write_text(driver)
    exe = tmp_path / "d"
    flags = isa_class(isa).cflags
    subprocess.run(
        [cc, *STRICT, *flags, "-DNTTGEN_DEBUG", "-O1", str(tmp_path / "d.c"),
         str(tmp_path / f"{files.stem}.c"), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    assert subprocess.run([str(exe)]).returncode == 0
    bad = subprocess.run([str(exe), "bad"], capture_output=True, text=True)
    assert bad.returncode != 0 and "assert_range" in bad.stderr


def test_measured_plans_apply_to_rings_of_the_same_shape() -> None:
    """A custom ring with a preset's n, depth and lane width gets the preset's measured plan
    (identical parameters must not give slower code under another name); other shapes get the
    heuristic plan with their ISA's measured defaults (NEON and RVV: the transforms as
    loops)."""
    from dataclasses import replace

    from nttgen.generate import default_config, heuristic_config
    from nttgen.rings import custom_ring
    from nttgen.tuning import ISA_DEFAULTS, TUNED

    twin = custom_ring(1024, 18433)  # newhope1024's shape, another prime
    assert default_config(twin, "avx2") == default_config(PRESETS["newhope1024"], "avx2")
    assert default_config(twin, "avx2").merge == TUNED[("newhope1024", "avx2")]["merge"]
    other = custom_ring(128, 257)
    assert default_config(other, "avx2") == heuristic_config(other, "avx2")
    assert default_config(twin, "c") == heuristic_config(twin, "c")
    # no preset's shape (and small enough to unroll: see test_large_rings.py for the rest)
    for isa in ("neon", "rvv128", "rvv256"):
        assert not default_config(other, isa).unroll and heuristic_config(other, isa).unroll
        assert default_config(other, isa).unroll_products
        assert default_config(other, isa) == replace(
            heuristic_config(other, isa), **ISA_DEFAULTS[isa]
        )


def test_long_straight_line_runs_are_split_into_parts() -> None:
    """A part (``goto part_k; part_k:;``) before every PART_STATEMENTS-th statement of each
    straight-line run, loop bodies included, numbered through the function; a short body
    comes back unchanged; labels print where clang-format puts them."""
    n = C.PART_STATEMENTS
    run = tuple(C.ExprStmt(C.Call("f", (C.Int(i),))) for i in range(2 * n + 1))
    loop = C.For("i", C.Bin("<", C.Name("i"), C.Int(3)), run)
    body = C.split_long_runs([*run, loop])
    assert [s.label for s in body if isinstance(s, C.Part)] == ["part_1", "part_2"]
    inner = body[-1]
    assert isinstance(inner, C.For)
    assert [s.label for s in inner.body if isinstance(s, C.Part)] == ["part_3", "part_4"]
    assert body.index(C.Part("part_1")) == n and len(inner.body) == 2 * n + 3
    assert C.split_long_runs(run[:n]) == run[:n]
    text = C.Unit([C.FuncDef("void", "g", (), body)]).render()
    assert "\n    goto part_1;\npart_1:;\n" in text
    assert "\n        goto part_3;\n    part_3:;\n" in text


@pytest.mark.parametrize("isa", ["avx2", "neon", "rvv128"])
def test_parts_leave_optimised_objects_unchanged(isa: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parts only shape unoptimised builds: at -O2 and -O3, gcc's and clang's code for a
    file is the same instructions with or without them."""
    from nttgen.emit.files import FileWriter
    from nttgen.generate import kernel_set

    ring = PRESETS["mldsa"]
    with_parts = generate(ring, isa)
    monkeypatch.setattr(C.stmt, "PART_STATEMENTS", 1 << 30)  # where split_long_runs reads it
    ks = kernel_set(ring, isa)
    without = FileWriter(ks, isa_class(isa), canonical_command(ring, isa)).files()
    assert "goto part_1;" in with_parts.source and "goto part_" not in without.source
    objdump = require_tool("llvm-objdump-19")
    for compiler in compilers_for(isa):
        for opt in ("-O2", "-O3"):
            code = []
            for files in (with_parts, without):
                obj = compiled_object(compiler, isa, files, opt)
                args = [objdump, "-d", "--no-show-raw-insn", obj.name]
                out = subprocess.run(args, cwd=obj.parent, capture_output=True, text=True)
                code.append(out.stdout)
            assert code[0] == code[1] and "nttgen_mldsa" in code[0], (compiler, opt)


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_gcc_keeps_the_products_by_q_as_multiplies(isa: str, tmp_path: Path) -> None:
    """gcc turns a vector product by a constant with few set bits (q = 12289: 3 * 2^12 + 1)
    into shifts, adds and subtractions, slower than the multiply; the x86 files hide q from
    it (``keep``), so NewHope's inner product keeps its multiplies and has no shift left."""
    cc = require_tool("gcc")
    files = generate(PRESETS["newhope512"], isa)
    src = tmp_path / f"{files.stem}.c"
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    obj = tmp_path / "x.o"
    subprocess.run([cc, "-O3", *isa_class(isa).cflags, "-c", str(src), "-o", str(obj)], check=True)
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], check=True,
                          capture_output=True, text=True).stdout  # fmt: skip
    body = dump.split(f"<{files.stem}_basemul_acc>:")[1].split("\n\n")[0]
    assert "vpmullw" in body and "vpsllw" not in body, body


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_x86_multiplicands_read_twice_are_loaded_once(isa: str) -> None:
    """A loaded value that a Montgomery product reads twice goes to it through ``keep`` (one
    load under gcc, not one per multiplication); other arguments and ISAs are untouched."""
    ring = PRESETS["kyber-r1"]
    src = generate(ring, isa).source
    body = src[src.index("_basemul_acc_cached(") :]
    body = body[: body.index("\n}\n")]
    loads = set(re.findall(r"const __m\d+i (\w+) =\s*_mm\d+_loadu?_si\d+\(", body))
    pins = dict(re.findall(r"const __m\d+i (\w+) = \w+_keep\((\w+)\);", body))
    calls = re.findall(r"_montmul\((\w+), (\w+), (\w+)\)", body)
    assert calls
    for a, b, c in calls:
        assert pins.get(a) in loads, a
        assert b in loads and c in loads
    assert "_keep(" not in generate(ring, "c").source


def test_x86_broadcast_tables_are_opaque_to_gcc_alone() -> None:
    """x86 reads the tables it broadcasts from through a pointer opaque to gcc alone (which
    would otherwise build each twiddle from an immediate); tables read as whole vectors, and
    the tables of other ISAs, keep plain pointers."""
    src = generate(PRESETS["mlkem"], "avx2").source
    assert "#if defined(__GNUC__) && !defined(__clang__)\n#define NTTGEN_GCC_OPAQUE(p)" in src
    # the unrolled transforms load their broadcast twiddles as whole vectors from a spread
    # copy (see test_vector_broadcasts.py), hidden from gcc as the broadcast constants are
    zetas = re.search(r"const int16_t \*(zetas_v_\d+) = nttgen_mlkem_avx2_ntt_from_zetas_v;", src)
    assert zetas and f"NTTGEN_GCC_OPAQUE({zetas[1]});" in src
    assert "_mm256_load_si256((const __m256i *)&" + zetas[1] + "[" in src
    # NTRU Prime reads its twiddles as whole vectors, through plain pointers; only its
    # broadcast constants, read where used, are hidden (see test_const_loads.py)
    ntru = generate_ntru(NTRU_PRESETS["sntrup761"], "avx2").source
    hidden = re.findall(r"NTTGEN_GCC_OPAQUE\((\w+)\);", ntru)
    assert hidden and all(name.startswith("consts_") for name in hidden)
    assert re.search(r"const int16_t \*const (tw_\d+) = nttgen_sntrup761_avx2_forward_tw;", ntru)
    assert "NTTGEN_GCC_OPAQUE" not in generate(PRESETS["mlkem"], "c").source
