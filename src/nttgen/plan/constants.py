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
        """round(2^(bits-1) / q): the multiplier of the one-product Barrett reduction
        (``barrett_coarse``), at least 1 since q < beta/2."""
        s = self.lane.bits - 1
        return ((1 << s) + self.q // 2) // self.q

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
