"""The Schönhage level of the Schönhage pipelines: a graph of whole blocks, lowered in levels.

Lanes hold coefficient positions here. A block is M/L vectors of consecutive coefficients of
Z_q[x]/(x^M + 1), and Schönhage's map (``plan.maps.schoenhage``) acts on whole blocks: sums,
differences, products by field constants and its twiddles, which are powers of x: negacyclic
*shifts* of a block. A shift by s moves coefficients across vectors and negates the ones that
wrap, so a block that is read shifted is kept in memory as [B | -B] (2M entries) and x^s B is
read as the window starting at (-s) mod 2M: one unaligned load per vector, a public offset.

The map's block operations are recorded as a graph (:class:`BlockGraph`, the carrier of the
block algebra ``plan.maps.blocks`` on which the algorithms of ``plan.maps.dft`` and
``plan.maps.schoenhage`` run: ``forward_blocks``, ``inverse_blocks``) and lowered in *levels*
(:func:`lower_blocks`): an operation joins the loop over chunks of its operands when it reads
them unshifted, and starts a new loop (its operands through memory) when it reads one
shifted. The stages that use it, and the pipelines, are in :mod:`.ntru_shift`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, LoopVar
from .lazy import Reducer
from .ntru_lowering import Signed, TraceLowering, negate, signed_sum


@dataclass(eq=False)
class BNode:
    """A block of the Schönhage level: an input (stored as [B | -B]) or one operation."""

    op: str  # "in", "add", "sub", "mulc", "out"
    args: tuple[Ref, ...]
    length: int
    const: int = 0
    buf: Buffer | None = None
    base: Affine | int = 0
    level: int = -1
    sign: int = 1
    stored: bool = False
    negated: bool = False
    readers: list[tuple[BNode, int]] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Ref:
    """sign * x^shift * node (shift mod 2M)."""

    node: BNode
    shift: int
    sign: int


MaybeRef = Ref | None  # None: the zero block


class BlockGraph:
    """Symbolic blocks of M coefficients in Z_q[x]/(x^M + 1) and the operations on them: the
    carrier of :class:`~nttgen.plan.maps.blocks.BlockAlgebra` that records a graph (None is the
    zero block and is never operated on). A short block (degree < M/2) is kept embedded, so
    ``embed`` is free; a half block is a full block of which only the low M/2 coefficients
    count, so ``low`` is free, ``high`` a shift by -M/2, and ``half_add``/``half_sub`` are nodes
    of length M/2."""

    def __init__(self, M: int, q: int) -> None:
        self.M, self.q = M, q
        self.nodes: list[BNode] = []

    def _node(self, op: str, args: tuple[Ref, ...], length: int, const: int = 0) -> Ref:
        node = BNode(op, args, length, const)
        self.nodes.append(node)
        return Ref(node, 0, 1)

    def input(self, buf: Buffer, base: Affine | int) -> Ref:
        """A block stored as [B | -B] at ``buf[base:]``."""
        ref = self._node("in", (), self.M)
        ref.node.buf, ref.node.base = buf, base
        ref.node.stored = ref.node.negated = True
        return ref

    def shift(self, a: MaybeRef, s: int) -> MaybeRef:
        """x^s * a (free: a window of the stored [B | -B])."""
        if a is None:
            return None
        return Ref(a.node, (a.shift + s) % (2 * self.M), a.sign)

    def neg(self, a: MaybeRef) -> MaybeRef:
        """-a (free: a sign)."""
        return None if a is None else Ref(a.node, a.shift, -a.sign)

    def _add(self, a: MaybeRef, b: MaybeRef, length: int) -> MaybeRef:
        if a is None or b is None:
            return a if b is None else b
        return self._node("add", (a, b), length)

    def _sub(self, a: MaybeRef, b: MaybeRef, length: int) -> MaybeRef:
        if b is None:
            return a
        if a is None:
            return self.neg(b)
        return self._node("sub", (a, b), length)

    def add(self, a: MaybeRef, b: MaybeRef) -> MaybeRef:
        """a + b (a node over all M coefficients, also for short blocks)."""
        return self._add(a, b, self.M)

    def sub(self, a: MaybeRef, b: MaybeRef) -> MaybeRef:
        """a - b (a node over all M coefficients, also for short blocks)."""
        return self._sub(a, b, self.M)

    def half_add(self, a: MaybeRef, b: MaybeRef) -> MaybeRef:
        """a + b over the first M/2 coefficients (the overlap-add's half blocks)."""
        return self._add(a, b, self.M // 2)

    def half_sub(self, a: MaybeRef, b: MaybeRef) -> MaybeRef:
        """a - b over the first M/2 coefficients."""
        return self._sub(a, b, self.M // 2)

    def mulc(self, a: MaybeRef, c: int) -> MaybeRef:
        """c * a for a constant c of Z_q (free for c = 0, 1, -1), over as many coefficients as
        a's node has (all M but for a half block)."""
        c %= self.q
        if a is None or c == 0:
            return None
        if c == 1:
            return a
        if c == self.q - 1:
            return self.neg(a)
        return self._node("mulc", (a,), a.node.length, c)

    def scale(self, a: MaybeRef, c: int) -> MaybeRef:
        """c * a for a normalisation constant: a :meth:`mulc` (the programs run the
        unnormalised maps and never record one)."""
        return self.mulc(a, c)

    def embed(self, a: MaybeRef) -> MaybeRef:
        """a itself: short blocks are input blocks, already stored zero above M/2."""
        return a

    def low(self, a: MaybeRef) -> MaybeRef:
        """a itself: a node of length M/2 reads the first M/2 coefficients of its operands."""
        return a

    def high(self, a: MaybeRef) -> MaybeRef:
        """x^(-M/2) a, whose first M/2 coefficients are coefficients M/2 .. M-1 of a."""
        return self.shift(a, -(self.M // 2))

    def output(self, a: MaybeRef, buf: Buffer, base: int, length: int | None = None) -> None:
        """Write a (or zeros) to ``buf[base:base + length]``."""
        ref = self._node("out", () if a is None else (a,), length or self.M)
        ref.node.buf, ref.node.base = buf, base

    def evaluate(self, inputs: Sequence[Sequence[int]]) -> list[list[int]]:
        """The exact semantics of the graph, to check it against the algorithms' integer runs:
        with ``inputs[i]`` the M coefficients of the i-th :meth:`input` block, the values mod q
        that the outputs write, in the order of the :meth:`output` calls (``length``
        coefficients each). A node of length l < M defines only its first l coefficients and
        is read unshifted (raises AssertionError otherwise)."""
        M, q = self.M, self.q
        vals: dict[int, list[int]] = {}
        ins = iter(inputs)

        def read(ref: Ref, length: int) -> list[int]:
            v, s = vals[id(ref.node)], ref.shift % (2 * M)
            if len(v) < M:
                assert s == 0 and length <= len(v), "a half block read shifted or too long"
                return [ref.sign * x % q for x in v[:length]]
            out = [0] * M
            for i, x in enumerate(v):  # x^s x^i: position (i + s) mod M, negated per wrap
                j = i + s
                out[j % M] = (-1 if (j // M) % 2 else 1) * ref.sign * x % q
            return out[:length]

        outs: list[list[int]] = []
        for node in self.nodes:
            n = node.length
            if node.op == "in":
                vals[id(node)] = [x % q for x in next(ins)]
            elif node.op in ("add", "sub"):
                u, v = (read(r, n) for r in node.args)
                sign = 1 if node.op == "add" else -1
                vals[id(node)] = [(x + sign * y) % q for x, y in zip(u, v, strict=True)]
            elif node.op == "mulc":
                vals[id(node)] = [x * node.const % q for x in read(node.args[0], n)]
            else:  # out
                outs.append(read(node.args[0], n) if node.args else [0] * n)
        return outs


# --------------------------------------------------------------------------- lowering
def lower_blocks(S: Builder, g: BlockGraph, red: Reducer, lower: TraceLowering) -> None:
    """Emit the live nodes of ``g`` (those an output needs) as loops over chunks of L
    coefficients, level by level (see the module docstring); blocks read from memory get
    scratch arrays, reused once their last reader's loop is emitted."""
    M, L = g.M, S.lanes
    live: set[int] = set()
    for node in reversed(g.nodes):
        if node.op == "out" or id(node) in live:
            for a in node.args:
                live.add(id(a.node))
    nodes = [x for x in g.nodes if x.op == "out" or id(x) in live]

    def offset(ref: Ref) -> tuple[int, int]:
        """(window start in [B | -B], sign) of reading x^shift B."""
        o, sign = (-ref.shift) % (2 * M), ref.sign
        if o >= M:
            o, sign = o - M, -sign
        return o, sign

    def in_register(ref: Ref, node: BNode) -> bool:
        a = ref.node
        return a.op != "in" and a.length == node.length and offset(ref) == (0, ref.sign)

    for node in nodes:
        if node.op == "in":
            continue
        node.level = 0
        for ref in node.args:
            step = 0 if in_register(ref, node) else 1
            node.level = max(node.level, ref.node.level + step)
        for ref in node.args:
            a = ref.node
            if a.level < node.level:
                a.stored = True
                o, _ = offset(ref)
                a.negated = a.negated or o + node.length > M
                a.readers.append((node, node.level))
    groups: dict[tuple[int, int], list[BNode]] = {}
    for node in nodes:
        if node.op != "in":
            groups.setdefault((node.level, -node.length), []).append(node)
    order = sorted(groups)
    last_read = {
        id(x): max((order.index((lv, -r.length)) for r, lv in x.readers), default=-1) for x in nodes
    }
    pool: dict[int, list[Buffer]] = {}
    release: dict[int, list[BNode]] = {}
    count = 0
    for gi, key in enumerate(order):
        group = groups[key]
        for node in group:
            if node.stored and node.op != "out":
                size = 2 * M if node.negated else M
                free = pool.setdefault(size, [])
                if free:
                    node.buf = free.pop()
                else:
                    node.buf = S.local(f"blk{count}", size)
                    count += 1
                node.base = 0
                release.setdefault(last_read[id(node)], []).append(node)
        length = -key[1]

        def body(v: LoopVar, group: list[BNode] = group) -> None:
            c0 = Affine.of(v) * L
            env: dict[int, Signed] = {}

            def read(ref: Ref, node: BNode) -> Signed:
                a = ref.node
                if a.level == node.level and a.op != "in":
                    val, s = env[id(a)]
                    return val, s * ref.sign
                o, sign = offset(ref)
                assert a.buf is not None
                val = S.load(a.buf, Affine.of(a.base) + c0 + o, hint="b")
                return val, sign * a.sign

            for node in group:
                vals = [read(r, node) for r in node.args]
                res: Signed
                if node.op == "mulc":
                    (v1, s1), c = vals[0], node.const
                    res = (lower.multiply(v1, s1 * c), 1)
                elif node.op in ("add", "sub"):
                    res = signed_sum(S, red, vals[0], vals[1], node.op == "sub")[0]
                else:  # out
                    assert node.buf is not None
                    val = S.const(0, hint="zero") if not vals else negate(S, red, vals[0])
                    S.store(node.buf, Affine.of(node.base) + c0, val)
                    continue
                env[id(node)] = res
                node.sign = res[1]
                if node.stored:
                    assert node.buf is not None
                    S.store(node.buf, Affine.of(node.base) + c0, res[0])
                    if node.negated:
                        S.store(
                            node.buf, Affine.of(node.base) + c0 + M, negate(S, red, (res[0], -1))
                        )

        S.loop(length // L, body, hint="col")
        for node in release.pop(gi, []):
            assert node.buf is not None
            pool.setdefault(node.buf.length, []).append(node.buf)
