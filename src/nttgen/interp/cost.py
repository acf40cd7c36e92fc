"""The op counter: how many vocabulary ops, loads and stores one call executes.

Counts are of vector ops (one per L lanes), multiplied by loop trip counts and including the
kernels a function calls. ``reductions`` counts coefficient reductions (Barrett reductions times
lanes), the figure Seiler 2018 §3.4 reports (e.g. 768 for Kyber's forward NTT).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from ..dsl.ir import (
    Affine,
    Buffer,
    Call,
    CallEach,
    Count,
    Function,
    LoopVar,
    Memory,
    ScalarParam,
    Var,
)
from ..dsl.replay import replay
from ..dsl.vocab import VOCABULARY


class CostCounter:
    """Counts executed ops of one function for given scalar arguments."""

    def __init__(self, fn: Function, scalars: Mapping[str, int]) -> None:
        self.fn = fn
        self.scalars = dict(scalars)
        self.weight = 1
        self.counts: Counter[str] = Counter()
        self.runtime: dict[LoopVar, int] = {}

    def __getattr__(self, op: str) -> Callable[..., object]:
        if op not in VOCABULARY:
            raise AttributeError(op)

        def count(*args: object, **attrs: int) -> object:
            del args, attrs
            self.counts[op] += self.weight
            if op in ("barrett", "barrett_coarse"):
                self.counts["reductions"] += self.weight * self.fn.lanes
            return (None, None) if VOCABULARY[op].results == 2 else None

        return count

    def load(
        self,
        src: Memory,
        index: Affine,
        *,
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> None:
        """A vector load (or a broadcast of one element, or a gather: counted apart)."""
        del src, index, broadcast
        self.counts["load" if lanes_at is None else "gather"] += self.weight

    def store(
        self, dst: Buffer, index: Affine, value: object, *, lanes_at: tuple[int, ...] | None = None
    ) -> None:
        """A vector store (or a scatter: counted apart)."""
        del dst, index, value
        self.counts["store" if lanes_at is None else "scatter"] += self.weight

    def loop(
        self, var: LoopVar, count: Count, run_body: Callable[[], None], *, unroll: bool = False
    ) -> None:
        """Weight the body by the trip count: a static count's, or a runtime count's for
        the given scalars, run trip by trip (a group's remainder depends on the trip of the
        loop around it)."""
        del unroll
        if count.static:
            if count.const <= 0:
                return
            self.weight *= count.const
            run_body()
            self.weight //= count.const
            return
        assert count.param is not None
        for trip in range(count.trips(self.scalars[count.param.name], self.runtime)):
            self.runtime[var] = trip
            run_body()
        self.runtime.pop(var, None)

    def var_def(self, var: Var, init: object) -> None:
        """Registers cost nothing."""

    def var_set(self, var: Var, value: object) -> None:
        """Registers cost nothing."""

    def var_get(self, var: Var) -> None:
        """Registers cost nothing."""

    def call(self, stmt: Call) -> None:
        """Add the callee's counts."""
        sub = count_ops(stmt.callee, self.scalars)
        for k, v in sub.items():
            self.counts[k] += v * self.weight

    def call_each(self, stmt: CallEach) -> None:
        """Add each call's counts."""
        for callee, _, _ in stmt.groups(self.scalars[stmt.count.name]):
            for k, v in count_ops(callee, self.scalars).items():
                self.counts[k] += v * self.weight


def count_ops(fn: Function, scalars: Mapping[str, int] | None = None) -> Counter[str]:
    """Executed op counts of one call of ``fn`` (``scalars`` gives runtime counts such as k)."""
    c = CostCounter(fn, scalars or {})
    replay(fn, c)
    for t in fn.tables:
        if t.in_frame:  # the copy into the frame on entry, a vector at a time
            c.counts["load"] += len(t.values) // fn.lanes
            c.counts["store"] += len(t.values) // fn.lanes
    return c.counts


def total_ops(counts: Counter[str]) -> int:
    """All executed vector ops, loads and stores included; broadcast constants are not counted
    (compilers hoist them out of loops) and ``reductions`` is a separate figure."""
    return sum(v for k, v in counts.items() if k not in ("reductions", "const"))


# (multiplies, other vector ALU ops) one vocabulary op costs on a SIMD machine with 16-bit
# lanes (AVX2: montmul = vpmullw, vpmulhw, vpmulhw, vpsubw). Used only to rank variants of one
# kernel against each other, so the ratios matter, not the absolute figures.
OP_WEIGHTS: dict[str, tuple[int, int]] = {
    "add": (0, 1),
    "sub": (0, 1),
    "mullo": (1, 0),
    "mulhi": (1, 0),
    "sra": (0, 1),
    "montmul": (3, 1),
    "montmul_var": (4, 1),
    "montmul_twist": (3, 1),
    "shoupmul": (3, 1),
    "barrett": (2, 2),
    # vpmulhrsw, vpmullw, vpsubw (32-bit lanes: vpaddd, vpsrad, vpmulld, vpsubd, where barrett
    # takes a high product of two vpmuldq: cheaper either way, which is all the ranking reads)
    "barrett_coarse": (2, 1),
    "cond_add_q": (0, 3),
    "shuffle": (0, 4),
    "zip": (0, 3),
    # vpunpck{l,h}wd of each pair (shared between the sums that reuse a pair), two vpmaddwd
    "madd": (2, 2),
    "addw": (0, 2),
    # vpmuldq of the even lanes, of the odd lanes after a vpshufd each (32-bit lanes)
    "mulw": (2, 2),
    "mredw": (4, 5),
    # vpmaddwd; vpaddd; 2 vpmullw and 2 vpmaddwd, 2 vpsubd, a shift and a blend; vpshufb;
    # vpblendw
    "pair_madd": (1, 0),
    "pair_add": (0, 1),
    "pair_mred": (4, 4),
    "pair_swap": (0, 1),
    "pair_blend": (0, 1),
}
MULTIPLY_PORTS = 2
VECTOR_PORTS = 4


def estimated_cycles(counts: Counter[str]) -> float:
    """A throughput estimate of one call from its op counts: the larger of the multiplier
    bound and the vector-ALU bound (multiplies run on MULTIPLY_PORTS of the VECTOR_PORTS
    pipes, as on Zen 4/5 and recent Intel cores). Loads, stores and constants are left out."""
    mul = sum(OP_WEIGHTS[k][0] * v for k, v in counts.items() if k in OP_WEIGHTS)
    alu = sum(OP_WEIGHTS[k][1] * v for k, v in counts.items() if k in OP_WEIGHTS)
    return max(mul / MULTIPLY_PORTS, (mul + alu) / VECTOR_PORTS)


def vector_uops(counts: Counter[str]) -> int:
    """Every multiply and vector ALU uop of :data:`OP_WEIGHTS` (loads, stores and constants
    left out): what one call asks of the vector pipes, whichever bound binds."""
    return sum(sum(OP_WEIGHTS[k]) * v for k, v in counts.items() if k in OP_WEIGHTS)


Rank = tuple[float, int, int, int]


def rank(fn: Function, k: int = 3) -> Rank:
    """How variants of one kernel are ranked against each other, cheapest first: estimated
    cycles, then coefficient reductions, then vector uops (a variant that saves ALU work off
    the binding bound still saves it), then all ops; a size parameter counts as ``k``."""
    scalars = {p.name: k for p in fn.params if isinstance(p, ScalarParam)}
    counts = count_ops(fn, scalars)
    return (
        estimated_cycles(counts),
        counts.get("reductions", 0),
        vector_uops(counts),
        total_ops(counts),
    )
