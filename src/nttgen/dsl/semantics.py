"""Exact lane semantics of every vocabulary op: the executable specification.

Each function takes numpy int64 arrays holding signed lane values (already representable in the
lane) and returns the op's *mathematical* result as int64, before any final wrap to the lane.
Ops whose contract is to wrap (``mullo``) wrap internally. The evaluator wraps every result to the
lane and, in checked mode, fails when wrapping changed a value. Every ISA backend must agree with
these functions bit for bit; the tests check that.

All intermediate values fit in int64 because lanes are at most 32 bits wide.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..lanes import LaneType

Array = np.ndarray


def wrap(x: Array, lane: LaneType) -> Array:
    """Two's-complement wrap of int64 values to the lane (64-bit lanes: int64 arithmetic
    already wraps; :func:`estimate_overflows` checks what it cannot see)."""
    if lane.bits >= 64:
        return x
    half = 1 << (lane.bits - 1)
    return ((x + half) & (lane.beta - 1)) - half


def add(a: Array, b: Array) -> Array:
    """a + b (must not overflow)."""
    return a + b


def sub(a: Array, b: Array) -> Array:
    """a - b (must not overflow)."""
    return a - b


def mullo(a: Array, b: Array, lane: LaneType) -> Array:
    """Low half of the product, a*b mod beta as a signed lane (wraps by contract)."""
    return wrap(a * b, lane)


def mulhi(a: Array, b: Array, lane: LaneType) -> Array:
    """High half of the signed product, floor(a*b / beta). Never overflows."""
    return (a * b) >> lane.bits


def sra(a: Array, k: int) -> Array:
    """Arithmetic shift right by k: floor(a / 2^k)."""
    return a >> k


def montmul(a: Array, z: Array, zq: Array, lane: LaneType, q: int) -> Array:
    """Signed Montgomery multiplication by a twisted constant (Seiler 2018, Alg. 3).

    ``zq`` must be z * q^-1 mod beta (signed). Returns r = (a*z - m*q) / beta with
    m = lo(a*zq), so r = a*z*beta^-1 (mod q). Computed as hi(a*z) - hi(m*q), which is exact
    because the low halves of a*z and m*q agree."""
    m = mullo(a, zq, lane)
    return mulhi(a, z, lane) - mulhi(m, np.int64(q), lane)


def shoupmul(a: Array, z: Array, zs: Array, lane: LaneType, q: int, shift: int = 0) -> Array:
    """Multiplication by a constant with a precomputed quotient (Shoup's method).

    ``zs`` must be round(z * beta / (q * 2^shift)). With t = floor(a*zs*2^shift / beta) (the
    high product, doubled when ``shift`` is 1 as AArch64's ``sqdmulh`` does), an estimate of
    floor(a*z / q), returns r = a*z - t*q, so r = a*z (mod q) with no Montgomery factor. An ISA
    computes a*z and t*q as low products and subtracts with wrapping, which gives the same lane
    value whenever the exact r fits the lane (the analysis proves it always does)."""
    t = mulhi(a << np.int64(shift), zs, lane) if shift else mulhi(a, zs, lane)
    return a * z - t * np.int64(q)


def montmul_var(a: Array, b: Array, lane: LaneType, q: int, qinv: int) -> Array:
    """Signed Montgomery product of two variables: r = a*b*beta^-1 (mod q), r = (a*b - m*q)/beta
    with m = lo(lo(a*b) * qinv)."""
    m = mullo(mullo(a, b, lane), np.int64(qinv), lane)
    return mulhi(a, b, lane) - mulhi(m, np.int64(q), lane)


def madd(a0: Array, b0: Array, a1: Array, b1: Array) -> Array:
    """a0*b0 + a1*b1, exact (the double-width lane must hold it; the analysis proves it)."""
    return a0 * b0 + a1 * b1


def estimate_overflows(estimate: Array, lane: LaneType) -> bool:
    """Whether a floating-point ``estimate`` of a 64-bit lane's exact result leaves the lane
    (int64 arithmetic wraps silently; products of 32-bit lanes are far inside its range)."""
    return bool(np.any(np.abs(estimate) >= float(lane.max)))


def mulw(a: Array, b: Array) -> Array:
    """a*b, exact (a double-width lane holds any product of two lanes)."""
    return a * b


def mredw(a: Array, lane: LaneType, q: int, qinv: int) -> Array:
    """Signed Montgomery reduction of a double-width value a: r = (a - m*q) / beta with
    m = lo(lo(a) * q^-1), so r = a * beta^-1 (mod q) and |r| <= |a|/beta + q/2."""
    m = mullo(wrap(a, lane), np.int64(qinv), lane)
    return (a - m * np.int64(q)) >> lane.bits


def pair_madd(a: Array, b: Array) -> Array:
    """Pair sums: lane i (of half as many) is a[2i]*b[2i] + a[2i+1]*b[2i+1], exact."""
    return a[..., 0::2] * b[..., 0::2] + a[..., 1::2] * b[..., 1::2]


def pair_mred(even: Array, odd: Array, lane: LaneType, q: int, qinv: int) -> Array:
    """:func:`mredw` of two pair sums, interleaved: lane 2i from even[i], 2i+1 from odd[i]."""
    even, odd = np.broadcast_arrays(even, odd)
    r = np.stack((mredw(even, lane, q, qinv), mredw(odd, lane, q, qinv)), axis=-1)
    return r.reshape(*even.shape[:-1], 2 * even.shape[-1])


def pair_swap(a: Array) -> Array:
    """Lanes 2i and 2i+1 exchanged."""
    return a.reshape(*a.shape[:-1], -1, 2)[..., ::-1].reshape(a.shape)


def pair_blend(a: Array, b: Array) -> Array:
    """Even lanes from a, odd lanes from b."""
    a, b = np.broadcast_arrays(a, b)
    out = a.copy()
    out[..., 1::2] = b[..., 1::2]
    return out


def round_shift(x: Array, k: int) -> Array:
    """Rounding arithmetic shift: floor((x + 2^(k-1)) / 2^k) (round half up)."""
    return (x + (1 << (k - 1))) >> k


def barrett(a: Array, lane: LaneType, q: int, v: int, k: int) -> Array:
    """Signed Barrett reduction of one lane (Seiler 2018, Alg. 5, rounding variant).

    t = round(a*v / 2^(bits+k)) computed as a rounding shift of hi(a*v); r = a - t*q. An ISA
    computes t*q as a low product and the subtraction wraps, which gives the same lane value
    whenever the exact r fits the lane (the analysis proves it always does).
    With v = round(2^(bits+k)/q) the result is congruent to a and close to the centred range."""
    t = round_shift(mulhi(a, np.int64(v), lane), k)
    return a - t * np.int64(q)


def barrett_coarse(a: Array, lane: LaneType, q: int, v: int, shift: int) -> Array:
    """Barrett reduction by a one-step estimate: t = round(a*v / 2^shift), half up, r = a -
    t*q. With 16-bit lanes shift = 15 and v = round(2^15/q): one rounding high product (x86
    vpmulhrsw, Arm sqrdmulh, RISC-V vsmul with round-to-nearest-up). With 32-bit lanes v = 1
    and 2^shift a power of two near q: a rounding shift (x86 and C add 2^(shift-1) and shift,
    Arm srshr, RISC-V vssra), exact where a + 2^(shift-1) fits the lane, which the analysis
    requires (:attr:`~nttgen.plan.constants.Arith.coarse_room`).

    The estimate of a/q is coarser than :func:`barrett`'s, so r lies in a wider range around
    0 (about 0.63q for q = 4591 at 16 bits, 0.75q for ML-DSA's q at 32); the analysis gives
    the exact range. t*q is a low product and the subtraction wraps, as for barrett."""
    t = round_shift(a * np.int64(v), shift)
    return a - t * np.int64(q)


def cond_add_q(a: Array, lane: LaneType, q: int) -> Array:
    """a + q where a < 0, else a (from the sign mask: a + (q & (a >> (bits-1))))."""
    return a + (np.int64(q) & (a >> (lane.bits - 1)))


def shuffle(d: int, a: Array, b: Array) -> tuple[Array, Array]:
    """Interleave two vectors at granularity d (a power of two below the lane count L).

    Lanes are taken in blocks of 2d: out0 = [a[0:d], b[0:d], a[2d:3d], b[2d:3d], ...] and
    out1 = [a[d:2d], b[d:2d], a[3d:4d], b[3d:4d], ...]. In terms of index bits it swaps the
    "which register" bit with lane bit log2(d); it is an involution."""
    lanes = a.shape[-1]
    shape = (*a.shape[:-1], lanes // (2 * d), 2, d)
    a4 = a.reshape(shape)
    b4 = b.reshape(shape)
    out0 = np.stack((a4[..., 0, :], b4[..., 0, :]), axis=-2).reshape(a.shape)
    out1 = np.stack((a4[..., 1, :], b4[..., 1, :]), axis=-2).reshape(a.shape)
    return out0, out1


def zip_lanes(w: int, g: int, inverse: int, a: Array, b: Array) -> tuple[Array, Array]:
    """Interleave (``inverse`` = 0) or de-interleave (1) two vectors inside groups of 2^g lanes.

    Lanes are taken in groups of G = 2^g (an ISA's in-register block: 128 bits on x86, the
    whole register on Arm) and, inside a group, in elements of W = 2^w lanes (w < g). Forward:
    out0 = the first halves of a's and b's groups, element by element a, b, a, b, ...; out1 =
    the second halves likewise (x86 ``vpunpckl*``/``vpunpckh*``, Arm ``zip1``/``zip2``). In
    terms of index bits it rotates the "which register" bit into lane bit w, lane bits
    w .. g-2 one up, and lane bit g-1 into the "which register" bit; ``inverse`` = 1 is the
    exact inverse (x86 ``vshufps`` or byte shuffles, Arm ``uzp1``/``uzp2``). With w = g-1 both
    directions equal :func:`shuffle` at distance 2^(g-1)."""
    lanes = a.shape[-1]
    if not 0 <= w < g or lanes % (1 << g):
        raise ValueError(f"zip of {lanes} lanes: need 0 <= w={w} < g={g} and 2^g | lanes")
    half = 1 << (g - w - 1)  # elements per half group
    pairs = (*a.shape[:-1], lanes >> g, half, 2, 1 << w)  # group, element pair, a|b, element
    if inverse:
        lo, hi = a.reshape(pairs), b.reshape(pairs)
        x = np.concatenate((lo[..., 0, :], hi[..., 0, :]), axis=-2).reshape(a.shape)
        y = np.concatenate((lo[..., 1, :], hi[..., 1, :]), axis=-2).reshape(a.shape)
        return x, y
    halves = (*a.shape[:-1], lanes >> g, 2, half, 1 << w)  # group, half, element, element lane
    a5, b5 = a.reshape(halves), b.reshape(halves)
    out0 = np.stack((a5[..., 0, :, :], b5[..., 0, :, :]), axis=-2).reshape(a.shape)
    out1 = np.stack((a5[..., 1, :, :], b5[..., 1, :, :]), axis=-2).reshape(a.shape)
    return out0, out1


def _lane_sources(
    move: Callable[[Array, Array], tuple[Array, Array]], lanes: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """For a two-register lane permutation, the (input register 0|1, lane) each output lane of
    each output comes from (found by moving lane numbers)."""
    tags = np.arange(2 * lanes, dtype=np.int64)
    outs = move(tags[:lanes], tags[lanes:])
    return tuple([divmod(int(t), lanes) for t in out] for out in outs)  # type: ignore[return-value]


def shuffle_lane_sources(d: int, lanes: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """For :func:`shuffle`, the (input register 0|1, lane) each output lane comes from."""
    return _lane_sources(lambda a, b: shuffle(d, a, b), lanes)


def zip_lane_sources(
    w: int, g: int, inverse: int, lanes: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """For :func:`zip_lanes`, the (input register 0|1, lane) each output lane comes from."""
    return _lane_sources(lambda a, b: zip_lanes(w, g, inverse, a, b), lanes)
