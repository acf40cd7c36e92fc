"""Interval transfer functions of the vocabulary ops.

Each function maps the inclusive ranges of an op's operands to a range that contains every result
the op's exact semantics (:mod:`nttgen.dsl.semantics`) can produce, *before* wrapping to the lane.
The caller compares the result with the lane's range to detect overflow. Soundness of each
function is checked by the test suite exhaustively for 16-bit lanes and at the range ends for
32-bit lanes.

They are the interval semantics of the vocabulary, beside its exact semantics, and live in the
DSL with the interval interpreter (:mod:`nttgen.dsl.bounds`) that the builder consults;
:mod:`nttgen.interp.transfer` re-exports them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..lanes import LaneType
from ..plan.constants import Arith
from . import semantics

Range = tuple[int, int]


def _floordiv(a: int, b: int) -> int:
    return a // b


def _ceildiv(a: int, b: int) -> int:
    return -((-a) // b)


def product_range(a: Range, b: Range) -> Range:
    """The exact range of x*y for x in a, y in b."""
    corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(corners), max(corners)


def add(a: Range, b: Range) -> Range:
    """Range of a + b."""
    return a[0] + b[0], a[1] + b[1]


def sub(a: Range, b: Range) -> Range:
    """Range of a - b."""
    return a[0] - b[1], a[1] - b[0]


def mullo(a: Range, b: Range, lane: LaneType) -> Range:
    """Range of lo(a*b): the exact product when it fits the lane, else the whole lane."""
    p = product_range(a, b)
    return p if lane.fits(*p) else (lane.min, lane.max)


def mulhi(a: Range, b: Range, lane: LaneType) -> Range:
    """Range of floor(a*b / beta)."""
    p = product_range(a, b)
    return p[0] >> lane.bits, p[1] >> lane.bits


def sra(a: Range, k: int) -> Range:
    """Range of floor(a / 2^k)."""
    return a[0] >> k, a[1] >> k


def montgomery_of_product(p: Range, arith: Arith) -> Range:
    """Range of the signed Montgomery reduction r = (x - m*q)/beta of a product x in p, where
    m = x*q^-1 mod beta lies in [-beta/2, beta/2 - 1]."""
    beta, q = arith.beta, arith.q
    lo = _ceildiv(p[0] - (beta // 2 - 1) * q, beta)
    hi = _floordiv(p[1] + (beta // 2) * q, beta)
    return lo, hi


def montmul(a: Range, z: Range, arith: Arith) -> Range:
    """Range of montmul(a, z, zq) for a in a, z in z."""
    return montgomery_of_product(product_range(a, z), arith)


def shoupmul(a: Range, arith: Arith) -> Range:
    """Range of shoupmul(a, z, zs) for a in a and any constant z with its quotient zs =
    round(z*beta/(q*2^s)), s = ``arith.shoup_shift``.

    With zs = z*beta/(q*2^s) - e (|e| <= 1/2), t = floor(a*zs*2^s/beta) lies in
    (a*z/q - a*e*2^s/beta - 1, a*z/q - a*e*2^s/beta], so r = a*z - t*q lies in
    [q*a*e*2^s/beta, q + q*a*e*2^s/beta) and |a*e| <= M/2 with M = max |a|: r in
    [-q*M*2^s/(2 beta), q + q*M*2^s/(2 beta)). Independent of z."""
    m = max(abs(a[0]), abs(a[1])) << arith.shoup_shift
    two_beta = 2 * arith.beta
    lo = _ceildiv(-arith.q * m, two_beta)
    hi = _ceildiv(arith.q * (two_beta + m), two_beta) - 1  # strict upper bound
    return lo, hi


def montmul_twist(a: Range, b: Range, arith: Arith) -> Range:
    """Range of hi(a*b) - hi(m*q) for a in a, b in b and any m in [-beta/2, beta/2 - 1] (the
    twist need not be b/q mod beta, so the two high halves need not cancel exactly): both
    floors are monotone, so the ends of the product and of m give the ends."""
    p = product_range(a, b)
    beta, q = arith.beta, arith.q
    return _floordiv(p[0], beta) - _floordiv((beta // 2 - 1) * q, beta), _floordiv(
        p[1], beta
    ) - _floordiv(-(beta // 2) * q, beta)


def montmul_var(a: Range, b: Range, arith: Arith) -> Range:
    """Range of montmul_var(a, b)."""
    return montgomery_of_product(product_range(a, b), arith)


def madd(a0: Range, b0: Range, a1: Range, b1: Range) -> Range:
    """Range of a0*b0 + a1*b1."""
    return add(product_range(a0, b0), product_range(a1, b1))


def mulw(a: Range, b: Range) -> Range:
    """Range of a*b."""
    return product_range(a, b)


def mredw(a: Range, arith: Arith) -> Range:
    """Range of the Montgomery reduction of a double-width value a."""
    return montgomery_of_product(a, arith)


def reduction_exact(kind: str, a: np.ndarray, arith: Arith) -> np.ndarray:
    """The exact lane results of the one-operand reduction ``kind`` ("barrett" or
    "barrett_coarse") on the values ``a`` (the evaluator's semantics, for the exhaustive
    ranges here and the exhaustive proofs)."""
    if kind == "barrett":
        return semantics.barrett(a, arith.lane, arith.q, arith.barrett_v, arith.barrett_k)
    if kind == "barrett_coarse":
        return semantics.barrett_coarse(
            a, arith.lane, arith.q, arith.barrett_coarse_v, arith.barrett_coarse_shift
        )
    raise ValueError(f"{kind} is not a reduction")


@lru_cache(maxsize=65536)
def _exhaustive_image(kind: str, lo: int, hi: int, q: int, bits: int) -> Range:
    r = reduction_exact(kind, np.arange(lo, hi + 1, dtype=np.int64), Arith(q, LaneType(bits)))
    return int(r.min()), int(r.max())


def barrett_coarse(a: Range, arith: Arith) -> Range:
    """Range of barrett_coarse(a): the exhaustive image for 16-bit lanes, the exact image of
    the rounding shift for 32-bit lanes (:func:`coarse_shift_image`)."""
    if arith.lane.bits == 16:
        return _exhaustive_image("barrett_coarse", a[0], a[1], arith.q, 16)
    return coarse_shift_image(a, arith.q, arith.barrett_coarse_shift)


def coarse_shift_image(a: Range, q: int, shift: int) -> Range:
    """The exact image of r = x - t*q, t = floor((x + 2^(shift-1)) / 2^shift), over x in a.

    t steps by one every 2^shift values of x, and within one step r rises with x: so the
    smallest r is at the first x of some step (or at a[0]), the largest at its last x (or at
    a[1]). Over the whole steps (t0 < t < t1) those ends move by 2^shift - q a step, so only
    the two outermost whole steps can hold an extreme."""
    lo, hi = a
    h, w = 1 << (shift - 1), 1 << shift

    def quotient(x: int) -> int:
        return (x + h) >> shift

    def r(x: int) -> int:
        return x - quotient(x) * q

    t0, t1 = quotient(lo), quotient(hi)
    if t0 == t1:
        return r(lo), r(hi)
    firsts = [r(lo)]
    lasts = [r(hi), r(t0 * w + h - 1)]
    if t1 - t0 > 1:
        for t in (t0 + 1, t1 - 1):
            firsts.append(t * w - h - t * q)
            lasts.append(t * w + h - 1 - t * q)
    firsts.append(t1 * w - h - t1 * q)
    return min(firsts), max(lasts)


def barrett_analytic(a: Range, arith: Arith) -> Range:
    """A sound range of barrett(a) for any lane width.

    t = floor(a*v/2^s + 1/2) lies in (a*v/2^s - 1/2, a*v/2^s + 1/2], so r = a - q*t lies in
    [a*e - q/2, a*e + q/2) with e = 1 - q*v/2^s. Exact rational arithmetic, then integer ends."""
    s = arith.lane.bits + arith.barrett_k
    q, v = arith.q, arith.barrett_v
    two_s = 1 << s
    # a*e = a*(2^s - q*v)/2^s ; work with numerators over 2^(s+1) to keep q/2 exact.
    num = [x * (two_s - q * v) * 2 for x in a]
    den = two_s * 2
    half_q = q * two_s  # q/2 over den
    lo_num = min(num) - half_q
    hi_num = max(num) + half_q
    lo = _ceildiv(lo_num, den)
    hi = _ceildiv(hi_num, den) - 1  # strict upper bound
    return lo, hi


def barrett(a: Range, arith: Arith) -> Range:
    """Range of barrett(a): exhaustive image for 16-bit lanes, analytic bound otherwise."""
    if arith.lane.bits == 16:
        return _exhaustive_image("barrett", a[0], a[1], arith.q, 16)
    return barrett_analytic(a, arith)


def cond_add_q(a: Range, q: int) -> Range:
    """Range of a + (q if a < 0 else 0)."""
    lo, hi = a
    if lo >= 0:
        return a
    if hi < 0:
        return lo + q, hi + q
    return min(lo + q, 0), max(hi, q - 1)
