"""The reduction primitives, checked exhaustively over 16-bit inputs.

* The exact semantics (the executable specification) of every reduction is congruent to what it
  claims and stays inside its interval transfer function, for every 16-bit input.
* The compiled portable-C helpers agree with the mathematics for every accepted input, and for
  Montgomery products over *all* products of accepted operands (about 10^9 pairs, in C).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import ALL_RINGS, require_tool
from nttgen.dsl import semantics
from nttgen.emit.files import FileWriter
from nttgen.emit.isa import isa_class
from nttgen.generate import default_config, generate, kernel_set
from nttgen.interp import transfer
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.programs.kernels import build_kernels
from nttgen.rings import PRESETS

RINGS16 = sorted({r.q for r in ALL_RINGS if r.lane.bits == 16})
ALL16 = np.arange(-(1 << 15), 1 << 15, dtype=np.int64)


@pytest.mark.parametrize("q", RINGS16)
def test_barrett_exhaustive(q: int) -> None:
    ar = Arith(q, I16)
    r = semantics.barrett(ALL16, I16, q, ar.barrett_v, ar.barrett_k)
    assert np.all((r - ALL16) % q == 0)
    lo, hi = transfer.barrett((I16.min, I16.max), ar)
    assert r.min() == lo and r.max() == hi
    assert -(q // 2) - 1 <= lo and hi <= q // 2 + 1  # centred, up to one
    # the analytic bound (used for 32-bit lanes) is sound wherever we can check it
    rng = np.random.default_rng(q)
    for _ in range(200):
        a, b = sorted(int(x) for x in rng.integers(I16.min, I16.max + 1, 2))
        alo, ahi = transfer.barrett_analytic((a, b), ar)
        seg = r[a - I16.min : b - I16.min + 1]
        assert alo <= seg.min() and seg.max() <= ahi


@pytest.mark.parametrize("q", RINGS16)
def test_cond_add_q_exhaustive(q: int) -> None:
    r = semantics.cond_add_q(ALL16, I16, q)
    assert np.all((r - ALL16) % q == 0)
    sel = -q <= ALL16
    assert np.all(r[sel] >= 0)
    assert transfer.cond_add_q((-q, q - 1), q) == (0, q - 1)


@pytest.mark.parametrize("ring", [r for r in ALL_RINGS if r.lane.bits == 16], ids=lambda r: r.name)
def test_montmul_by_every_table_constant_exhaustive(ring) -> None:  # type: ignore[no-untyped-def]
    """For every (z, zq) pair of every table of the ring, all 65536 inputs a."""
    ks = kernel_set(ring, "c")
    ar = ks.arith
    pairs = set()
    for fn in ks.functions.values():
        for t in fn.tables:
            v = t.values
            pairs.update(zip(v[0::2], v[1::2], strict=True))
    binv = pow(ar.beta, -1, ar.q)
    for z, zq in sorted(pairs):
        assert (z * ar.qinv - zq) % ar.beta == 0
        r = semantics.montmul(ALL16, np.int64(z), np.int64(zq), I16, ar.q)
        assert np.all((r - ALL16 * z * binv) % ar.q == 0)
        lo, hi = transfer.montmul((I16.min, I16.max), (z, z), ar)
        assert lo <= r.min() and r.max() <= hi
        assert I16.fits(lo, hi)


@pytest.mark.parametrize("q", RINGS16)
def test_montmul_var_transfer_is_sound(q: int) -> None:
    """Montgomery products of random operand intervals, every product of a 256 x 256 grid that
    includes the interval ends, stay inside the transfer function's range."""
    ar = Arith(q, I16)
    rng = np.random.default_rng(q)
    binv = pow(ar.beta, -1, q)
    for _ in range(50):
        a = sorted(int(x) for x in rng.integers(I16.min, I16.max + 1, 2))
        b = sorted(int(x) for x in rng.integers(I16.min, I16.max + 1, 2))
        xs = np.unique(np.concatenate([rng.integers(a[0], a[1] + 1, 254), a]))
        ys = np.unique(np.concatenate([rng.integers(b[0], b[1] + 1, 254), b]))
        X, Y = np.meshgrid(xs, ys)
        r = semantics.montmul_var(X, Y, I16, q, ar.qinv)
        assert np.all((r - X * Y * binv) % q == 0)
        lo, hi = transfer.montmul_var(tuple(a), tuple(b), ar)  # type: ignore[arg-type]
        assert lo <= r.min() and r.max() <= hi


def test_shuffle_is_an_involution_that_swaps_bits() -> None:
    rng = np.random.default_rng(0)
    for lanes in (2, 4, 8, 16, 32):
        a = rng.integers(0, 1000, (3, lanes))
        b = rng.integers(0, 1000, (3, lanes))
        d = 1
        while d < lanes:
            x, y = semantics.shuffle(d, a, b)
            x2, y2 = semantics.shuffle(d, x, y)
            assert np.array_equal(x2, a) and np.array_equal(y2, b)
            src0, src1 = semantics.shuffle_lane_sources(d, lanes)
            regs = (a, b)
            assert np.array_equal(x, np.stack([regs[r][:, k] for r, k in src0], axis=1))
            assert np.array_equal(y, np.stack([regs[r][:, k] for r, k in src1], axis=1))
            d *= 2


def test_32bit_semantics_at_range_ends() -> None:
    q = PRESETS["mldsa"].q
    ar = Arith(q, I32)
    ends = np.array([I32.min, I32.min + 1, -q, -1, 0, 1, q, I32.max - 1, I32.max], dtype=np.int64)
    r = semantics.barrett(ends, I32, q, ar.barrett_v, ar.barrett_k)
    assert np.all((r - ends) % q == 0)
    lo, hi = transfer.barrett((I32.min, I32.max), ar)
    assert lo <= r.min() and r.max() <= hi and hi <= q // 2 + 1
    binv = pow(ar.beta, -1, q)
    A, B = np.meshgrid(ends, ends)
    m = semantics.montmul_var(A, B, I32, q, ar.qinv)
    exact = A.astype(object) * B.astype(object) * binv  # beyond int64
    assert np.all((m.astype(object) - exact) % q == 0)
    lo, hi = transfer.montmul_var((I32.min, I32.max), (I32.min, I32.max), ar)
    assert lo <= m.min() and m.max() <= hi


EXHAUSTIVE_C = r"""
#include <stdio.h>
#include "%(stem)s.c"
#define Q %(q)d
static int mod_eq(long long a, long long b) { long long d = (a - b) %% Q; return d == 0; }
int main(void) {
    /* Barrett and the sign-mask correction: every 16-bit input. */
    for (long a = -32768; a <= 32767; ++a) {
        int16_t r = %(p)s_barrett((int16_t)a);
        if (!mod_eq(r, a) || r < %(blo)d || r > %(bhi)d) {
            printf("barrett %%ld -> %%d\n", a, r);
            return 1;
        }
        int16_t c = %(p)s_cond_add_q((int16_t)a);
        if (!mod_eq(c, a) || (a >= -Q && c < 0)) {
            printf("cond_add_q %%ld -> %%d\n", a, c);
            return 1;
        }
    }
    /* Montgomery products: every product of two operands in basemul's input range, by the
       twisted-constant form basemul uses (zq = b * q^-1 mod 2^16) and, where the file has it,
       by the variable form. */
    const long long binv = %(binv)d;
    for (long a = %(lo)d; a <= %(hi)d; ++a) {
        for (long b = %(lo)d; b <= %(hi)d; ++b) {
            int16_t zq = (int16_t)(uint16_t)((unsigned long)b * %(qinv)du);
            int16_t r = %(p)s_montmul((int16_t)a, (int16_t)b, zq);
            if (!mod_eq((long long)r, (long long)a * b %% Q * binv) || r < %(mlo)d || r > %(mhi)d) {
                printf("montmul %%ld %%ld -> %%d\n", a, b, r); return 1;
            }
%(var_check)s        }
    }
    printf("ok\n");
    return 0;
}
"""

VAR_CHECK = r"""            int16_t v = %(p)s_montmul_var((int16_t)a, (int16_t)b);
            if (!mod_eq((long long)v, (long long)a * b %% Q * binv) || v < %(mlo)d || v > %(mhi)d) {
                printf("montmul_var %%ld %%ld -> %%d\n", a, b, v); return 1;
            }
"""


@pytest.mark.parametrize("name", ["mlkem", "kyber-r1", "newhope1024"])
def test_compiled_helpers_exhaustive(name: str, tmp_path: Path) -> None:
    """The compiled C helpers, against the mathematics, for every accepted 16-bit input and
    every product of two operands in basemul's input range."""
    cc = require_tool("gcc")
    ring = PRESETS[name]
    ks = kernel_set(ring, "c")
    files = generate(ring, "c")
    for fname, text in files.items():
        (tmp_path / fname).write_text(text)
    ar = ks.arith
    lo, hi = ks.functions["basemul"].contract.inputs["a"]
    blo, bhi = transfer.barrett((I16.min, I16.max), ar)
    mlo, mhi = transfer.montmul_var((lo, hi), (lo, hi), ar)
    src = EXHAUSTIVE_C % {
        "stem": files.stem,
        "q": ring.q,
        "p": f"nttgen_{ring.c_name}_c",
        "blo": blo,
        "bhi": bhi,
        "binv": pow(ar.beta, -1, ring.q),
        "lo": lo,
        "hi": hi,
        "mlo": mlo,
        "mhi": mhi,
        "qinv": ar.qinv % ar.beta,
        "var_check": VAR_CHECK % {"p": f"nttgen_{ring.c_name}_c", "mlo": mlo, "mhi": mhi}
        if f"nttgen_{ring.c_name}_c_montmul_var(" in files.source
        else "",
    }
    (tmp_path / "exhaustive.c").write_text(src)
    exe = tmp_path / "exhaustive"
    subprocess.run(
        [cc, "-O2", "-std=c99", str(tmp_path / "exhaustive.c"), "-o", str(exe)], check=True
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip() == "ok"


def _shoup_constants(q: int) -> list[int]:
    """Every centred constant for small q, else the extremes and a spread of others."""
    half = q // 2
    if q < 4000:
        return list(range(-half, half + 1))
    step = max(1, q // 997)
    return sorted({-half, -half + 1, -1, 0, 1, half - 1, half, *range(-half, half + 1, step)})


@pytest.mark.parametrize("form", ["shoup", "shoup2"])
@pytest.mark.parametrize("q", RINGS16)
def test_shoupmul_exhaustive(q: int, form: str) -> None:
    """Shoup products by every (or a spread of) constants, for every 16-bit input: congruent to
    a*c, inside the transfer function's range, and that range is reached to within q/64 at
    both ends; ``shoup2`` with the quotient of a doubling high product (NEON's sqdmulh). (For
    q above about 2^14.7 the range leaves the lane: the analysis then refuses Shoup products of
    full-range inputs, and the generator uses them only where they fit.)"""
    ar = Arith(q, I16, form)  # type: ignore[arg-type]
    k = 1 << ar.shoup_shift
    lo, hi = transfer.shoupmul((I16.min, I16.max), ar)
    seen_lo, seen_hi = 0, 0
    for c in _shoup_constants(q):
        z, zs = ar.twisted(c)
        assert z == c and 2 * abs(zs * q * k - z * ar.beta) <= q * k  # zs = round(z*beta/kq)
        r = semantics.shoupmul(ALL16, np.int64(z), np.int64(zs), I16, q, ar.shoup_shift)
        assert np.all((r - ALL16 * c) % q == 0), c
        assert lo <= r.min() and r.max() <= hi, c
        seen_lo, seen_hi = min(seen_lo, int(r.min())), max(seen_hi, int(r.max()))
    assert seen_lo <= lo + q // 64 and seen_hi >= hi - q // 64, (seen_lo, seen_hi, lo, hi)


@pytest.mark.parametrize("form", ["shoup", "shoup2"])
def test_shoupmul_32bit_at_range_ends(form: str) -> None:
    q = PRESETS["mldsa"].q
    ar = Arith(q, I32, form)  # type: ignore[arg-type]
    s = ar.shoup_shift
    ends = np.array([I32.min, I32.min + 1, -q, -1, 0, 1, q, I32.max - 1, I32.max], dtype=np.int64)
    lo, hi = transfer.shoupmul((I32.min, I32.max), ar)
    assert I32.fits(lo, hi)
    for c in _shoup_constants(q):
        z, zs = ar.twisted(c)
        r = semantics.shoupmul(ends, np.int64(z), np.int64(zs), I32, q, s)
        assert np.all((r.astype(object) - ends.astype(object) * c) % q == 0), c
        assert lo <= r.min() and r.max() <= hi, c
    # twisted_raw(z) multiplies by z/beta, as the Montgomery pair does
    z, zs = ar.twisted_raw(12345)
    r = semantics.shoupmul(ends, np.int64(z), np.int64(zs), I32, q, s)
    want = ends.astype(object) * 12345 * pow(ar.beta, -1, q)
    assert np.all((r.astype(object) - want) % q == 0)


SHOUP_C = r"""
#include <stdio.h>
#include "%(stem)s.c"
#define Q %(q)dLL
static long long floordiv(long long a, long long b) {
    long long d = a / b;
    return d - ((a %% b != 0) && ((a < 0) != (b < 0)));
}
int main(void) {
    const long long ends[] = {%(ends)s};
    const long long n_ends = (long long)(sizeof ends / sizeof ends[0]);
    for (long long c = -(Q / 2); c <= Q / 2; c += %(step)d) {
        const long long zs = floordiv(2 * c * %(beta)dLL + Q, 2 * Q);
        for (long long i = 0; i < %(count)d; ++i) {
            const long long a = %(count)d == n_ends ? ends[i] : %(amin)d + i;
            const long long r = %(p)s_shoupmul((%(t)s)a, (%(t)s)c, (%(t)s)zs);
            const long long want = ((a %% Q) * c) %% Q;
            if ((r - want) %% Q != 0 || r < %(lo)d || r > %(hi)d) {
                printf("shoupmul %%lld %%lld -> %%lld\n", a, c, r);
                return 1;
            }
        }
    }
    printf("ok\n");
    return 0;
}
"""


@pytest.mark.parametrize("name", ["mlkem", "mldsa"])
def test_compiled_shoup_helper(name: str, tmp_path: Path) -> None:
    """The portable C's Shoup helper against the mathematics: every 16-bit input (ML-KEM) or
    the 32-bit range ends (ML-DSA), by a spread of constants with their quotients."""
    cc = require_tool("gcc")
    ring = PRESETS[name]
    # portable C keeps Montgomery products (files carry only the helpers they call): build it
    # with Shoup products to have the helper
    config = replace(default_config(ring, "c"), const_mul="shoup")
    ks = build_kernels(ring, config)
    assert ks.arith.const_mul == "shoup"
    files = FileWriter(ks, isa_class("c"), "test").files()
    for fname, text in files.items():
        (tmp_path / fname).write_text(text)
    lane = ring.lane
    ar = Arith(ring.q, lane, "shoup")
    lo, hi = transfer.shoupmul((lane.min, lane.max), ar)
    ends = [lane.min, lane.min + 1, -ring.q, -1, 0, 1, ring.q, lane.max - 1, lane.max]
    full = lane.bits == 16
    src = SHOUP_C % {
        "stem": files.stem,
        "q": ring.q,
        "p": f"nttgen_{ring.c_name}_c",
        "t": lane.c_type,
        "beta": ar.beta,
        "step": 7 if full else ring.q // 997,
        "count": lane.beta if full else len(ends),
        "amin": lane.min,
        "ends": ", ".join(f"{e}LL" for e in ends),
        "lo": lo,
        "hi": hi,
    }
    (tmp_path / "shoup.c").write_text(src)
    exe = tmp_path / "shoup"
    subprocess.run(
        [cc, "-O2", "-std=c99", "-Wall", str(tmp_path / "shoup.c"), "-o", str(exe)], check=True
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("q", [*RINGS16, 4591, 4621, 5167])
def test_wide_montgomery_reduction(q: int) -> None:
    """mredw: (a - m*q)/2^16 is exact, congruent to a*2^-16, and inside its transfer range,
    for every low half of a (all 2^16) at many high halves including the extremes the
    16-bit result allows."""
    ar = Arith(q, I16)
    r_inv = pow(1 << 16, -1, q)
    lim = (1 << 31) - (1 << 15) * q  # |a| where the result can still reach the lane's end
    highs = np.array([-(lim >> 16), -7, -1, 0, 1, 7, lim >> 16], dtype=np.int64)
    a = (highs[:, None] << 16) + np.arange(1 << 16, dtype=np.int64)[None, :]
    a = a.reshape(-1)
    r = semantics.mredw(a, I16, q, ar.qinv)
    assert np.all((r - a * r_inv) % q == 0)
    lo, hi = transfer.mredw((int(a.min()), int(a.max())), ar)
    assert lo <= r.min() and r.max() <= hi
    # and the transfer function is tight enough to be useful: within q/2 + 1 of |a|/2^16
    assert hi <= int(a.max()) // (1 << 16) + q // 2 + 1


def test_madd_transfer_and_width_rules() -> None:
    """madd's range is the sum of the product ranges; the builder keeps widths apart and the
    analysis refuses a sum that leaves the 32-bit lane (vpmaddwd would wrap there)."""
    from nttgen.dsl.builder import Builder
    from nttgen.errors import BoundsError

    assert transfer.madd((-3, 2), (5, 7), (-1, 1), (-4, 4)) == (-25, 18)
    x = np.array([-3, 2, 2]), np.array([7, 5, -9]), np.array([1, -1, 4]), np.array([4, 4, 3])
    assert list(semantics.madd(*x)) == [-17, 6, -6]
    ar = Arith(4591, I16)
    S = Builder("t", ar, 8)
    v = S.load(S.input("a", 8, (-(1 << 15) + 1, (1 << 15) - 1)), 0)
    S.madd(v, v, v, v)  # 2 * 32767^2 still fits
    full = S.load(S.input("f", 8, (-(1 << 15), (1 << 15) - 1)), 0)
    with pytest.raises(BoundsError, match="32-bit lane"):
        S.madd(full, full, full, full)  # 2 * (-32768)^2 does not
    w = S.madd(v, S.const(3), v, S.const(-3))
    with pytest.raises(TypeError, match="operand a of add must be a lane value"):
        S.add(w, v)
    with pytest.raises(TypeError, match="operand b of addw must be a double-width value"):
        S.addw(w, v)
    assert S.bound(S.mredw(w)).magnitude <= q_half_plus(ar, 6 * ((1 << 15) - 1))
    # 32-bit lanes: 64-bit double-width values (vpmuldq, smull, vwmul)
    ar32 = Arith(8380417, I32)
    S32 = Builder("t32", ar32, 4)
    top = (1 << 31) - 1
    b = S32.load(S32.input("b", 4, (-top, top)), 0)
    p = S32.mulw(b, b)
    assert (S32.bound(p).min, S32.bound(p).max) == (-top * top, top * top)
    S32.madd(b, b, b, b)  # 2 * (2^31 - 1)^2 still fits
    full32 = S32.load(S32.input("f", 4, (-(1 << 31), top)), 0)
    with pytest.raises(BoundsError, match="64-bit lane"):
        S32.madd(full32, full32, full32, full32)  # 2 * (-2^31)^2 does not
    small = S32.load(S32.input("s", 4, (-(1 << 23), 1 << 23)), 0)
    acc = S32.mulw(small, small)
    for _ in range(15):
        acc = S32.addw(acc, S32.mulw(small, small))
    assert S32.bound(S32.mredw(acc)).magnitude <= q_half_plus(ar32, 16 << 46)
    assert list(semantics.mulw(np.array([-(1 << 31), top]), np.array([-(1 << 31), 3]))) == [
        1 << 62,
        3 * top,
    ]
    assert semantics.estimate_overflows(np.array([2.0**63]), I32.wide)
    assert not semantics.estimate_overflows(np.array([2.0**62]), I32.wide)


def q_half_plus(ar: Arith, magnitude: int) -> int:
    """The bound a Montgomery reduction of values within ``magnitude`` must meet."""
    return magnitude // ar.beta + ar.q // 2 + 1


def test_pair_ops_semantics_bounds_and_rules() -> None:
    """pair_madd sums the products of lanes 2i and 2i+1 into L/2 double-width lanes, pair_add
    adds them, pair_mred reduces two of them into the even and the odd lanes of one vector,
    pair_swap and pair_blend move lanes; the evaluator agrees with direct integer arithmetic
    at the extremes, every evaluated lane lies in the range the analysis gives it, and the
    builder keeps the kinds apart and refuses odd lane counts and sums that leave 32 bits."""
    from nttgen.dsl.builder import Builder
    from nttgen.errors import BoundsError
    from nttgen.interp.evaluate import evaluate

    ar = Arith(4591, I16)
    L, lim = 8, (1 << 15) - 1
    S = Builder("pairs", ar, L)
    a_in, b_in = S.input("a", L, (-lim, lim)), S.input("b", L, (-2295, 2295))
    out = S.output("r", 5 * L)
    a, b = S.load(a_in, 0), S.load(b_in, 0)
    w = S.pair_madd(a, b)
    two = S.pair_add(w, S.pair_madd(b, a))
    for k, v in enumerate(
        (S.pair_mred(w, two), S.pair_swap(a), S.pair_blend(a, b), S.pair_mred(two, w), b)
    ):
        S.store(out, k * L, v)
    fn = S.finish()
    rng = np.random.default_rng(5)
    xs = np.concatenate(
        (np.full((1, L), lim), np.full((1, L), -lim), rng.integers(-lim, lim + 1, (30, L)))
    )
    ys = np.concatenate(
        (np.full((1, L), 2295), np.full((1, L), 2295), rng.integers(-2295, 2296, (30, L)))
    )
    got = evaluate(fn, ar, {"a": xs, "b": ys}, checked=True)["r"].reshape(-1, 5, L)
    rinv = pow(1 << 16, -1, ar.q)
    for x, y, g in zip(xs.tolist(), ys.tolist(), got, strict=True):
        sums = [x[2 * i] * y[2 * i] + x[2 * i + 1] * y[2 * i + 1] for i in range(L // 2)]
        for i, s in enumerate(sums):
            assert (int(g[0][2 * i]) - s * rinv) % ar.q == 0
            assert (int(g[0][2 * i + 1]) - 2 * s * rinv) % ar.q == 0
            assert (int(g[3][2 * i]) - 2 * s * rinv) % ar.q == 0
        assert g[1].tolist() == [x[i ^ 1] for i in range(L)]
        assert g[2].tolist() == [x[i] if i % 2 == 0 else y[i] for i in range(L)]
    hull = fn.output_bounds["r"]
    flat = got.reshape(len(xs), -1)
    assert (flat >= np.array(hull.lo)).all() and (flat <= np.array(hull.hi)).all()
    assert S.bound(w).lo == (-2 * lim * 2295,) * (L // 2)  # half as many lanes
    with pytest.raises(TypeError, match="operand a of pair_add must be a pair-sum value"):
        S.pair_add(a, w)
    with pytest.raises(TypeError, match="operand a of addw must be a double-width value"):
        S.addw(w, w)
    full = S.load(S.input("f", L, (-(1 << 15), lim)), 0)
    with pytest.raises(BoundsError, match="32-bit lane"):
        S.pair_madd(full, full)  # 2 * (-32768)^2 does not fit
    with pytest.raises(ValueError, match="pairs of lanes; this program has 1 lane"):
        Builder("one", ar, 1).pair_swap(a)
