"""Cooley–Tukey splits of one ring into two or three (radix 2 and radix 3).

Radix 2: for distinct r1, r2 in Z_q,

    Z_q[x]/((x^m - r1)(x^m - r2))  =  Z_q[x]/(x^m - r1)  x  Z_q[x]/(x^m - r2),

with a = A0 + A1 x^m (blocks of m coefficients) going to (A0 + r1 A1, A0 + r2 A1). The binomial
case r2 = -r1 = -s is the classic x^2m - s^2 -> (x^m - s, x^m + s) butterfly with one
multiplication per coefficient; it needs s = sqrt(c) for x^2m - c.

Radix 3: with w a primitive cube root of unity and s != 0,

    Z_q[x]/(x^3m - s^3)  =  prod_{i<3} Z_q[x]/(x^m - s w^i),

a = A0 + A1 x^m + A2 x^2m going to the size-3 DFT of (A0, s A1, s^2 A2).

Both are ``crt`` maps: the inverse is exact on every tuple of parts.
"""

from __future__ import annotations

from ...errors import NoRootOfUnityError, SizeError
from .base import RingMap
from .cost import Cost
from .dft import FieldAction, Radix3DFT
from .modarith import centred, inverse_mod, primitive_root_of_unity, require_sqrt
from .ops import add, mul_const, scale, sub
from .polys import binomial, describe


class CooleyTukeyMap(RingMap):
    """Radix-2 split of (x^m - r1)(x^m - r2) into x^m - r1 and x^m - r2 (r1 != r2).

    Use :meth:`binomial` to split x^2m - c (finds s = sqrt(c), raising
    :class:`NoSquareRootError` when c is not a square)."""

    def __init__(self, q: int, m: int, r1: int, r2: int) -> None:
        r1, r2 = r1 % q, r2 % q
        if m < 1:
            raise SizeError(f"Cooley–Tukey block size must be >= 1, got {m}")
        if r1 == r2:
            raise SizeError(f"Cooley–Tukey needs distinct roots, got r1 = r2 = {centred(r1, q)}")
        self.m, self.r1, self.r2 = m, r1, r2
        self.symmetric = (r1 + r2) % q == 0
        source = [0] * (2 * m + 1)
        source[0], source[m], source[2 * m] = r1 * r2 % q, (-(r1 + r2)) % q, 1
        targets = [binomial(m, r1, q), binomial(m, r2, q)]
        super().__init__(q, tuple(source), targets, f"CT2(m={m})")
        if self.symmetric:
            self.inv_2 = inverse_mod(2, q)
            self.inv_2r = inverse_mod(2 * r1, q)
        else:
            self.inv_diff = inverse_mod(r1 - r2, q)
        self._verify()

    @classmethod
    def binomial(cls, q: int, m: int, c: int) -> CooleyTukeyMap:
        """The split x^2m - c -> (x^m - s)(x^m + s) with s = sqrt(c) (the smaller root)."""
        s = require_sqrt(c, q, f"Cooley–Tukey split of x^{2 * m} - c needs sqrt(c)")
        if s == 0:
            raise SizeError("Cooley–Tukey split of x^2m - 0: the factors are not coprime")
        return cls(q, m, s, q - s)

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        q, m = self.q, self.m
        a0, a1 = a[:m], a[m:]
        if self.symmetric:
            t = mul_const(a1, self.r1, q, ctr)
            return [add(a0, t, q, ctr), sub(a0, t, q, ctr)]
        u = add(a0, mul_const(a1, self.r1, q, ctr), q, ctr)
        v = add(a0, mul_const(a1, self.r2, q, ctr), q, ctr)
        return [u, v]

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q = self.q
        u, v = parts
        if self.symmetric:
            a0 = scale(add(u, v, q, ctr), self.inv_2, q, ctr)
            d = sub(u, v, q, ctr)
            if self.r1 in (1, q - 1):  # 1/(2 r1) = +-1/2: a normalisation
                a1 = scale(d, self.inv_2r, q, ctr)
            else:
                a1 = mul_const(d, self.inv_2r, q, ctr)
            return a0 + a1
        a1 = mul_const(sub(u, v, q, ctr), self.inv_diff, q, ctr)
        a0 = sub(u, mul_const(a1, self.r1, q, ctr), q, ctr)
        return a0 + a1

    def norms(self) -> tuple[int, ...]:
        """(1/2, 1/2) for x^2m - s^2 (the halving of the butterfly), (1, 1) otherwise."""
        return (self.inv_2, self.inv_2) if self.symmetric else (1, 1)

    def _inverse_raw(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        if not self.symmetric:
            return self._inverse(parts, ctr)
        q = self.q
        u, v = parts
        a0 = add(u, v, q, ctr)
        a1 = mul_const(sub(u, v, q, ctr), inverse_mod(self.r1, q), q, ctr)
        return a0 + a1

    def constants(self) -> dict[str, object]:
        """{"radix": 2, "m", "roots": (r1, r2) centred, "source", "targets"}."""
        q = self.q
        return {
            "radix": 2,
            "m": self.m,
            "roots": (centred(self.r1, q), centred(self.r2, q)),
            "source": describe(self.source, q),
            "targets": [describe(t, q) for t in self.targets],
        }


class CooleyTukey3Map(RingMap):
    """Radix-3 split of x^3m - s^3 into x^m - s w^i, i = 0, 1, 2 (w: smallest primitive cube
    root of unity mod q; raises :class:`NoRootOfUnityError` when 3 does not divide q - 1)."""

    def __init__(self, q: int, m: int, s: int = 1) -> None:
        s %= q
        if s == 0 or m < 1:
            raise SizeError(f"radix-3 Cooley–Tukey needs s != 0 and m >= 1 (s={s}, m={m})")
        w = primitive_root_of_unity(3, q)
        self.m, self.s, self.w = m, s, w
        self.action = FieldAction(q, w, 3)
        self.dft = Radix3DFT(self.action)
        c = pow(s, 3, q)
        super().__init__(
            q,
            binomial(3 * m, c, q),
            [binomial(m, s * pow(w, i, q), q) for i in range(3)],
            f"CT3(m={m})",
        )
        if (1 + w + w * w) % q:  # pragma: no cover - implied by the order test
            raise NoRootOfUnityError(f"1 + w + w^2 != 0 for w={w} mod {q}")
        self.inv = [inverse_mod(3 * pow(s, i, q), q) for i in range(3)]
        self._verify()

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        q, m, s = self.q, self.m, self.s
        blocks = [a[:m], mul_const(a[m : 2 * m], s, q, ctr), mul_const(a[2 * m :], s * s, q, ctr)]
        return self.dft.apply(blocks, False, ctr)

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q = self.q
        y = self.dft.apply(parts, True, ctr)
        out: list[int] = []
        for i, blk in enumerate(y):
            c = self.inv[i]
            plain = pow(self.s, i, q) in (1, q - 1)
            out.extend(scale(blk, c, q, ctr) if plain else mul_const(blk, c, q, ctr))
        return out

    def norms(self) -> tuple[int, ...]:
        """(1/3, 1/3, 1/3): the size-3 inverse DFT's normalisation."""
        inv3 = inverse_mod(3, self.q)
        return (inv3, inv3, inv3)

    def _inverse_raw(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q = self.q
        y = self.dft.apply(parts, True, ctr)
        out: list[int] = []
        for i, blk in enumerate(y):
            out.extend(mul_const(blk, inverse_mod(pow(self.s, i, q), q), q, ctr))
        return out

    def constants(self) -> dict[str, object]:
        """{"radix": 3, "m", "s", "omega_3", "targets"}."""
        q = self.q
        return {
            "radix": 3,
            "m": self.m,
            "s": centred(self.s, q),
            "omega_3": self.w,
            "targets": [describe(t, q) for t in self.targets],
        }
