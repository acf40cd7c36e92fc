"""The Schönhage level of the Schönhage pipelines: a graph of whole blocks, lowered in levels.

Lanes hold coefficient positions here. A block is M/L vectors of consecutive coefficients of
Z_q[x]/(x^M + 1), and Schönhage's map (``plan.maps.schoenhage``) acts on whole blocks: sums,
differences, products by field constants and its twiddles, which are powers of x: negacyclic
*shifts* of a block. A shift by s moves coefficients across vectors and negates the ones that
wrap, so a block that is read shifted is kept in memory as [B | -B] (2M entries) and x^s B is
read as the window starting at (-s) mod 2M: one unaligned load per vector, a public offset.

The map's block operations are recorded as a graph (:class:`BlockGraph`, running the
algorithms of ``plan.maps.dft`` and ``plan.maps.schoenhage`` on symbolic blocks:
:func:`schoenhage_forward`, :func:`schoenhage_inverse`) and lowered in *levels*
(:func:`lower_blocks`): an operation joins the loop over chunks of its operands when it reads
them unshifted, and starts a new loop (its operands through memory) when it reads one
shifted. The stages that use it, and the pipelines, are in :mod:`.ntru_shift`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, LoopVar
from ..plan.maps.base import RingMap
from ..plan.maps.dft import BlockDFT, DirectDFT, FieldAction, Radix2DFT, Radix3DFT, ShiftAction
from ..plan.maps.schoenhage import SchoenhageMap, TruncatedSchoenhageMap
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
    """Symbolic blocks of M coefficients in Z_q[x]/(x^M + 1) and the operations on them (None
    is the zero block and is never operated on)."""

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
        """x^s * a."""
        if a is None:
            return None
        return Ref(a.node, (a.shift + s) % (2 * self.M), a.sign)

    def neg(self, a: MaybeRef) -> MaybeRef:
        """-a."""
        return None if a is None else Ref(a.node, a.shift, -a.sign)

    def add(self, a: MaybeRef, b: MaybeRef, length: int | None = None) -> MaybeRef:
        """a + b (over the first ``length`` coefficients: the overlap-add's half blocks)."""
        if a is None or b is None:
            return a if b is None else b
        return self._node("add", (a, b), length or self.M)

    def sub(self, a: MaybeRef, b: MaybeRef, length: int | None = None) -> MaybeRef:
        """a - b."""
        if b is None:
            return a
        if a is None:
            return self.neg(b)
        return self._node("sub", (a, b), length or self.M)

    def mulc(self, a: MaybeRef, c: int) -> MaybeRef:
        """c * a for a constant c of Z_q."""
        c %= self.q
        if a is None or c == 0:
            return None
        if c == 1:
            return a
        if c == self.q - 1:
            return self.neg(a)
        return self._node("mulc", (a,), self.M, c)

    def output(self, a: MaybeRef, buf: Buffer, base: int, length: int | None = None) -> None:
        """Write a (or zeros) to ``buf[base:base + length]``."""
        ref = self._node("out", () if a is None else (a,), length or self.M)
        ref.node.buf, ref.node.base = buf, base

    # -- the algorithms of plan.maps on blocks ----------------------------------------------
    def dft(self, dft: BlockDFT, line: Sequence[MaybeRef], inverse: bool) -> list[MaybeRef]:
        """``dft.apply`` (:mod:`nttgen.plan.maps.dft`) on symbolic blocks."""
        if isinstance(dft, Radix2DFT):
            return self._radix2(dft, list(line), inverse)
        act = getattr(dft, "action", None)
        if not isinstance(act, FieldAction):  # pragma: no cover - the plans use no other
            raise NotImplementedError(f"{type(dft).__name__} on blocks")
        if isinstance(dft, Radix3DFT):
            a0, a1, a2 = line
            t = self.mulc(self.sub(a1, a2), act.powers[2 if inverse else 1])
            return [
                self.add(self.add(a0, a1), a2),
                self.add(self.sub(a0, a2), t),
                self.sub(self.sub(a0, a1), t),
            ]
        if isinstance(dft, DirectDFT):
            n, out = dft.n, []
            for k in range(n):
                acc = line[0]
                for j in range(1, n):
                    e = (-dft.exponents[k][j]) % n if inverse else dft.exponents[k][j]
                    acc = self.add(acc, self.mulc(line[j], act.powers[e]))
                out.append(acc)
            return out
        raise NotImplementedError(f"{type(dft).__name__} on blocks")  # pragma: no cover

    def _radix2(self, dft: Radix2DFT, a: list[MaybeRef], inverse: bool) -> list[MaybeRef]:
        act, n = dft.action, dft.n
        assert isinstance(act, ShiftAction)
        if not inverse:
            for half, exps in dft.stages:
                for s in range(0, n, 2 * half):
                    for j in range(half):
                        u, v = a[s + j], a[s + j + half]
                        a[s + j] = self.add(u, v)
                        a[s + j + half] = self.shift(self.sub(u, v), act.shift_amount(exps[j]))
            return [a[dft.bitrev[k]] for k in range(n)]
        a = [a[dft.bitrev[i]] for i in range(n)]
        for half, exps in reversed(dft.stages):
            for s in range(0, n, 2 * half):
                for j in range(half):
                    u = a[s + j]
                    v = self.shift(a[s + j + half], act.shift_amount(-exps[j]))
                    a[s + j] = self.add(u, v)
                    a[s + j + half] = self.sub(u, v)
        return a

    def axes(
        self, arr: list[MaybeRef], shape: Sequence[int], dfts: Sequence[BlockDFT], inverse: bool
    ) -> list[MaybeRef]:
        """``plan.maps.dft.apply_axes`` on symbolic blocks."""
        out = list(arr)
        order = range(len(shape) - 1, -1, -1) if inverse else range(len(shape))
        for d in order:
            stride = 1
            for x in shape[d + 1 :]:
                stride *= x
            n = shape[d]
            for base in range(len(out)):
                if (base // stride) % n:
                    continue
                idx = [base + i * stride for i in range(n)]
                res = self.dft(dfts[d], [out[i] for i in idx], inverse)
                for i, b in zip(idx, res, strict=True):
                    out[i] = b
        return out


def schoenhage_forward(g: BlockGraph, root: RingMap, blocks: list[MaybeRef]) -> list[MaybeRef]:
    """The forward of Schönhage's map (``root``) on the embedded input blocks (block j: the
    m coefficients j*m .. j*m + m - 1, zero above m; None where zero). Returns the n pieces."""
    if isinstance(root, TruncatedSchoenhageMap):
        ell, h = root.l, root.l // 2
        blk = blocks + [None] * (3 * h - len(blocks))
        p = [g.sub(blk[j], blk[j + ell]) for j in range(h)] + blk[h:ell]
        r = [g.add(g.add(blk[j], blk[j + h]), blk[j + ell]) for j in range(h)]
        p = [g.shift(p[j], root.twist[j]) for j in range(ell)]
        return g.dft(root.dft_neg, p, False) + g.dft(root.dft_cyc, r, False)
    assert isinstance(root, SchoenhageMap)
    arr: list[MaybeRef] = [None] * root.n
    for j in range(root.n):
        arr[root.in_perm[j]] = blocks[j] if j < len(blocks) else None
    return g.axes(arr, root.axes, root.dfts, False)


def schoenhage_inverse(
    g: BlockGraph, root: RingMap, parts: list[MaybeRef], count: int
) -> list[MaybeRef]:
    """The unnormalised inverse of Schönhage's map with its overlap-add: the first ``count``
    blocks of m coefficients (half-length nodes) of root_scale times the element of the
    source ring whose pieces are ``parts``.

    Truncated map: with P~ = l P and R~ = (l/2) R the unnormalised inverse DFTs, 2l T =
    2 R~ - P~_j - P~_(j+h) and 2l P = 2 P~, so 2l W needs no multiplication at all."""
    m = g.M // 2

    # an addition of length m reads the first m coefficients of its operands, so w itself
    # stands for its low half
    def high(w: MaybeRef) -> MaybeRef:  # coefficients m .. 2m-1 of w at 0 .. m-1
        return g.shift(w, -m)

    if isinstance(root, TruncatedSchoenhageMap):
        ell, h = root.l, root.l // 2
        pp = g.dft(root.dft_neg, parts[:ell], True)
        pp = [g.shift(pp[j], -root.twist[j]) for j in range(ell)]
        rr = g.dft(root.dft_cyc, parts[ell:], True)
        t = [g.sub(g.sub(g.add(rr[j], rr[j]), pp[j]), pp[j + h]) for j in range(h)]
        p2 = [g.add(x, x) for x in pp]
        w = [g.add(p2[j], t[j]) for j in range(h)] + p2[h:] + t
        nb = 3 * h
        out = [w[0]] + [g.add(w[j], high(w[j - 1]), m) for j in range(1, nb)]
        over = high(w[nb - 1])
        out[0] = g.add(out[0], over, m)
        out[h] = g.sub(out[h], over, m)
        out[ell] = g.add(out[ell], over, m)
    else:
        assert isinstance(root, SchoenhageMap)
        arr = g.axes(list(parts), root.axes, root.dfts, True)
        c = [arr[root.in_perm[j]] for j in range(root.n)]
        out = [g.add(c[j], high(c[j - 1]), m) for j in range(root.n)]
    return out[:count]


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
