"""A set of integers kept as sorted, disjoint half-open ranges: the secret stack bytes of the
constant-time checker (:mod:`nttgen.ctcheck`).

At -O0 a large kernel spills thousands of vectors; as a plain set of (offset, size) slots every
load scanned them all. Here a membership query is one binary search, and adjacent spills merge
into one range. The set it stands for is the set of bytes, so the representation is canonical:
two equal sets have equal ranges, and ``len`` counts bytes (it grows exactly when a union adds
one).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator


class ByteRanges:
    """Sorted, disjoint, non-adjacent ranges [start, end) of integers."""

    __slots__ = ("ends", "starts")

    def __init__(self, starts: list[int] | None = None, ends: list[int] | None = None) -> None:
        self.starts: list[int] = starts if starts is not None else []
        self.ends: list[int] = ends if ends is not None else []

    def copy(self) -> ByteRanges:
        """An independent copy."""
        return ByteRanges(list(self.starts), list(self.ends))

    def __len__(self) -> int:
        """How many integers the set holds."""
        return sum(self.ends) - sum(self.starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        """The ranges as (start, size), in increasing order."""
        for s, e in zip(self.starts, self.ends, strict=True):
            yield s, e - s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ByteRanges):
            return NotImplemented
        return self.starts == other.starts and self.ends == other.ends

    __hash__ = None  # type: ignore[assignment]  # mutable

    def overlaps(self, lo: int, hi: int) -> bool:
        """Whether any integer of [lo, hi) is in the set."""
        i = bisect_left(self.starts, hi) - 1  # the last range starting below hi
        return i >= 0 and self.ends[i] > lo

    def add(self, lo: int, hi: int) -> None:
        """Put [lo, hi) into the set (merging the ranges it overlaps or touches)."""
        if lo >= hi:
            return
        j0 = bisect_left(self.ends, lo)  # first range ending at or after lo
        j1 = bisect_right(self.starts, hi)  # first range starting after hi
        if j0 < j1:
            lo = min(lo, self.starts[j0])
            hi = max(hi, self.ends[j1 - 1])
        self.starts[j0:j1] = [lo]
        self.ends[j0:j1] = [hi]

    def remove(self, lo: int, hi: int) -> None:
        """Take [lo, hi) out of the set (keeping the parts of ranges outside it)."""
        if lo >= hi:
            return
        j0 = bisect_right(self.ends, lo)  # first range ending after lo
        j1 = bisect_left(self.starts, hi)  # first range starting at or after hi
        if j0 >= j1:
            return
        starts: list[int] = []
        ends: list[int] = []
        if self.starts[j0] < lo:
            starts.append(self.starts[j0])
            ends.append(lo)
        if self.ends[j1 - 1] > hi:
            starts.append(hi)
            ends.append(self.ends[j1 - 1])
        self.starts[j0:j1] = starts
        self.ends[j0:j1] = ends

    def __ior__(self, other: ByteRanges) -> ByteRanges:
        """Union in place (one merge of the two sorted lists)."""
        if not other.starts:
            return self
        if not self.starts:
            self.starts, self.ends = list(other.starts), list(other.ends)
            return self
        pairs = sorted(zip(self.starts + other.starts, self.ends + other.ends, strict=True))
        starts: list[int] = []
        ends: list[int] = []
        for s, e in pairs:
            if ends and s <= ends[-1]:
                if e > ends[-1]:
                    ends[-1] = e
            else:
                starts.append(s)
                ends.append(e)
        self.starts, self.ends = starts, ends
        return self
