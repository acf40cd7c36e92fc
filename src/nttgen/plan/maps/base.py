"""The :class:`RingMap` abstraction: a checked map from one ring Z_q[x]/(f) to a product of rings.

A ring map has a *source* modulus f and *target* moduli g_0, ..., g_{k-1} (monic polynomials over
Z_q, see :mod:`.polys`). ``forward(a)`` takes a polynomial of degree < deg f to the tuple of its
images, one polynomial of degree < deg g_i per target; ``inverse(parts)`` goes back.

Two kinds exist:

``crt``
    f = g_0 * ... * g_{k-1} with pairwise coprime factors (or the same up to a relabelling of
    the variable, as in Good–Thomas): ``forward`` is a ring isomorphism (Chinese remaindering),
    ``inverse`` is its inverse on *every* tuple of parts.
``embedding``
    ``forward`` is an injective Z_q-linear map that multiplies correctly, but is not onto
    (Schönhage, Nussbaumer: the image has twice as many coefficients). ``inverse`` is a left
    inverse that is valid on ``forward(a)`` and on componentwise products
    ``forward(a) * forward(b)`` (and sums of these); each class documents the exact set in its
    ``inverse_valid_for`` attribute.

Every map computes its constants at construction and checks them there (primitive-root tests,
product of the targets, round trip and homomorphism on pseudo-random inputs), raising a
:class:`~.errors.MapError` subclass that names the rule broken.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import cached_property
from typing import ClassVar

from ...errors import FactorisationError, InputShapeError
from .cost import Cost, sink
from .polys import (
    Modulus,
    Poly,
    as_binomial,
    describe,
    pad,
    poly_gcd,
    poly_mod,
    poly_mul,
    poly_mulmod,
    poly_prod,
    trim,
)

Parts = tuple[list[int], ...]

SPARSE_CHECK_ABOVE = 96
"""Source degree above which the construction-time homomorphism check uses sparse inputs (the
reference product is schoolbook; sparse inputs keep construction fast)."""


class RingMap(ABC):
    """A map Z_q[x]/(source) -> prod_i Z_q[x]/(targets[i]); see the module docstring.

    Subclasses implement :meth:`_forward` and :meth:`_inverse` on normalised, padded inputs and
    call :meth:`_verify` at the end of their constructor."""

    kind: str = "crt"
    inverse_valid_for: ClassVar[str] = "every tuple of parts (the map is an isomorphism)"

    def __init__(self, q: int, source: Modulus, targets: Sequence[Modulus], name: str) -> None:
        self.q = q
        self.source: Modulus = tuple(source)
        self.targets: tuple[Modulus, ...] = tuple(tuple(t) for t in targets)
        self.name = name

    # -- shape -------------------------------------------------------------------------------
    @property
    def source_degree(self) -> int:
        """deg(source): the number of coefficients ``forward`` takes."""
        return len(self.source) - 1

    @property
    def target_degrees(self) -> tuple[int, ...]:
        """deg(target_i): the number of coefficients of part i."""
        return tuple(len(t) - 1 for t in self.targets)

    # -- the map -----------------------------------------------------------------------------
    def forward(self, a: Sequence[int], ctr: Cost | None = None) -> Parts:
        """The images of ``a`` (any ints, at most deg(source) coefficients, lowest first) in the
        target rings: a tuple of len(targets) lists, part i with deg(target_i) coefficients in
        [0, q). Operations are ticked on ``ctr`` when given."""
        x = pad(a, self.source_degree, self.q)
        out = self._forward(x, sink(ctr))
        return tuple(out)

    def inverse(self, parts: Sequence[Sequence[int]], ctr: Cost | None = None) -> Poly:
        """The source element (deg(source) coefficients in [0, q)) whose images are ``parts``;
        valid for the inputs named by :attr:`inverse_valid_for`."""
        if len(parts) != len(self.targets):
            raise InputShapeError(
                f"{self.name}: expected {len(self.targets)} parts, got {len(parts)}"
            )
        ys = [pad(p, d, self.q) for p, d in zip(parts, self.target_degrees, strict=True)]
        return self._inverse(ys, sink(ctr))

    def norms(self) -> tuple[int, ...] | None:
        """Per-target normalisation constants nu_i of :meth:`inverse_raw`, or None when the map
        has no unnormalised inverse."""
        return None

    def inverse_raw(self, parts: Sequence[Sequence[int]], ctr: Cost | None = None) -> Poly:
        """The inverse without its normalisation: ``inverse(parts)`` equals
        ``inverse_raw([nu_i * parts[i]])`` with nu = :meth:`norms`. A caller that multiplies the
        parts by constants anyway (Rader's kernel) folds nu_i into those constants and saves
        the ``scale`` operations. Raises NotImplementedError when :meth:`norms` is None."""
        if self.norms() is None:
            raise NotImplementedError(f"{self.name} has no unnormalised inverse")
        ys = [pad(p, d, self.q) for p, d in zip(parts, self.target_degrees, strict=True)]
        return self._inverse_raw(ys, sink(ctr))

    def _inverse_raw(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        raise NotImplementedError(f"{self.name} has no unnormalised inverse")

    @abstractmethod
    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        """forward on a normalised list of exactly deg(source) coefficients."""

    @abstractmethod
    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        """inverse on normalised parts of exactly deg(target_i) coefficients."""

    def multiply_parts(self, x: Sequence[Sequence[int]], y: Sequence[Sequence[int]]) -> Parts:
        """Reference componentwise product: part i of x times part i of y mod target i
        (schoolbook, uncounted)."""
        return tuple(
            poly_mulmod(u, v, t, self.q) for u, v, t in zip(x, y, self.targets, strict=True)
        )

    # -- description and cost ----------------------------------------------------------------
    @abstractmethod
    def constants(self) -> dict[str, object]:
        """The map's constants (roots of unity, permutations, shift amounts, factors, ...)."""

    def describe(self) -> str:
        """One line: name, source and a summary of the targets."""
        degs = sorted(set(self.target_degrees))
        return (
            f"{self.name}: {describe(self.source, self.q)} -> {len(self.targets)} parts "
            f"of degree {'/'.join(map(str, degs))}"
        )

    @cached_property
    def _costs(self) -> tuple[Cost, Cost]:
        f, i = Cost(), Cost()
        parts = self._forward([0] * self.source_degree, f)
        self._inverse([[0] * len(p) for p in parts], i)
        return f, i

    def cost(self) -> dict[str, dict[str, int]]:
        """Operation counts {"forward": {...}, "inverse": {...}} (keys of :mod:`.cost`)."""
        f, i = self._costs
        return {"forward": f.as_dict(), "inverse": i.as_dict()}

    def forward_cost(self) -> Cost:
        """Operation count of one :meth:`forward` (a copy)."""
        return Cost(self._costs[0].as_dict())

    def inverse_cost(self) -> Cost:
        """Operation count of one :meth:`inverse` (a copy)."""
        return Cost(self._costs[1].as_dict())

    # -- construction-time checks ------------------------------------------------------------
    def _verify(self, seed: int = 0) -> None:
        """Check the map: for ``crt`` maps that the targets multiply to the source and the
        source is squarefree; for all maps a round trip on a pseudo-random input and the
        homomorphism property on a pseudo-random pair. Raises :class:`FactorisationError`."""
        q = self.q
        if self.kind == "crt":
            prod = poly_prod(self.targets, q)
            if tuple(prod) != self.source:
                raise FactorisationError(
                    f"{self.name}: the product of the {len(self.targets)} target moduli is not "
                    f"the source {describe(self.source, q)}"
                )
            if not _squarefree(self.source, q):
                raise FactorisationError(
                    f"{self.name}: source {describe(self.source, q)} is not squarefree mod {q}, "
                    f"so its factors are not coprime"
                )
        rng = random.Random(f"{self.name}/{q}/{seed}")
        n = self.source_degree
        a = [rng.randrange(q) for _ in range(n)]
        if self.inverse(self.forward(a)) != a:
            raise FactorisationError(f"{self.name}: inverse(forward(a)) != a")
        if n > SPARSE_CHECK_ABOVE:
            a = [0] * n
            b = [0] * n
            for _ in range(3):
                a[rng.randrange(n)] = rng.randrange(1, q)
                b[rng.randrange(n)] = rng.randrange(1, q)
            a[n - 1] = b[n - 1] = q - 1  # exercise the wrap-around
        else:
            b = [rng.randrange(q) for _ in range(n)]
        want = poly_mod(poly_mul(a, b, q), self.source, q)
        got = self.inverse(self.multiply_parts(self.forward(a), self.forward(b)))
        if got != want:
            raise FactorisationError(
                f"{self.name}: not a ring homomorphism: inverse(forward(a)*forward(b)) != a*b"
            )


def _squarefree(f: Modulus, q: int) -> bool:
    """Whether f is squarefree over Z_q. A binomial x^n - c with c != 0 and q not dividing n is
    (its derivative n x^(n-1) shares no root with it); otherwise gcd(f, f') is computed."""
    b = as_binomial(f, q)
    if b is not None:
        n, c = b
        return c % q != 0 and n % q != 0
    df = [(i * c) % q for i, c in enumerate(f)][1:]
    return len(trim(poly_gcd(f, df, q))) == 1
