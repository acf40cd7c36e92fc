"""``barrett_coarse``, the Barrett reduction by one rounding high product: its semantics
against integer arithmetic, its range as the analysis gives it, the lazy policy's use of it,
and every backend's helper compiled (gcc and clang; NEON and RVV cross-compiled and run under
QEMU) and run on all 2^16 lane values against the semantics."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_command, compilers_for, host_executable, require_isa
from nttgen.cross import isa_target
from nttgen.dsl import semantics
from nttgen.dsl.builder import Builder
from nttgen.emit import c_ast as C
from nttgen.emit.files import _used_helpers
from nttgen.emit.isa import isa_class
from nttgen.emit.isa.base import EmitContext
from nttgen.interp import transfer
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.programs.lazy import Reducer

ALL16 = np.arange(-(1 << 15), 1 << 15, dtype=np.int64)
PRIMES = (4591, 4621, 5167, 3329, 7681, 12289, 257, 3)


@pytest.mark.parametrize("q", PRIMES)
def test_semantics_against_integers(q: int) -> None:
    """For every 16-bit a: t = floor(a*v/2^15 + 1/2) with v = round(2^15/q) (written here as
    floor((2av + 2^15) / 2^16) over Python integers), r = a - t*q; r is congruent to a and
    within the range the analysis gives for the whole lane."""
    ar = Arith(q, I16)
    v = ar.barrett_coarse_v
    assert v == round((1 << 15) / q) and v >= 1
    got = semantics.barrett_coarse(ALL16, I16, q, v)
    want = np.array([a - q * ((2 * a * v + (1 << 15)) // (1 << 16)) for a in ALL16.tolist()])
    assert (got == want).all()
    assert ((got - ALL16) % q == 0).all()
    lo, hi = transfer.barrett_coarse((-(1 << 15), (1 << 15) - 1), ar)
    assert (lo, hi) == (int(got.min()), int(got.max()))
    assert I16.fits(lo, hi)


def test_coarse_range_for_sntrup761() -> None:
    """q = 4591: a full 16-bit lane comes back within 2881 (0.63q), where ``barrett`` gives
    the centred 2295; on a narrow range the analysis is the exact image (sub-ranges of a
    random walk checked by enumeration)."""
    ar = Arith(4591, I16)
    assert transfer.barrett_coarse((-32768, 32767), ar) == (-2881, 2881)
    assert transfer.barrett((-32768, 32767), ar) == (-2295, 2295)
    rng = np.random.default_rng(7)
    for _ in range(50):
        lo, hi = sorted(int(x) for x in rng.integers(-32768, 32768, 2))
        r = semantics.barrett_coarse(np.arange(lo, hi + 1), I16, 4591, ar.barrett_coarse_v)
        assert transfer.barrett_coarse((lo, hi), ar) == (int(r.min()), int(r.max()))


def test_builder_refuses_32_bit_lanes() -> None:
    S = Builder("k", Arith(8380417, I32), 8, "")
    x = S.input("a", 8, (-10, 10), doc="")
    with pytest.raises(ValueError, match="barrett_coarse needs 16-bit lanes"):
        S.barrett_coarse(S.load(x, 0))


@pytest.mark.parametrize("coarse", [False, True])
def test_reducer_takes_the_coarse_form_only_where_allowed(coarse: bool) -> None:
    """The lazy policy reduces by ``barrett_coarse`` when the builder allows it and by
    ``barrett`` otherwise; an output contract narrower than the coarse range (the centred
    one) gets ``barrett``; the evaluated program equals the exact sums mod q."""
    q, lanes = 4591, 8
    S = Builder("k", Arith(q, I16), lanes, "")
    S.coarse_reductions = coarse
    red = Reducer(S)
    a = S.input("a", 4 * lanes, (-32768, 32767), doc="")
    r = S.output("r", 2 * lanes, doc="")
    x = [S.load(a, i * lanes) for i in range(4)]
    s, t = red.make_room(x[0], x[1], need_diff=False)
    u = S.add(s, t)
    S.store(r, 0, red.fit_to(u, (-q, q)))
    S.store(r, lanes, red.fit_to(S.add(x[2], S.const(0)), (-(q // 2), q // 2)))
    fn = S.finish(require={"r": (-q, q)})
    kinds = [getattr(st, "kind", None) for st in fn.body]
    assert kinds.count("barrett_coarse") == (3 if coarse else 0)
    assert kinds.count("barrett") == (1 if coarse else 3)
    rng = np.random.default_rng(1)
    vals = np.concatenate(([-32768] * lanes, [32767] * lanes, rng.integers(-32768, 32768, 16)))
    out = evaluate(fn, Arith(q, I16), {"a": vals}, checked=True)["r"]
    want = np.concatenate((vals[:lanes] + vals[lanes : 2 * lanes], vals[2 * lanes : 3 * lanes]))
    assert ((out - want) % q == 0).all()
    assert (np.abs(out[lanes:]) <= q // 2).all()


def _program(isa: str) -> str:
    """A C program that reads all 2^16 lane values, applies the backend's barrett_coarse to
    each vector of them and prints the results."""
    backend = isa_class(isa)(EmitContext(Arith(4591, I16), "t"))
    rvv = isa_class(isa).arch == "riscv64"
    lanes = 1 if isa == "c" else isa_class(isa).lanes_for(I16)
    x = backend.load(C.Name("a"), C.Int(0), False)
    params = [C.Param("int16_t", "r", "restrict"), C.Param("const int16_t", "a", "restrict")]
    if rvv:
        params.append(C.Param("size_t", "vl"))
    kernel = C.FuncDef(
        "void",
        "apply",
        tuple(params),
        (backend.store(C.Name("r"), C.Int(0), backend.barrett_coarse(x), False),),
        storage="static",
    )
    unit = C.Unit(
        [
            C.Directive("#include <stddef.h>"),
            C.Directive("#include <stdint.h>"),
            C.Directive("#include <stdio.h>"),
            *(C.Directive(f"#include <{h}>") for h in getattr(backend, "includes", ())),
            *_used_helpers(backend.helpers(), [kernel]),
            kernel,
        ]
    )
    step = "__riscv_vsetvlmax_e16m1()" if rvv else str(lanes)
    call = "apply(r + i, a + i, step)" if rvv else "apply(r + i, a + i)"
    main = f"""
static int16_t A[65536], R[65536];
int main(void) {{
    const size_t step = {step};
    int16_t *r = R;
    const int16_t *a = A;
    for (long i = 0; i < 65536; ++i) A[i] = (int16_t)(i - 32768);
    for (size_t i = 0; i < 65536; i += step) {call};
    for (long i = 0; i < 65536; ++i) printf("%d\\n", R[i]);
    return 0;
}}
"""
    return unit.render() + main


@pytest.mark.parametrize(
    ("isa", "compiler"),
    [(i, c) for i in ("c", "avx2", "avx512", "neon", "rvv") for c in compilers_for(i)],
)
def test_every_backend_exhaustively(isa: str, compiler: str, tmp_path: Path) -> None:
    """Each backend's helper (portable C, vpmulhrsw on AVX2 and AVX-512, sqrdmulh on NEON,
    vsmul on RVV) on all 2^16 lane values equals the semantics, compiled under -Werror."""
    cls = isa_class(isa)
    target = isa_target(cls)
    if not target.native:
        require_isa(isa)  # the cross toolchain and QEMU (a failure under CI)
    src = tmp_path / "coarse.c"
    src.write_text(_program(isa))
    exe = tmp_path / "coarse"
    cmd = [*compile_command(compiler, isa), "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
    obj = tmp_path / "coarse.o"
    subprocess.run([*cmd, *cls.cflags, "-c", str(src), "-o", str(obj)], check=True)
    # linked by the target's gcc (static under QEMU), as the library's own builds are
    link = target.compile_command(target.linker) + ([] if target.native else ["-static"])
    subprocess.run([*link, str(obj), "-o", str(exe)], check=True)
    if target.native:  # SIMDe's translation where the CPU lacks the ISA
        exe = host_executable(isa, src, exe)
    run = [*target.emulator(), str(exe)]
    out = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    got = np.array([int(v) for v in out.split()])
    want = semantics.barrett_coarse(ALL16, I16, 4591, Arith(4591, I16).barrett_coarse_v)
    assert (got == want).all()
