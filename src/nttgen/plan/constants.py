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
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arith import centered, signed_mod_pow2
from ..lanes import LaneType


@dataclass(frozen=True)
class Arith:
    """The constants of Z_q arithmetic in signed lanes of type ``lane``."""

    q: int
    lane: LaneType

    def __post_init__(self) -> None:
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
        return centered(self.beta, self.q)

    @property
    def barrett_k(self) -> int:
        """The extra shift of the Barrett estimate: ceil(log2 q) - 2."""
        return (self.q - 1).bit_length() - 2

    @property
    def barrett_v(self) -> int:
        """round(2^(bits+k) / q): the Barrett multiplier (fits a signed lane)."""
        s = self.lane.bits + self.barrett_k
        return ((1 << s) + self.q // 2) // self.q

    def twisted(self, c: int) -> tuple[int, int]:
        """The pair (z, zq) such that montmul(a, z, zq) = a*c (mod q): z = c*beta mod q
        (centred), zq = z*q^-1 mod beta (signed)."""
        z = centered(c * self.beta, self.q)
        return z, signed_mod_pow2(z * self.qinv, self.lane.bits)

    def twisted_raw(self, z: int) -> tuple[int, int]:
        """The pair (z, zq) for a constant z used as is: montmul(a, z, zq) = a*z/beta (mod q)."""
        z = centered(z, self.q)
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
