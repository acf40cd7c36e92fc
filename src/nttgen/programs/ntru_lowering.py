"""Traces lowered onto the builder: signed values, sums of them, products by constants.

A traced map (``plan.maps.trace``) is straight-line code of additions, subtractions, negations
and products by constants. :class:`TraceLowering` turns each node into one vocabulary op, with
the negations not performed but carried as a sign on each value (:data:`Signed`) that later
ops absorb (:func:`signed_sum`; :func:`negate` where a value must be stored as itself), and
reductions where the interval analysis needs them. The constants are broadcast once per
function, as pairs for ``mulconst`` (or exact small constants for ``mullo``);
:func:`twisted_tables` makes tables of such pairs, one per lane. Shared by the DFT stages of
the Good–Rader pipeline (:mod:`.ntru_dft`, :mod:`.ntru_lines`, :mod:`.ntru_ternary`) and the
piece maps of the Schönhage pipelines (:mod:`.ntru_shift`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Value
from ..plan.maps.trace import Sym, Trace
from .lazy import Reducer

Signed = tuple[Value, int]
"""A lowered traced value: (vector, sign), standing for sign * vector."""


class TraceLowering:
    """Lowers a trace onto the builder: one vocabulary op per traced addition, subtraction or
    product by a constant, negations folded into signs, reductions where the analysis needs
    them. Constants are broadcast once per function."""

    def __init__(self, S: Builder, red: Reducer) -> None:
        self.S, self.red = S, red
        self._consts: dict[int, tuple[Value, Value]] = {}
        self._small: dict[int, Value] = {}

    def constant(self, c: int) -> tuple[Value, Value]:
        """The broadcast pair that multiplies by c (mod q) with ``mulconst``."""
        c %= self.S.arith.q
        if c not in self._consts:
            z, zq = self.S.arith.twisted(c)
            self._consts[c] = (self.S.const(z, hint="w"), self.S.const(zq, hint="wq"))
        return self._consts[c]

    def small_constant(self, c: int) -> Value:
        """The broadcast c (centred, |c| <= q/2) that ``mullo`` multiplies by exactly."""
        if c not in self._small:
            self._small[c] = self.S.const(c, hint="c")
        return self._small[c]

    def preload(self, trace: Trace) -> None:
        """Broadcast every constant the trace may multiply by (either sign, both forms), so
        that a trace lowered inside a loop body finds them made before the loop; the
        unused ones are dead code, which the builder drops."""
        q = self.S.arith.q
        for node in trace.nodes:
            if node.op == "mulc":
                for c in (int(node.const or 0), -int(node.const or 0)):
                    self.constant(c)
                    centred = c % q - q if c % q > q // 2 else c % q
                    self.small_constant(centred)

    def exact_product(self, v: Value, c: int) -> Value | None:
        """v * c as one ``mullo`` by c's centred representative, where the interval analysis
        proves the product is at most q in magnitude (below the bound of a Montgomery product,
        so nothing later needs a reduction it would not have needed anyway); None otherwise.
        Measured by count (sntrup761, AVX2): the small operand's transform then does 55 of
        its 351 products this way and 14 fewer reductions; a looser limit (8,000) converts 18
        more products but costs 30 more reductions. Only the small operand's transform
        (coefficients in [-1, 1]) has such products."""
        S = self.S
        q = S.arith.q
        c %= q
        if c > q // 2:
            c -= q
        if S.bound(v).magnitude * abs(c) > q:
            return None
        return S.mullo(v, self.small_constant(c), hint="t")

    def multiply(self, v: Value, c: int) -> Value:
        """v * c mod q: an exact ``mullo`` where :meth:`exact_product` allows it, else a
        product by the constant's broadcast pair."""
        exact = self.exact_product(v, c)
        if exact is not None:
            return exact
        z, zq = self.constant(c)
        return self.S.mulconst(v, z, zq, hint="t")

    def run(
        self,
        trace: Trace,
        inputs: Callable[[int], Signed],
        outputs: Sequence[Sym | int],
    ) -> list[Signed | None]:
        """Lower every node; ``inputs(i)`` gives input i. Returns each output as (value,
        sign), or None for an output that is identically zero."""
        S, red = self.S, self.red
        env: dict[int, Signed] = {}

        def arg(x: Sym | int) -> tuple[int, Signed]:
            if isinstance(x, int):  # pragma: no cover - the maps only add traced values
                raise AssertionError("a traced op with a constant operand")
            return x.id, env[x.id]

        for node in trace.nodes:
            if node.op == "in":
                env[node.id] = inputs(int(node.const or 0))
            elif node.op == "neg":
                v, s = arg(node.args[0])[1]
                env[node.id] = (v, -s)
            elif node.op == "mulc":
                v, s = arg(node.args[0])[1]
                env[node.id] = (self.multiply(v, s * int(node.const or 0)), 1)
            else:
                (ia, a), (ib, b) = arg(node.args[0]), arg(node.args[1])
                env[node.id], (va, vb) = signed_sum(S, red, a, b, node.op == "sub")
                # later readers of the operands reuse their reductions
                env[ia], env[ib] = (va, a[1]), (vb, b[1])
        return [None if isinstance(o, int) else env[o.id] for o in outputs]


def signed_sum(
    S: Builder, red: Reducer, a: Signed, b: Signed, subtract: bool
) -> tuple[Signed, tuple[Value, Value]]:
    """a + b (or a - b) of signed values as one addition or subtraction, reducing first where
    the analysis needs room. Returns the result (its sign is the operands' where they agree,
    else +1) and the operands' vectors as they were used (reduced or not)."""
    (va, sa), (vb, sb) = a, b
    if subtract:
        sb = -sb
    same = sa == sb
    va, vb = red.make_room(va, vb, need_sum=same, need_diff=not same)
    if same:
        return (S.add(va, vb), sa), (va, vb)
    if sa > 0:
        return (S.sub(va, vb), 1), (va, vb)
    return (S.sub(vb, va), 1), (va, vb)


def negate(S: Builder, red: Reducer, x: Signed) -> Value:
    """The value of a signed pair as one vector (0 - v where the sign is negative)."""
    v, s = x
    if s > 0:
        return v
    zero = S.const(0, hint="zero")
    _, v = red.make_room(zero, v, need_sum=False)
    return S.sub(zero, v, hint="neg")


def twisted_tables(
    S: Builder, name: str, values: list[int], doc: str, repeat: int = 1, in_frame: bool = False
) -> Callable[[Affine], tuple[Value, Value]]:
    """Tables ``name`` and ``name``q of the twisted pairs of ``values`` (the multipliers and
    their quotients, each value ``repeat`` times in a row, both copied into the frame if
    ``in_frame``); returns their loader: entry k0 onwards of both, one vector each."""
    pairs = [S.arith.twisted(x) for x in values for _ in range(repeat)]
    z = S.table(name, [z for z, _ in pairs], doc=f"{doc} (multiplier)", in_frame=in_frame)
    zq = S.table(name + "q", [zq for _, zq in pairs], doc=f"{doc} (quotient)", in_frame=in_frame)
    return lambda k0: (S.load(z, k0, hint=name), S.load(zq, k0, hint=name + "q"))
