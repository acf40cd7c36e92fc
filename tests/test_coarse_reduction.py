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
from nttgen.errors import BoundsError
from nttgen.interp import transfer
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.programs.lazy import Reducer
from nttgen.proofs import z3_barrett_coarse

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
    got = semantics.barrett_coarse(ALL16, I16, q, v, 15)
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
        r = semantics.barrett_coarse(np.arange(lo, hi + 1), I16, 4591, ar.barrett_coarse_v, 15)
        assert transfer.barrett_coarse((lo, hi), ar) == (int(r.min()), int(r.max()))


def test_builder_refuses_primes_far_from_a_power_of_two() -> None:
    """With 32-bit lanes the estimate is a rounding shift, a reduction only where q lies near
    2^shift: q = 12289 has none, and the builder says so."""
    S = Builder("k", Arith(12289, I32), 8, "")
    x = S.input("a", 8, (-10, 10), doc="")
    with pytest.raises(ValueError, match="q near a power of two; q = 12289"):
        S.barrett_coarse(S.load(x, 0))


# 32-bit lanes: ML-DSA's prime, an FHE-style 2^30 - 2^18 + 1, and 998244353 = 119*2^23 + 1
PRIMES32 = (8380417, 1073479681, 998244353)


@pytest.mark.parametrize(("q", "usable"), [(8380417, True), (1073479681, True), (12289, False),
                                           (3329, False), (998244353, True)])  # fmt: skip
def test_which_32_bit_primes_have_a_coarse_reduction(q: int, usable: bool) -> None:
    """A prime has one where every a within the room comes back within (-q, q); the shift
    picked is the better of floor and ceil of log2 q (23 for ML-DSA, not 24)."""
    ar = Arith(q, I32)
    assert ar.coarse_usable is usable
    assert ar.barrett_coarse_v == 1
    assert ar.coarse_room == I32.max - (1 << (ar.barrett_coarse_shift - 1))
    if q == 8380417:
        assert ar.barrett_coarse_shift == 23
        lo, hi = transfer.barrett_coarse((-ar.coarse_room, ar.coarse_room), ar)
        assert -q < lo and hi < q and max(-lo, hi) < 0.76 * q


def _edges32(q: int, shift: int, room: int, rng: np.random.Generator) -> np.ndarray:
    """The lane's ends within the room, the ends of quotient steps around 0 and at the ends,
    and random values."""
    w, h = 1 << shift, 1 << (shift - 1)
    steps = [t * w + d for t in (-3, -2, -1, 0, 1, 2, 3) for d in (-h - 1, -h, h - 1, h)]
    top = room // w
    steps += [s * (t * w + d) for s in (1, -1) for t in (top - 1, top) for d in (-h, h - 1)]
    ends = [-room, -room + 1, room - 1, room, 0, 1, -1, q, -q]
    vals = np.array([x for x in steps + ends if -room <= x <= room], dtype=np.int64)
    return np.concatenate((vals, rng.integers(-room, room + 1, 20000)))


@pytest.mark.parametrize("q", PRIMES32)
def test_semantics_against_integers_32(q: int) -> None:
    """For 32-bit a within the room: t = floor((a + 2^(c-1)) / 2^c) over Python integers, r =
    a - t*q, congruent to a and within the analysis's range for the whole room."""
    ar = Arith(q, I32)
    c, room = ar.barrett_coarse_shift, ar.coarse_room
    a = _edges32(q, c, room, np.random.default_rng(q))
    got = semantics.barrett_coarse(a, I32, q, 1, c)
    want = np.array([x - q * ((x + (1 << (c - 1))) // (1 << c)) for x in a.tolist()])
    assert (got == want).all()
    assert ((got - a) % q == 0).all()
    lo, hi = transfer.barrett_coarse((-room, room), ar)
    assert lo <= got.min() and got.max() <= hi


@pytest.mark.parametrize("q", PRIMES32)
def test_range_is_the_exact_image_32(q: int) -> None:
    """On windows of up to 2^20 values (across quotient steps, near 0 and at the room's ends)
    the analysis gives exactly the image, by enumeration; on wider ranges it contains every
    sampled result and is reached at both ends."""
    ar = Arith(q, I32)
    c, room = ar.barrett_coarse_shift, ar.coarse_room
    rng = np.random.default_rng(11)
    w = 1 << c
    centres = [0, w // 2, -w // 2, 5 * w // 2, room - (1 << 19), -room + (1 << 19)]
    centres += [int(x) for x in rng.integers(-room // 2, room // 2, 6)]
    for centre in centres:
        span = int(rng.integers(1, 1 << 20))
        lo = min(max(-room, centre - span // 2), room - span)
        hi = lo + span
        r = semantics.barrett_coarse(np.arange(lo, hi + 1, dtype=np.int64), I32, q, 1, c)
        assert transfer.barrett_coarse((lo, hi), ar) == (int(r.min()), int(r.max()))
    for _ in range(20):
        lo, hi = sorted(int(x) for x in rng.integers(-room, room + 1, 2))
        got = transfer.barrett_coarse((lo, hi), ar)
        x = np.concatenate((rng.integers(lo, hi + 1, 5000), [lo, hi]))
        r = semantics.barrett_coarse(x, I32, q, 1, c)
        assert got[0] <= r.min() and r.max() <= got[1]


def test_analysis_refuses_inputs_beyond_the_room() -> None:
    """The x86 and portable helpers add 2^(c-1) before the shift: an input that could
    overflow that addition is refused, and the lazy policy then reduces exactly."""
    ar = Arith(8380417, I32)
    S = Builder("k", ar, 8, "")
    x = S.load(S.input("a", 8, (-ar.coarse_room - 1, ar.coarse_room), doc=""), 0)
    with pytest.raises(BoundsError, match="rounding can overflow"):
        S.barrett_coarse(x)
    S = Builder("k", ar, 8, "")
    S.coarse_reductions = True
    red = Reducer(S)
    wide = S.load(S.input("a", 8, (I32.min, I32.max), doc=""), 0)
    narrow = S.load(S.input("b", 8, (-ar.coarse_room, ar.coarse_room), doc=""), 0)
    exact, coarse = red.reduce(wide), red.reduce(narrow)
    assert exact.id in red.reduced and coarse.id in red.coarsely_reduced


def test_z3_proves_the_32_bit_range() -> None:
    """The proof of a 32-bit coarse reduction accepts the analysis's range, refuses one a unit
    narrower, and refuses an input beyond the room."""
    ar = Arith(8380417, I32)
    a = (-9 * 8380417, 9 * 8380417)
    out = transfer.barrett_coarse(a, ar)
    assert z3_barrett_coarse(a, out, ar)
    assert not z3_barrett_coarse(a, (out[0] + 1, out[1]), ar)
    assert not z3_barrett_coarse(a, (out[0], out[1] - 1), ar)
    assert not z3_barrett_coarse((0, ar.coarse_room + 1), (I32.min, I32.max), ar)


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


def _program(isa: str, ar: Arith, values: np.ndarray) -> str:
    """A C program that applies the backend's barrett_coarse to ``values`` (lanes of ``ar``'s
    type, a whole number of vectors), a vector at a time, and prints the results."""
    backend = isa_class(isa)(EmitContext(ar, "t"))
    rvv = isa_class(isa).arch == "riscv64"
    lane = ar.lane
    lanes = 1 if isa == "c" else isa_class(isa).lanes_for(lane)
    ctype = lane.c_type
    x = backend.load(C.Name("a"), C.Int(0), False)
    params = [C.Param(ctype, "r", "restrict"), C.Param(f"const {ctype}", "a", "restrict")]
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
    count = len(values)
    step = f"__riscv_vsetvlmax_e{lane.bits}m1()" if rvv else str(lanes)
    call = "apply(r + i, a + i, step)" if rvv else "apply(r + i, a + i)"
    # each value written as a sum that stays an int constant (-2^31 is not a literal)
    data = ",\n".join(f"({v // 2} + {v - v // 2})" for v in values.tolist())
    main = f"""
static const {ctype} A[{count}] = {{
{data}
}};
static {ctype} R[{count}];
int main(void) {{
    const size_t step = {step};
    {ctype} *r = R;
    const {ctype} *a = A;
    for (size_t i = 0; i < {count}; i += step) {call};
    for (long i = 0; i < {count}; ++i) printf("%ld\\n", (long)R[i]);
    return 0;
}}
"""
    return unit.render() + main


def _run_backend(isa: str, compiler: str, tmp_path: Path, ar: Arith, values: np.ndarray) -> None:
    """Compile :func:`_program` under -Werror, run it (natively, by SIMDe or under QEMU) and
    compare every result with the semantics."""
    cls = isa_class(isa)
    target = isa_target(cls)
    if not target.native:
        require_isa(isa)  # the cross toolchain and QEMU (a failure under CI)
    src = tmp_path / "coarse.c"
    src.write_text(_program(isa, ar, values))
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
    want = semantics.barrett_coarse(
        values, ar.lane, ar.q, ar.barrett_coarse_v, ar.barrett_coarse_shift
    )
    assert (got == want).all()


BACKENDS = [(i, c) for i in ("c", "avx2", "avx512", "neon", "rvv") for c in compilers_for(i)]


@pytest.mark.parametrize(("isa", "compiler"), BACKENDS)
def test_every_backend_exhaustively(isa: str, compiler: str, tmp_path: Path) -> None:
    """Each backend's 16-bit helper (portable C, vpmulhrsw on AVX2 and AVX-512, sqrdmulh on
    NEON, vsmul on RVV) on all 2^16 lane values equals the semantics, compiled under
    -Werror."""
    _run_backend(isa, compiler, tmp_path, Arith(4591, I16), ALL16)


@pytest.mark.parametrize(("isa", "compiler"), BACKENDS)
def test_every_backend_on_32_bit_lanes(isa: str, compiler: str, tmp_path: Path) -> None:
    """Each backend's 32-bit helper (the C's wide rounding, x86's add and shift, srshr on
    NEON, vssra on RVV) equals the semantics for ML-DSA's q on the room's ends, the ends of
    quotient steps and 20,000 random lane values."""
    ar = Arith(8380417, I32)
    values = _edges32(ar.q, ar.barrett_coarse_shift, ar.coarse_room, np.random.default_rng(3))
    values = values[: len(values) // 16 * 16]
    _run_backend(isa, compiler, tmp_path, ar, values)
