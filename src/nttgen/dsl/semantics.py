"""Exact lane semantics of every vocabulary op: the executable specification.

Each function takes numpy int64 arrays holding signed lane values (already representable in the
lane) and returns the op's *mathematical* result as int64, before any final wrap to the lane.
Ops whose contract is to wrap (``mullo``) wrap internally. The evaluator wraps every result to the
lane and, in checked mode, fails when wrapping changed a value. Every ISA backend must agree with
these functions bit for bit; the tests check that.

All intermediate values fit in int64 because lanes are at most 32 bits wide.
"""

from __future__ import annotations

import numpy as np

from ..lanes import LaneType

Array = np.ndarray


def wrap(x: Array, lane: LaneType) -> Array:
    """Two's-complement wrap of int64 values to the lane."""
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


def shoupmul(a: Array, z: Array, zs: Array, lane: LaneType, q: int) -> Array:
    """Multiplication by a constant with a precomputed quotient (Shoup's method).

    ``zs`` must be round(z * beta / q). With t = hi(a*zs) = floor(a*zs / beta), an estimate of
    floor(a*z / q), returns r = a*z - t*q, so r = a*z (mod q) with no Montgomery factor. An ISA
    computes a*z and t*q as low products and subtracts with wrapping, which gives the same lane
    value whenever the exact r fits the lane (the analysis proves it always does)."""
    return a * z - mulhi(a, zs, lane) * np.int64(q)


def montmul_var(a: Array, b: Array, lane: LaneType, q: int, qinv: int) -> Array:
    """Signed Montgomery product of two variables: r = a*b*beta^-1 (mod q), r = (a*b - m*q)/beta
    with m = lo(lo(a*b) * qinv)."""
    m = mullo(mullo(a, b, lane), np.int64(qinv), lane)
    return mulhi(a, b, lane) - mulhi(m, np.int64(q), lane)


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


def shuffle_lane_sources(d: int, lanes: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """For :func:`shuffle`, the (input register 0|1, lane) each output lane comes from."""
    out0: list[tuple[int, int]] = []
    out1: list[tuple[int, int]] = []
    for k in range(lanes):
        blk, off = divmod(k, 2 * d)
        base = blk * 2 * d
        if off < d:
            out0.append((0, base + off))
            out1.append((0, base + d + off))
        else:
            out0.append((1, base + off - d))
            out1.append((1, base + off))
    return out0, out1
