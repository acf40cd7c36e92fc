"""Counted kernels on coefficient blocks: the only place where maps do arithmetic.

A *block* is a list of coefficients in [0, q); every kernel returns a new block in [0, q) and
ticks a :class:`~.cost.Cost` (see there for what each key means). The kernels are elementwise, so
a vectorised program performs each as one vector instruction sequence per chunk of lanes.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cost import Cost


def add(u: Sequence[int], v: Sequence[int], q: int, ctr: Cost) -> list[int]:
    """u + v, elementwise (len(u) adds)."""
    ctr.tick("add", len(u))
    return [(x + y) % q for x, y in zip(u, v, strict=True)]


def sub(u: Sequence[int], v: Sequence[int], q: int, ctr: Cost) -> list[int]:
    """u - v, elementwise (len(u) subtractions, counted as ``add``)."""
    ctr.tick("add", len(u))
    return [(x - y) % q for x, y in zip(u, v, strict=True)]


def mul_const(u: Sequence[int], c: int, q: int, ctr: Cost) -> list[int]:
    """c * u for a constant c. Multiplying by 0 or 1 is free, by -1 is a ``shift`` (negation),
    anything else costs len(u) ``mul_const``."""
    c %= q
    if c == 0:
        return [0] * len(u)
    if c == 1:
        return list(u)
    if c == q - 1:
        ctr.tick("shift", len(u))
        return [(-x) % q for x in u]
    ctr.tick("mul_const", len(u))
    return [x * c % q for x in u]


def scale(u: Sequence[int], c: int, q: int, ctr: Cost) -> list[int]:
    """c * u for a normalisation constant c (2^-k, n^-1): len(u) ``scale`` unless c = 1."""
    c %= q
    if c == 1:
        return list(u)
    ctr.tick("scale", len(u))
    return [x * c % q for x in u]


def mul_xpow(u: Sequence[int], e: int, q: int, ctr: Cost) -> list[int]:
    """x^e * u in Z_q[x]/(x^L + 1), L = len(u) (x has order 2L there, so e is taken mod 2L).

    Coefficient i moves to (i + e) mod L and is negated when it wraps an odd number of times:
    L ``shift`` (free moves/negations) unless e = 0 mod 2L."""
    n = len(u)
    e %= 2 * n
    if e == 0:
        return list(u)
    ctr.tick("shift", n)
    out = [0] * n
    for i, x in enumerate(u):
        j = i + e
        sign = -1 if (j // n) % 2 else 1
        out[j % n] = (sign * x) % q
    return out
