"""Per-lane inclusive integer intervals: the abstract values of the bounds analysis.

One convention everywhere: an interval [lo, hi] is inclusive at both ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """An inclusive interval per lane: lane k lies in [lo[k], hi[k]]."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.lo) != len(self.hi):
            raise ValueError("lo and hi must have the same number of lanes")
        for a, b in zip(self.lo, self.hi, strict=True):
            if a > b:
                raise ValueError(f"empty interval [{a}, {b}]")

    @staticmethod
    def uniform(lo: int, hi: int, lanes: int) -> Bound:
        """The interval [lo, hi] on each of ``lanes`` lanes."""
        return Bound((lo,) * lanes, (hi,) * lanes)

    @staticmethod
    def of_values(values: Sequence[int]) -> Bound:
        """The exact per-lane bound of a known vector of values."""
        return Bound(tuple(values), tuple(values))

    @staticmethod
    def join_all(bounds: Iterable[Bound]) -> Bound:
        """Lane-wise union hull of one or more bounds of the same width."""
        it = iter(bounds)
        acc = next(it)
        for b in it:
            acc = acc.join(b)
        return acc

    @property
    def lanes(self) -> int:
        """Number of lanes."""
        return len(self.lo)

    @property
    def min(self) -> int:
        """Smallest lower end over all lanes."""
        return min(self.lo)

    @property
    def max(self) -> int:
        """Largest upper end over all lanes."""
        return max(self.hi)

    @property
    def magnitude(self) -> int:
        """max |x| over all lanes."""
        return max(-self.min, self.max)

    def hull(self) -> tuple[int, int]:
        """The single interval [min, max] that covers every lane."""
        return (self.min, self.max)

    def join(self, other: Bound) -> Bound:
        """Lane-wise union hull."""
        return Bound(
            tuple(map(min, self.lo, other.lo)),
            tuple(map(max, self.hi, other.hi)),
        )

    def within(self, lo: int, hi: int) -> bool:
        """Whether every lane lies inside [lo, hi]."""
        return lo <= self.min and self.max <= hi

    def subset_of(self, other: Bound) -> bool:
        """Whether each lane's interval is inside the other's same lane."""
        pairs = zip(self.lo, self.hi, other.lo, other.hi, strict=True)
        return all(a >= c and b <= d for a, b, c, d in pairs)

    def permute(self, source_lane: Sequence[int]) -> Bound:
        """Lane k of the result is lane ``source_lane[k]`` of this bound."""
        return Bound(tuple(self.lo[i] for i in source_lane), tuple(self.hi[i] for i in source_lane))

    def __str__(self) -> str:
        lo, hi = self.hull()
        return f"[{lo}, {hi}]"
