"""Greedy splitting of a binomial or trinomial ring as far as Z_q allows (used for the cyclic
convolution inside Rader's algorithm, whose kernel is a constant).

Rules, tried in this order on f of degree 2k > ``min_degree``:

1. x^2k - c with c a square: radix-2 Cooley–Tukey into x^k - s, x^k + s;
2. x^2k + c x^k + d with k even: a Bruun level (needs sqrt(d) and sqrt(2f - c));
3. x^2k + c x^k + d whose quadratic y^2 + c y + d has two distinct roots r1, r2 in Z_q:
   radix-2 Cooley–Tukey into x^k - r1, x^k - r2;

and anything else (odd degree, irreducible, or not of these shapes) is a leaf.
"""

from __future__ import annotations

from ...errors import NoSquareRootError
from .base import RingMap
from .bruun import BruunMap
from .compose import MapTree
from .cooley_tukey import CooleyTukeyMap
from .modarith import inverse_mod, sqrt_mod
from .polys import Modulus, as_binomial, as_trinomial


def split_step(q: int, f: Modulus) -> RingMap | None:
    """One split of f by the rules above, or None when none applies."""
    tri = as_trinomial(f, q)
    if tri is None:
        return None
    n, c, d = tri
    k = n // 2
    b = as_binomial(f, q)
    if b is not None and d != 0:
        s = sqrt_mod(b[1], q)
        if s:
            return CooleyTukeyMap(q, k, s, q - s)
    if k % 2 == 0 and d != 0:
        try:
            return BruunMap(q, n, c, d)
        except NoSquareRootError:
            pass
    disc = sqrt_mod(c * c - 4 * d, q)
    if disc:  # two distinct roots of y^2 + c y + d
        half = inverse_mod(2, q)
        r1, r2 = (-c + disc) * half % q, (-c - disc) * half % q
        if r1 and r2:
            return CooleyTukeyMap(q, k, r1, r2)
    return None


def auto_split(q: int, f: Modulus, min_degree: int = 1) -> RingMap | None:
    """The tree of :func:`split_step` splits of f, stopping at degree <= ``min_degree`` or where
    no rule applies; None when f itself does not split."""
    if len(f) - 1 <= min_degree:
        return None
    step = split_step(q, f)
    if step is None:
        return None
    kids = [auto_split(q, t, min_degree) for t in step.targets]
    if all(k is None for k in kids):
        return step
    return MapTree(step, kids, name=f"split({step.name})")
