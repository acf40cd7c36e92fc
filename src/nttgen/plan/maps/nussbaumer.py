"""Nussbaumer's embedding: the negacyclic analogue of Schönhage.

For N = k * r (powers of two, k <= r) put y = x^k, so y^r = x^N = -1, and regroup the coefficients
a_(i + k*j) (i < k, j < r) into k polynomials a_i(y) of r coefficients:

    Z_q[x]/(x^N + 1) = T[x]/(x^k - y),  T = Z_q[y]/(y^r + 1),
                     -> T[x]/(x^2k - 1)          (zero-extend: a_i = 0 for k <= i < 2k)
                     = T^(2k)                    (cyclic DFT with root y^(r/k): shifts only)

In T, y has order 2r, so w = y^(r/k) is a principal 2k-th root of unity (needs k | r). Target i is
the evaluation x = w^i, an element of Z_q[y]/(y^r + 1). For N = 64, k = r = 8:
Z_q[x]/(x^64 + 1) -> (Z_q[y]/(y^8 + 1))^16.

An ``embedding`` (blow-up 2). The inverse transforms back, giving C_0, ..., C_{2k-1} in T, and
folds x^k = y: a_i = C_i + y * C_(i+k). It is valid for ``forward(a)`` and for componentwise
products ``forward(a) * forward(b)`` mod y^r + 1 (then C(x) = a(x) b(x) exactly, of degree
<= 2k - 2 in x, so the cyclic DFT did not wrap), and for sums of these.
"""

from __future__ import annotations

from ...arith import is_power_of_two
from ...errors import NoRootOfUnityError, SizeError
from .base import RingMap
from .cost import Cost
from .dft import Radix2DFT, ShiftAction
from .modarith import inverse_mod
from .ops import add, mul_xpow, scale
from .polys import binomial, describe


class NussbaumerMap(RingMap):
    """Z_q[x]/(x^(k*r) + 1) -> (Z_q[y]/(y^r + 1))^(2k), see the module docstring."""

    kind = "embedding"
    inverse_valid_for = (
        "forward(a) for every a, and componentwise products forward(a)*forward(b) mod y^r+1 "
        "(and sums of these): inverse then returns a, resp. a*b mod x^N+1"
    )

    def __init__(self, q: int, k: int, r: int) -> None:
        if not (is_power_of_two(k) and is_power_of_two(r)):
            raise SizeError(f"Nussbaumer needs powers of two, got k={k}, r={r}")
        if r % k:
            raise NoRootOfUnityError(
                f"Nussbaumer: y^(r/k) is a 2k-th root of unity in y^r+1 only when k | r "
                f"(k={k}, r={r})"
            )
        self.k, self.r = k, r
        self.unit = r // k
        self.dft = Radix2DFT(ShiftAction(q, r, self.unit, 2 * k))
        t = binomial(r, q - 1, q)  # y^r + 1
        super().__init__(q, binomial(k * r, q - 1, q), [t] * (2 * k), f"Nussbaumer(k={k}, r={r})")
        self.inv_2k = inverse_mod(2 * k, q)
        self._verify()

    def gather(self, i: int, j: int) -> int:
        """The source coefficient index of y^j in block i: i + k*j."""
        return i + self.k * j

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        k, r = self.k, self.r
        blocks = [[a[self.gather(i, j)] for j in range(r)] for i in range(k)]
        blocks += [[0] * r for _ in range(k)]  # the embedding x^k - y -> x^2k - 1
        return self.dft.apply(blocks, False, ctr)

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q, k, r = self.q, self.k, self.r
        c = [scale(x, self.inv_2k, q, ctr) for x in self.dft.apply(parts, True, ctr)]
        blocks = [add(c[i], mul_xpow(c[i + k], 1, q, ctr), q, ctr) for i in range(k)]
        out = [0] * (k * r)
        for i in range(k):
            for j in range(r):
                out[self.gather(i, j)] = blocks[i][j]
        return out

    def constants(self) -> dict[str, object]:
        """{"k", "r", "root" (y^unit), "dft" (bit reversal and twiddle shifts), "target"}."""
        return {
            "k": self.k,
            "r": self.r,
            "root": f"y^{self.unit}",
            "dft": self.dft.constants(),
            "target": describe(self.targets[0], self.q, "y"),
        }
