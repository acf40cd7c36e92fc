"""Bruun's trinomial splits (Bruun 1978; over F_q with q = 3 mod 4: Blake, Gao, Mullin 1993).

One level (:class:`BruunMap`), for m even, h = m/2, f^2 = d and e^2 = 2f - c, e != 0:

    x^2m + c x^m + d  =  (x^m + e x^h + f) (x^m - e x^h + f),

since (x^m + f)^2 - e^2 x^m = x^2m + (2f - e^2) x^m + f^2. The split needs two square roots in
Z_q: f = +-sqrt(d) and e = sqrt(2f - c) for one of the two signs of f. For x^2m + d (c = 0) the
candidates are 2f and -2f, and when q = 3 (mod 4) exactly one of them is a square (-1 is not),
so x^2m + d splits whenever d is a square. That is why x^32 + 1 splits into four
x^8 + alpha x^4 + beta over Z_4591 (4591 = 7 mod 8) and why Good–Rader–Bruun can split every
x^16 + c with c a square.

Butterfly (blocks A0..A3 of h coefficients; y = x^h, so y^2 = -e y - f and
y^3 = (e^2 - f) y + e f modulo the "+" factor):

    P = A0 - f A2,  Q = A1 + (f - c) A3,  R = e f A3,  S = e A2
    "+" part: (P + R, Q - S)         "-" part: (P - R, Q + S)

(e^2 - f = f - c). Inverse: A3 = (U+_0 - U-_0)/(2ef), A2 = (U-_1 - U+_1)/(2e),
A0 = (U+_0 + U-_0)/2 + f A2, A1 = (U+_1 + U-_1)/2 - (f - c) A3.

:func:`bruun_tree` applies levels recursively down to a given degree.
"""

from __future__ import annotations

from ...errors import NoSquareRootError, SizeError
from .base import RingMap
from .compose import MapTree
from .cost import Cost
from .modarith import centred, inverse_mod, sqrt_mod
from .ops import add, mul_const, scale, sub
from .polys import describe, trinomial


class BruunMap(RingMap):
    """One Bruun level: Z_q[x]/(x^n + c x^(n/2) + d) -> the "+" and "-" factors above
    (target 0: x^m + e x^h + f, target 1: x^m - e x^h + f; m = n/2, h = m/2).

    ``f`` and ``e`` are found when not given: f = +sqrt(d) (the smaller root) is tried before
    -sqrt(d); e is the smaller square root of 2f - c. Raises :class:`NoSquareRootError` naming
    the square root that is missing."""

    def __init__(self, q: int, n: int, c: int, d: int, f: int | None = None) -> None:
        if n < 4 or n % 4:
            raise SizeError(f"Bruun split needs the source degree divisible by 4, got {n}")
        c, d = c % q, d % q
        src = describe(trinomial(n, c, d, q), q)
        if d == 0:
            raise SizeError(f"Bruun split of {src}: d = 0, the source is not squarefree")
        if f is None:
            s = sqrt_mod(d, q)
            if s is None:
                raise NoSquareRootError(
                    f"Bruun split of {src} needs f = sqrt(d): d={centred(d, q)} is not a square "
                    f"mod q={q}"
                )
            candidates = [s, q - s]
        else:
            if (f * f - d) % q:
                raise NoSquareRootError(f"Bruun split of {src}: f={f} does not satisfy f^2 = d")
            candidates = [f % q]
        chosen: tuple[int, int] | None = None
        for cand in candidates:
            r = sqrt_mod(2 * cand - c, q)
            if r:
                chosen = (cand, r)
                break
        if chosen is None:
            tried = ", ".join(str(centred(2 * x - c, q)) for x in candidates)
            hint = " (q = 1 mod 4: Bruun's factorisation needs q = 3 mod 4)" if q % 4 == 1 else ""
            raise NoSquareRootError(
                f"Bruun split of {src} needs e = sqrt(2f - c) for f = +-sqrt(d), but none of "
                f"{tried} is a nonzero square mod q={q}{hint}"
            )
        self.f, self.e = chosen
        self.n, self.c, self.d = n, c, d
        self.m, self.h = n // 2, n // 4
        e, f = self.e, self.f
        super().__init__(
            q,
            trinomial(n, c, d, q),
            [trinomial(self.m, e, f, q), trinomial(self.m, -e, f, q)],
            f"Bruun(n={n})",
        )
        self.ef = e * f % q
        self.f_minus_c = (f - c) % q
        self.inv_2 = inverse_mod(2, q)
        self.inv_2ef = inverse_mod(2 * e * f, q)
        self.inv_2e = inverse_mod(2 * e, q)
        self.inv_ef = inverse_mod(e * f, q)
        self.inv_e = inverse_mod(e, q)
        self._verify()

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        q, h = self.q, self.h
        a0, a1, a2, a3 = (a[i * h : (i + 1) * h] for i in range(4))
        p = sub(a0, mul_const(a2, self.f, q, ctr), q, ctr)
        qq = add(a1, mul_const(a3, self.f_minus_c, q, ctr), q, ctr)
        r = mul_const(a3, self.ef, q, ctr)
        s = mul_const(a2, self.e, q, ctr)
        return [add(p, r, q, ctr) + sub(qq, s, q, ctr), sub(p, r, q, ctr) + add(qq, s, q, ctr)]

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q, h = self.q, self.h
        (u0, u1), (v0, v1) = (parts[0][:h], parts[0][h:]), (parts[1][:h], parts[1][h:])
        a3 = mul_const(sub(u0, v0, q, ctr), self.inv_2ef, q, ctr)
        a2 = mul_const(sub(v1, u1, q, ctr), self.inv_2e, q, ctr)
        p = scale(add(u0, v0, q, ctr), self.inv_2, q, ctr)
        qq = scale(add(u1, v1, q, ctr), self.inv_2, q, ctr)
        a0 = add(p, mul_const(a2, self.f, q, ctr), q, ctr)
        a1 = sub(qq, mul_const(a3, self.f_minus_c, q, ctr), q, ctr)
        return a0 + a1 + a2 + a3

    def norms(self) -> tuple[int, ...]:
        """(1/2, 1/2): the halving in the inverse butterfly."""
        return (self.inv_2, self.inv_2)

    def _inverse_raw(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q, h = self.q, self.h
        (u0, u1), (v0, v1) = (parts[0][:h], parts[0][h:]), (parts[1][:h], parts[1][h:])
        a3 = mul_const(sub(u0, v0, q, ctr), self.inv_ef, q, ctr)
        a2 = mul_const(sub(v1, u1, q, ctr), self.inv_e, q, ctr)
        a0 = add(add(u0, v0, q, ctr), mul_const(a2, self.f, q, ctr), q, ctr)
        a1 = sub(add(u1, v1, q, ctr), mul_const(a3, self.f_minus_c, q, ctr), q, ctr)
        return a0 + a1 + a2 + a3

    def constants(self) -> dict[str, object]:
        """{"source", "c", "d", "f", "e", "targets"} with centred values."""
        q = self.q
        return {
            "source": describe(self.source, q),
            "c": centred(self.c, q),
            "d": centred(self.d, q),
            "f": centred(self.f, q),
            "e": centred(self.e, q),
            "targets": [describe(t, q) for t in self.targets],
        }


def bruun_tree(q: int, n: int, c: int, d: int, min_degree: int) -> RingMap:
    """Bruun levels from x^n + c x^(n/2) + d down to factors of degree ``min_degree``.

    Returns a single :class:`BruunMap` when one level suffices, else a :class:`MapTree`; its
    leaves are trinomials x^min_degree + alpha x^(min_degree/2) + beta, in the order
    "+", "-" at every level (depth first). n / min_degree must be a power of two >= 2 and
    min_degree even. Raises :class:`NoSquareRootError` when a level cannot split."""
    if min_degree < 2 or min_degree % 2 or n <= min_degree or n % min_degree:
        raise SizeError(f"bruun_tree: cannot split degree {n} into degree-{min_degree} factors")
    level = BruunMap(q, n, c, d)
    if level.m == min_degree:
        return level
    kids = [bruun_tree(q, level.m, sign * level.e, level.f, min_degree) for sign in (1, -1)]
    return MapTree(level, kids, name=f"Bruun(n={n}->{min_degree})")
