"""Base multiplications: products in the small rings Z_q[x]/(g) at the leaves of a pipeline.

Two product algorithms followed by a reduction modulo the sparse leaf modulus g:

* schoolbook: n^2 ``mul_var`` and (n-1)^2 ``add`` for the full product of two n-coefficient
  polynomials;
* Karatsuba: recursive halving (3 half-size products) down to ``threshold`` coefficients,
  then schoolbook;

reduction (:func:`reduce_sparse`): from the top coefficient down, x^i = x^(i-n) * x^n with
x^n = -(g_0 + g_1 x + ... ) touches only the nonzero low terms of g (one for x^n - c, two for
x^n + a x^(n/2) + b): one ``add`` per term, plus a ``mul_const`` when the term is not +-1.

:class:`ConstMul` multiplies by a constant known at generation time (Rader's kernel): the product
with the constant and the reduction are folded into one n x n matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ...errors import SizeError
from .cost import Cost, sink
from .polys import Modulus, describe, pad, poly_mod

Method = Literal["schoolbook", "karatsuba"]
METHODS: tuple[Method, ...] = ("schoolbook", "karatsuba")


def schoolbook(a: Sequence[int], b: Sequence[int], q: int, ctr: Cost) -> list[int]:
    """The full product of two n-coefficient polynomials (2n-1 coefficients, mod q)."""
    n = len(a)
    out = [0] * (2 * n - 1)
    for i in range(n):
        for j in range(n):
            out[i + j] += a[i] * b[j]
    ctr.tick("mul_var", n * n)
    ctr.tick("add", (n - 1) * (n - 1))
    return [x % q for x in out]


def karatsuba(
    a: Sequence[int], b: Sequence[int], q: int, ctr: Cost, threshold: int = 4
) -> list[int]:
    """The full product by recursive Karatsuba: with a = a0 + a1 x^h (h = n/2),
    a*b = z0 + ((a0+a1)(b0+b1) - z0 - z2) x^h + z2 x^2h. Odd or small n: schoolbook."""
    n = len(a)
    if n <= threshold or n % 2:
        return schoolbook(a, b, q, ctr)
    h = n // 2
    a0, a1, b0, b1 = a[:h], a[h:], b[:h], b[h:]
    z0 = karatsuba(a0, b0, q, ctr, threshold)
    z2 = karatsuba(a1, b1, q, ctr, threshold)
    sa = [(x + y) % q for x, y in zip(a0, a1, strict=True)]
    sb = [(x + y) % q for x, y in zip(b0, b1, strict=True)]
    ctr.tick("add", 2 * h)
    z1 = karatsuba(sa, sb, q, ctr, threshold)
    mid = [(x - y - z) % q for x, y, z in zip(z1, z0, z2, strict=True)]
    ctr.tick("add", 2 * len(z1))
    out = [0] * (2 * n - 1)
    for i, x in enumerate(z0):
        out[i] += x
    for i, x in enumerate(z2):
        out[i + 2 * h] += x
    for i, x in enumerate(mid):
        out[i + h] += x
    ctr.tick("add", 2 * (h - 1))  # overlaps of mid with z0 and z2
    return [x % q for x in out]


def reduce_sparse(c: Sequence[int], g: Modulus, q: int, ctr: Cost) -> list[int]:
    """c mod (g, q) for monic g of degree n and len(c) <= 2n - 1, counting operations (see the
    module docstring); returns n coefficients in [0, q)."""
    n = len(g) - 1
    terms = [(t, x % q) for t, x in enumerate(g[:-1]) if x % q]
    out = [x % q for x in c] + [0] * max(0, n - len(c))
    for i in range(len(out) - 1, n - 1, -1):
        top = out[i]
        for t, gt in terms:
            if gt in (1, q - 1):
                ctr.tick("add")
            else:
                ctr.tick("mul_const")
                ctr.tick("add")
            out[i - n + t] = (out[i - n + t] - top * gt) % q
        out[i] = 0
    return out[:n]


class BaseMul:
    """Products in Z_q[x]/(g) for one leaf modulus g (degree n), by ``method``.

    ``mul(a, b)`` takes two polynomials of at most n coefficients (any ints) and returns a*b mod
    (g, q) as n coefficients in [0, q)."""

    def __init__(self, q: int, g: Modulus, method: Method = "schoolbook") -> None:
        if method not in METHODS:
            raise SizeError(f"unknown base multiplication {method!r}; expected one of {METHODS}")
        if len(g) < 2 or g[-1] % q != 1:
            raise SizeError(f"base modulus {g} is not monic of degree >= 1")
        self.q, self.g, self.method = q, tuple(g), method
        self.n = len(g) - 1
        ctr = Cost()
        self.mul([0] * self.n, [0] * self.n, ctr)
        self._cost = ctr

    def mul(self, a: Sequence[int], b: Sequence[int], ctr: Cost | None = None) -> list[int]:
        """a * b mod (g, q), n coefficients in [0, q)."""
        c = sink(ctr)
        x, y = pad(a, self.n, self.q), pad(b, self.n, self.q)
        full = (
            schoolbook(x, y, self.q, c)
            if self.method == "schoolbook"
            else karatsuba(x, y, self.q, c)
        )
        return reduce_sparse(full, self.g, self.q, c)

    def cost(self) -> Cost:
        """Operation count of one :meth:`mul` (a copy)."""
        return Cost(self._cost.as_dict())

    def describe(self) -> str:
        """E.g. ``schoolbook mod x^8 + 1234*x^4 + 1``."""
        return f"{self.method} mod {describe(self.g, self.q)}"


class ConstMul:
    """Multiplication by a constant k in Z_q[x]/(g): out = M a with M[i][j] the coefficient of
    x^i in k * x^j mod g (precomputed), costing one ``mul_const`` per entry not in {0, +-1} and
    one ``add`` per nonzero entry beyond the first of each row; of degree 2 with
    M[0][1] = +-M[1][0] (every g = x^2 + a x +- 1), three ``mul_const`` and three ``add``
    instead (:meth:`paired`), unless constructed with ``paired=False``."""

    def __init__(self, q: int, g: Modulus, k: Sequence[int], paired: bool = True) -> None:
        self.q, self.g, self.allow_paired = q, tuple(g), paired
        self.n = len(g) - 1
        self.k = pad(k, self.n, q)
        cols = [poly_mod([0] * j + self.k, self.g, q) for j in range(self.n)]
        self.matrix = [[cols[j][i] for j in range(self.n)] for i in range(self.n)]
        self._pair = self._paired_constants()

    def paired(self) -> tuple[int, int, int, int] | None:
        """For degree 2, when M[0][1] = s * M[1][0] with s = +-1 and the matrix product would
        take four multiplications: (s, M[0][0] - M[1][0], M[1][0], M[1][1] - s * M[1][0])
        (mod q), the constants of the three-multiplication form of :meth:`mul`; else None
        (and None when constructed with ``paired=False``). Every k mod x^2 + a x + b with
        b = +-1 qualifies (M = [[k0, -b k1], [k1, k0 - a k1]]). Computed once, at
        construction."""
        return self._pair

    def _paired_constants(self) -> tuple[int, int, int, int] | None:
        if self.n != 2 or not self.allow_paired:
            return None
        q = self.q
        (m00, m01), (m10, m11) = self.matrix
        if any(m in (0, 1, q - 1) for m in (m00, m01, m10, m11)):
            return None
        for s in (1, -1):
            if (m01 - s * m10) % q == 0:
                return s, (m00 - m10) % q, m10, (m11 - s * m10) % q
        return None

    def mul(self, a: Sequence[int], ctr: Cost | None = None) -> list[int]:
        """k * a mod (g, q). Degree 2 with :meth:`paired` constants (s, u, v, w): three
        multiplications instead of four, t = v (a0 + s a1), out0 = u a0 + t,
        out1 = t + w a1 (so out0 = m00 a0 + s v a1 and out1 = v a0 + m11 a1)."""
        c = sink(ctr)
        q = self.q
        pair = self._pair
        if pair is not None:
            s, u, v, w = pair
            a0, a1 = a
            c.tick("mul_const", sum(1 for m in (u, v, w) if m not in (0, 1, q - 1)))
            c.tick("add", 3)
            t = ((a0 + a1) if s == 1 else (a0 - a1)) * v % q
            return [(u * a0 + t) % q, (t + w * a1) % q]
        out = []
        for row in self.matrix:
            acc, terms = 0, 0
            for m, x in zip(row, a, strict=True):
                if m == 0:
                    continue
                if m not in (1, q - 1):
                    c.tick("mul_const")
                terms += 1
                acc += m * x
            c.tick("add", max(0, terms - 1))
            out.append(acc % q)
        return out
