"""Tracing ring maps into straight-line programs.

The maps of this package do all their arithmetic through :mod:`.ops` on lists of coefficients
with Python's ``+``, ``-``, ``*`` by an int constant and ``% q``. Running a map's ``forward`` or
``inverse`` on :class:`Sym` coefficients instead of ints therefore records, without changing the
map, the exact straight-line program it performs: a DAG of additions, subtractions, negations
and multiplications by constants over its inputs. Zero coefficients (the padding above p) stay
plain ints, so the trace skips the work on them.

This is the seam for generating C from the plan layer: :class:`nttgen.programs.ntru.TraceLowering`
lowers a trace to the DSL (one vocabulary op per node, constants as twisted pairs, negations
folded into signs, reductions placed by the interval analysis), running the trace of a DFT on
single coefficients over whole vectors of coefficient positions (see docs/design.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Coef = "Sym | int"


@dataclass
class Trace:
    """The nodes recorded by one traced run, in creation (= a valid evaluation) order."""

    q: int
    nodes: list[Sym] = field(default_factory=list)
    counter: itertools.count[int] = field(default_factory=itertools.count)

    def input(self, index: int) -> Sym:
        """A fresh input coefficient ``index``."""
        return Sym(self, "in", (), index)

    def counts(self) -> dict[str, int]:
        """Number of nodes per op."""
        out: dict[str, int] = {}
        for n in self.nodes:
            out[n.op] = out.get(n.op, 0) + 1
        return out

    def pruned(self, outputs: Sequence[Sym | int]) -> Trace:
        """The same trace without the nodes no output depends on (a map's outputs that a
        program does not need), in the same order; the nodes are shared."""
        needed = {o.id for o in outputs if isinstance(o, Sym)}
        for node in reversed(self.nodes):
            if node.id in needed:
                needed.add(node.id)
                needed.update(a.id for a in node.args if isinstance(a, Sym))
        return Trace(self.q, [n for n in self.nodes if n.id in needed], self.counter)

    def hoisted(self, start: int) -> Trace:
        """The same trace with each node from position ``start`` on moved up to just after
        its latest operand (in their order where several land at one place): a tail of
        nodes that a program adds after a map, e.g. one subtraction per output, then runs
        where its operands are made instead of keeping them all live until the end."""
        pos = {n.id: float(i) for i, n in enumerate(self.nodes[:start])}
        for i, n in enumerate(self.nodes[start:]):
            args = [pos[a.id] for a in n.args if isinstance(a, Sym)]
            pos[n.id] = max(args, default=-1.0) + (1 + i) / (len(self.nodes) + 1)
        order = sorted(self.nodes, key=lambda n: pos[n.id])
        return Trace(self.q, order, self.counter)

    def evaluate(self, inputs: Sequence[int], outputs: Sequence[Sym | int]) -> list[int]:
        """The outputs' values mod q when input i is ``inputs[i]`` (exact reference semantics
        of the trace, to check it against the map it came from)."""
        q = self.q
        val: dict[int, int] = {}

        def get(x: Sym | int) -> int:
            return x % q if isinstance(x, int) else val[x.id]

        for n in self.nodes:
            if n.op == "in":
                val[n.id] = inputs[int(n.const)] % q
            elif n.op == "add":
                val[n.id] = (get(n.args[0]) + get(n.args[1])) % q
            elif n.op == "sub":
                val[n.id] = (get(n.args[0]) - get(n.args[1])) % q
            elif n.op == "neg":
                val[n.id] = (-get(n.args[0])) % q
            elif n.op == "mulc":
                val[n.id] = get(n.args[0]) * int(n.const) % q
            else:  # pragma: no cover - Sym creates no other op
                raise AssertionError(n.op)
        return [get(x) for x in outputs]


class Sym:
    """A symbolic coefficient: an input or the result of one op on earlier coefficients."""

    __slots__ = ("args", "const", "id", "op", "trace")

    def __init__(
        self, trace: Trace, op: str, args: tuple[Sym | int, ...], const: int | None = None
    ) -> None:
        self.trace, self.op, self.args, self.const = trace, op, args, const
        self.id = next(trace.counter)
        trace.nodes.append(self)

    def _zero(self, x: object) -> bool:
        return isinstance(x, int) and x % self.trace.q == 0

    def __add__(self, other: Sym | int) -> Sym:
        if self._zero(other):
            return self
        return Sym(self.trace, "add", (self, other))

    __radd__ = __add__

    def __sub__(self, other: Sym | int) -> Sym:
        if self._zero(other):
            return self
        return Sym(self.trace, "sub", (self, other))

    def __rsub__(self, other: Sym | int) -> Sym:
        if self._zero(other):
            return Sym(self.trace, "neg", (self,))
        return Sym(self.trace, "sub", (other, self))

    def __neg__(self) -> Sym:
        return Sym(self.trace, "neg", (self,))

    def __mul__(self, c: int) -> Sym | int:
        if not isinstance(c, int):
            raise TypeError("a traced map may multiply coefficients by int constants only")
        c %= self.trace.q
        if c == 0:
            return 0
        if c == 1:
            return self
        if c == self.trace.q - 1:
            return Sym(self.trace, "neg", (self,))
        return Sym(self.trace, "mulc", (self,), c)

    __rmul__ = __mul__

    def __mod__(self, q: int) -> Sym:
        # values stay exact residues in the trace; where to reduce is the analysis' decision
        return self


def trace_map(
    fn: Callable[[list[Sym]], Sequence[Sequence[Sym | int]]], q: int, n: int
) -> tuple[Trace, list[list[Sym | int]]]:
    """Run ``fn`` (e.g. a map's ``forward``) on n symbolic inputs; return the trace and the
    outputs (lists of Sym or int zeros)."""
    t = Trace(q)
    xs = [t.input(i) for i in range(n)]
    outs = [list(part) for part in fn(xs)]
    return t, outs
