"""Operation counts of ring maps and base multiplications.

A :class:`Cost` counts, per coefficient, the operations that a vectorised program of the same
structure performs:

``add``
    field additions and subtractions;
``mul_const``
    field multiplications by a constant known at generation time (twiddles, Bruun and
    Cooley–Tukey constants, Rader kernel);
``scale``
    field multiplications by a *normalisation* constant (2^-k, n^-1 of an inverse transform);
    listed apart because a code generator can usually fold them into other constants;
``mul_var``
    field multiplications of two variables (base multiplications);
``shift``
    coefficients moved, possibly negated, by a multiplication by +-x^e (Schönhage and Nussbaumer
    twiddles) or by +-1: free up to a permutation and a sign folded into the next add/sub.

Counts are exact for the explicit loops as written (they are collected while the loops run; no
loop skips work depending on data, so running once on zeros gives the count of every input).
"""

from __future__ import annotations

from collections.abc import Mapping

KEYS: tuple[str, ...] = ("add", "mul_const", "scale", "mul_var", "shift")


class Cost:
    """A mutable counter of the operations in :data:`KEYS` (all start at 0)."""

    __slots__ = ("_c",)

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self._c = dict.fromkeys(KEYS, 0)
        for k, v in (counts or {}).items():
            self.tick(k, v)

    def tick(self, key: str, n: int = 1) -> None:
        """Add ``n`` operations of kind ``key`` (one of :data:`KEYS`)."""
        if key not in self._c:
            raise KeyError(f"unknown cost key {key!r}; expected one of {KEYS}")
        self._c[key] += n

    def __getitem__(self, key: str) -> int:
        return self._c[key]

    def __add__(self, other: Cost) -> Cost:
        return Cost({k: self._c[k] + other._c[k] for k in KEYS})

    def __mul__(self, n: int) -> Cost:
        return Cost({k: v * n for k, v in self._c.items()})

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cost) and self._c == other._c

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict in :data:`KEYS` order."""
        return dict(self._c)

    @property
    def multiplications(self) -> int:
        """All field multiplications: mul_const + scale + mul_var."""
        return self._c["mul_const"] + self._c["scale"] + self._c["mul_var"]

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v}" for k, v in self._c.items())
        return f"Cost({body})"


def sink(ctr: Cost | None) -> Cost:
    """``ctr`` itself, or a throw-away counter when None (so kernels can always tick)."""
    return ctr if ctr is not None else Cost()
