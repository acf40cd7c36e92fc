"""Lazy reduction, decided by the interval analysis.

The policy: a value is reduced only at the moment an op that consumes it could otherwise
overflow its lane, or when an output contract needs it, and then the operand with the widest
range is reduced first (one Barrett reduction per value serves all of its later uses). This is
"as late as possible": on a chain where each step adds a bounded amount and a reduction resets
the range, it yields the fewest reductions. The analysis tracks per-lane ranges, so the same
rule gives different, tight schedules for each prime and each lane layout.
"""

from __future__ import annotations

from ..dsl.builder import Builder
from ..dsl.ir import Value
from ..errors import BoundsError
from ..interp import transfer


class Reducer:
    """Applies the lazy policy inside one program; remembers which values are already reduced."""

    def __init__(self, S: Builder, threshold: int | None = None) -> None:
        self.S = S
        self.reduced: set[int] = set()
        self.coarsely_reduced: set[int] = set()
        self.threshold = threshold

    def reduce(self, x: Value) -> Value:
        """Reduce x: by ``barrett_coarse`` where the builder allows it
        (``S.coarse_reductions``) and x is not its result already, else by ``barrett``
        (marking the result as reduced, so that the policy never reduces it again)."""
        if self._may_coarsen(x):
            r = self.S.barrett_coarse(x, hint="red")
            self.coarsely_reduced.add(r.id)
            return r
        return self.reduce_exactly(x)

    def within(self, x: Value, limit: int) -> Value:
        """x if every lane of it lies within [-limit, limit], else x reduced (:meth:`reduce`)."""
        return x if self.S.bound(x).magnitude <= limit else self.reduce(x)

    def for_sums(self, xs: list[Value], n: int, worst: int) -> list[Value]:
        """``xs`` with each value reduced whose n products by factors within ``worst`` could
        sum beyond the double-width lane (the exact sums of ``madd``/``pair_madd``)."""
        return [self.within(x, self.S.lane.wide.max // (n * worst)) for x in xs]

    def _may_coarsen(self, x: Value) -> bool:
        """Whether :meth:`reduce` takes ``barrett_coarse`` for x: where the builder allows it,
        the prime has one, x is not its result already and x leaves room for its rounding."""
        S = self.S
        return (
            S.coarse_reductions
            and S.arith.coarse_usable
            and x.id not in self.coarsely_reduced
            and S.bound(x).magnitude <= S.arith.coarse_room
        )

    def _coarse_fits(self, x: Value, target: tuple[int, int]) -> bool:
        """Whether ``reduce`` would take the coarse reduction for x and its result would lie
        in ``target`` (the range of every lane, before emitting it)."""
        S = self.S
        if not self._may_coarsen(x):
            return False
        b = S.bound(x)
        for lo, hi in zip(b.lo, b.hi, strict=True):
            r = transfer.barrett_coarse((lo, hi), S.arith)
            if r[0] < target[0] or r[1] > target[1]:
                return False
        return True

    def reduce_exactly(self, x: Value) -> Value:
        """Barrett-reduce x to about [-q/2, q/2] (marking the result as reduced)."""
        r = self.S.barrett(x, hint="red")
        self.reduced.add(r.id)
        return r

    def _fits_sum_and_diff(self, a: Value, b: Value, need_sum: bool, need_diff: bool) -> bool:
        S = self.S
        ba, bb = S.bound(a), S.bound(b)
        for k in range(S.lanes):
            x, y = (ba.lo[k], ba.hi[k]), (bb.lo[k], bb.hi[k])
            if need_sum and not S.lane.fits(*transfer.add(x, y)):
                return False
            if need_diff and not S.lane.fits(*transfer.sub(x, y)):
                return False
        return True

    def make_room(
        self, a: Value, b: Value, *, need_sum: bool = True, need_diff: bool = True
    ) -> tuple[Value, Value]:
        """Return (a', b') congruent to (a, b) such that a'+b' and/or a'-b' cannot overflow,
        reducing the wider operand first and only as much as needed. With a ``threshold``,
        an operand wider than it is reduced first even if the op would fit (a variant the
        generator tries: reducing a little earlier can save reductions later)."""
        if self.threshold is not None:
            if a.id not in self.reduced and self.S.bound(a).magnitude > self.threshold:
                a = self.reduce(a)
            if b.id not in self.reduced and self.S.bound(b).magnitude > self.threshold:
                b = self.reduce(b)
        while not self._fits_sum_and_diff(a, b, need_sum, need_diff):
            cands = [
                (self.S.bound(v).magnitude, i)
                for i, v in enumerate((a, b))
                if v.id not in self.reduced
            ]
            if not cands:
                raise BoundsError(
                    f"{self.S.fn.name} ({self.S._tag}): even reduced operands in "
                    f"{self.S.bound(a)} and {self.S.bound(b)} overflow a {self.S.lane.bits}-bit "
                    "sum; q is too large for these lanes"
                )
            _, i = max(cands)
            if i == 0:
                a = self.reduce(a)
            else:
                b = self.reduce(b)
        return a, b

    def fit_to(self, x: Value, target: tuple[int, int]) -> Value:
        """Reduce x if its range is not inside ``target``; fail if even then it is not."""
        if self.S.bound(x).within(*target):
            return x
        r = self.reduce(x) if self._coarse_fits(x, target) else self.reduce_exactly(x)
        if not self.S.bound(r).within(*target):
            raise BoundsError(
                f"{self.S.fn.name} ({self.S._tag}): a reduced value in {self.S.bound(r)} does "
                f"not fit the required range [{target[0]}, {target[1]}]"
            )
        return r

    def fit_for_product(self, x: Value) -> Value:
        """Reduce x if the Montgomery product of two values in x's range could overflow
        (the contract an NTT output owes to base multiplication)."""
        S = self.S
        m = S.bound(x).magnitude
        r = transfer.montmul_var((-m, m), (-m, m), S.arith)
        if S.lane.fits(*r) or x.id in self.reduced:
            return x
        return self.reduce(x)
