"""Montgomery and Barrett constants of a ring's lane arithmetic.

Derivations (beta = 2^bits is the lane's word size; all values are checked on construction):

* ``qinv`` = q^-1 mod beta, as a signed lane: the Montgomery multiplier (Seiler 2018, Alg. 3).
* ``mont`` = beta mod q (centred): the Montgomery form of 1. A value x is in Montgomery form when
  it stands for x * beta^-1.
* Barrett (Seiler 2018, Alg. 5, rounding variant): with shift k = ceil(log2 q) - 2 and
  v = round(2^(bits + k) / q), t = round(a * v / 2^(bits + k)) estimates a/q and a - t*q lies in
  about [-q/2, q/2]. k is the largest shift for which v still fits a signed lane.
* A *twisted* constant for Montgomery multiplication by c is the pair (z, zq) with z = c*beta mod q
  (centred) and zq = z * qinv mod beta (signed), so montmul(a, z, zq) = a*c (mod q).
* With ``const_mul = "shoup"`` the pair for c is (z, zs) with z = c mod q (centred) and
  zs = round(z * beta / q), so shoupmul(a, z, zs) = a*c (mod q) (Shoup's method). It costs one
  multiplication fewer where the ISA has no high product of its lane width (32-bit lanes on x86:
  4 instead of 5); its results lie in about [0, q) instead of [-q/2, q/2].
* ``const_mul = "shoup2"`` is Shoup's method for an ISA whose high product doubles
  (AArch64 ``sqdmulh``: floor(2*a*b/beta)): zs = round(z * beta / (2q)), and the quotient is
  floor(2*a*zs/beta). Three instructions (``sqdmulh``, ``mul``, ``mls``) where Montgomery takes
  four; the range is twice as wide around [0, q) (:func:`nttgen.interp.transfer.shoupmul`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..arith import centred, signed_mod_pow2
from ..lanes import LaneType

ConstMul = Literal["montgomery", "shoup", "shoup2"]
"""How products by constants are formed: see the module docstring."""


@dataclass(frozen=True)
class Arith:
    """The constants of Z_q arithmetic in signed lanes of type ``lane``."""

    q: int
    lane: LaneType
    const_mul: ConstMul = "montgomery"

    def __post_init__(self) -> None:
        if self.const_mul not in ("montgomery", "shoup", "shoup2"):
            raise ValueError(
                f"const_mul must be 'montgomery', 'shoup' or 'shoup2', not {self.const_mul!r}"
            )
        if not (self.q % 2 == 1 and 2 < self.q < self.lane.beta // 2):
            raise ValueError(f"q={self.q} must be odd with q < beta/2 = {self.lane.beta // 2}")
        if (self.q * self.qinv) % self.lane.beta != 1:
            raise AssertionError("qinv is not the inverse of q mod beta")
        if not 0 < self.barrett_v <= self.lane.max:
            raise AssertionError(f"Barrett multiplier {self.barrett_v} does not fit the lane")

    @property
    def beta(self) -> int:
        """The Montgomery radix 2^bits."""
        return self.lane.beta

    @property
    def qinv(self) -> int:
        """q^-1 mod beta as a signed lane value."""
        return signed_mod_pow2(pow(self.q, -1, self.beta), self.lane.bits)

    @property
    def mont(self) -> int:
        """beta mod q, centred: the Montgomery form of 1."""
        return centred(self.beta, self.q)

    @property
    def barrett_k(self) -> int:
        """The extra shift of the Barrett estimate: ceil(log2 q) - 2."""
        return (self.q - 1).bit_length() - 2

    @property
    def barrett_v(self) -> int:
        """round(2^(bits+k) / q): the Barrett multiplier (fits a signed lane)."""
        s = self.lane.bits + self.barrett_k
        return ((1 << s) + self.q // 2) // self.q

    @property
    def barrett_coarse_v(self) -> int:
        """The multiplier of the one-step Barrett reduction (``barrett_coarse``: t =
        round(a*v / 2^shift)): with 16-bit lanes round(2^15 / q), at least 1 since q < beta/2
        (a rounding high product); with 32-bit lanes 1 (a rounding shift, see
        :attr:`barrett_coarse_shift`)."""
        if self.lane.bits != 16:
            return 1
        s = self.lane.bits - 1
        return ((1 << s) + self.q // 2) // self.q

    @property
    def barrett_coarse_shift(self) -> int:
        """The shift of ``barrett_coarse``'s estimate: bits - 1 for 16-bit lanes (the rounding
        high product's); for 32-bit lanes c with 2^c the power of two nearest q in the sense
        that matters, the smaller worst result over the lane (no ISA here has a rounding high
        product of 32-bit lanes on x86, so the estimate is round(a / 2^c))."""
        if self.lane.bits == 16:
            return 15
        c = (self.q - 1).bit_length()
        return min((c - 1, c), key=lambda s: _coarse_worst(self.q, s, self.lane.max))

    @property
    def coarse_room(self) -> int:
        """The largest |a| ``barrett_coarse`` takes: all of a 16-bit lane; with 32-bit lanes
        as much as leaves room to add the rounding constant 2^(shift-1) (x86 and the portable
        C add it before shifting)."""
        if self.lane.bits == 16:
            return self.lane.beta // 2
        return self.lane.max - (1 << (self.barrett_coarse_shift - 1))

    @property
    def coarse_usable(self) -> bool:
        """Whether ``barrett_coarse`` is a reduction for this q: always with 16-bit lanes;
        with 32-bit lanes where q lies close enough to 2^shift that every a within
        :attr:`coarse_room` comes back within (-q, q) (ML-DSA's q = 2^23 - 2^13 + 1: within
        0.75q)."""
        if self.lane.bits == 16:
            return True
        return _coarse_worst(self.q, self.barrett_coarse_shift, self.coarse_room) < self.q

    def twisted(self, c: int) -> tuple[int, int]:
        """The pair that multiplies by c (mod q) under ``const_mul``: for Montgomery products
        (z, zq) with z = c*beta mod q (centred), zq = z*q^-1 mod beta (signed), so
        montmul(a, z, zq) = a*c (mod q); for Shoup products (z, zs) with z = c mod q (centred)
        and zs = round(z*beta/q), so shoupmul(a, z, zs) = a*c (mod q)."""
        if self.const_mul != "montgomery":
            return self.shoup_pair(c)
        return self.montgomery_pair(c)

    def montgomery_pair(self, c: int) -> tuple[int, int]:
        """(z, zq) with z = c*beta mod q (centred), zq = z*q^-1 mod beta (signed): the pair
        montmul multiplies by c with, whatever ``const_mul`` says (a program may ask for
        Montgomery products where their centred results save a reduction)."""
        z = centred(c * self.beta, self.q)
        return z, signed_mod_pow2(z * self.qinv, self.lane.bits)

    @property
    def pair_doc(self) -> str:
        """How a constant pair of :meth:`twisted` is made, for table comments."""
        if self.const_mul == "shoup":
            return "Shoup pairs (z, round(z*beta/q))"
        if self.const_mul == "shoup2":
            return "Shoup pairs (z, round(z*beta/(2q))) for a doubling high product"
        return "Montgomery form, pairs (z, z*q^-1 mod beta)"

    @property
    def shoup_shift(self) -> int:
        """log2 of the factor the ISA's high product carries in Shoup products: 0, or 1 for a
        doubling high product (``shoup2``)."""
        return 1 if self.const_mul == "shoup2" else 0

    def shoup_pair(self, c: int) -> tuple[int, int]:
        """(z, zs): z = c mod q (centred), zs = round(z*beta/(q*2^shoup_shift)) (a signed
        lane: |zs| < beta/2)."""
        z = centred(c, self.q)
        den = self.q << self.shoup_shift
        return z, (2 * z * self.beta + den) // (2 * den)

    def twisted_raw(self, z: int) -> tuple[int, int]:
        """The pair that multiplies by z/beta (mod q), a Montgomery product by z used as is:
        (z, zq) for montmul, or the Shoup pair of z*beta^-1 mod q."""
        if self.const_mul != "montgomery":
            return self.shoup_pair(z * pow(self.beta, -1, self.q))
        z = centred(z, self.q)
        return z, signed_mod_pow2(z * self.qinv, self.lane.bits)

    def summary(self) -> dict[str, int]:
        """The constants as a JSON-friendly dict (for headers and manifests)."""
        return {
            "q": self.q,
            "beta_bits": self.lane.bits,
            "qinv": self.qinv,
            "mont": self.mont,
            "barrett_v": self.barrett_v,
            "barrett_shift": self.lane.bits + self.barrett_k,
        }


def _coarse_worst(q: int, shift: int, room: int) -> int:
    """The largest |a - round(a / 2^shift)*q| over |a| <= room: the rounding leaves
    2^(shift-1), and each unit of the quotient adds |2^shift - q|."""
    t = (room + (1 << (shift - 1))) >> shift
    return (1 << (shift - 1)) + t * abs((1 << shift) - q)
