"""NTRU Prime multiplication as DSL programs: the Schönhage pipelines over lanes.

Good–Schönhage–Bruun and Schönhage–Nussbaumer (``plan.maps.pipelines``) embed the product into
Z_q[x]/(g) and map it, by Schönhage's map, to n pieces Z_q[x]/(x^M + 1), M = 2m, whose DFT
twiddles are powers of x: negacyclic *shifts* of a whole block of M coefficients. Each piece
then splits further by a map that is the same for every piece (Nussbaumer down to y^8 + 1, or
Bruun's trinomials down to degree 8), and the leaves are multiplied. So the programs run in two
layouts:

``lanes = positions`` (the Schönhage level)
    A block is M/L vectors of consecutive coefficients. A shift by s moves coefficients across
    vectors and negates the ones that wrap, so a block that is read shifted is kept in memory
    as [B | -B] (2M entries) and x^s B is read as the window starting at (-s) mod 2M: one
    unaligned load per vector, a public offset. The block operations (additions, subtractions,
    products by field constants, shifts) of the checked map are recorded as a graph of blocks
    (:class:`BlockGraph`, the same algorithms as ``plan.maps.dft`` and ``plan.maps.schoenhage``
    on symbolic blocks) and lowered in *levels*: an operation joins the loop over chunks of
    its operands when it reads them unshifted, and starts a new loop (its operands through
    memory) when it reads one shifted.
``lanes = pieces`` (the piece maps and the leaf products)
    L pieces' coefficient i form one vector (an L x L transpose, as in the Good–Rader base),
    so the piece map is the same straight-line code in every lane: its trace
    (``plan.maps.trace``) is lowered as for the Good–Rader DFT. The leaves' products are full
    Karatsuba products reduced modulo the leaf's modulus (y^8 + 1, x^8 + alpha x^4 + beta).

Stages of ``polymul(r, a, b)``: ``forward`` (once per operand: Schönhage's map, then the piece
map, leaves out in lanes = pieces), ``base`` (leaf products, times beta^-1), ``inverse`` (the
piece map's and Schönhage's inverses, unnormalised, with the overlap-add: the product's
coefficients), ``fold`` (:func:`nttgen.programs.ntru.program_fold`, whose constant K undoes
beta^-1 and every normalisation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Function, LoopVar, Value
from ..errors import IsaUnavailableError
from ..plan.constants import Arith
from ..plan.maps.base import RingMap
from ..plan.maps.bruun import bruun_tree
from ..plan.maps.choose import GSB, SN, plan_pipeline
from ..plan.maps.cost import Cost
from ..plan.maps.dft import BlockDFT, DirectDFT, FieldAction, Radix2DFT, Radix3DFT, ShiftAction
from ..plan.maps.nussbaumer import NussbaumerMap
from ..plan.maps.ops import add as add_blocks
from ..plan.maps.ops import mul_xpow
from ..plan.maps.pipelines import build_pipeline
from ..plan.maps.polys import describe
from ..plan.maps.schoenhage import SchoenhageMap, TruncatedSchoenhageMap
from ..plan.maps.trace import Sym, Trace, trace_map
from .lazy import Reducer
from .ntru import (
    NtruFunctions,
    Products,
    Signed,
    TraceLowering,
    load_rows,
    negate,
    program_fold,
    signed_sum,
    transpose,
)

SHIFT_PIPELINES = (GSB, SN)
"""The pipelines this module builds."""


# --------------------------------------------------------------------------- shape
@dataclass(frozen=True)
class ShiftShape:
    """The maps and sizes of a Schönhage pipeline at L lanes.

    ``root``: Schönhage's map (cyclic, possibly with a Good–Thomas odd axis, or truncated);
    ``piece``: the map applied to every piece x^M + 1 (Nussbaumer or a Bruun tree)."""

    pipeline: str
    p: int
    q: int
    lanes: int
    root: SchoenhageMap | TruncatedSchoenhageMap
    piece: RingMap

    def __post_init__(self) -> None:
        if self.m % self.lanes:
            raise IsaUnavailableError(
                f"the {self.pipeline} program keeps a piece of {self.M} coefficients in whole "
                f"vectors: {self.lanes} lanes do not divide its input half of {self.m}"
            )

    @property
    def m(self) -> int:
        """Coefficients per input block (the pieces are x^(2m) + 1)."""
        return self.root.m

    @property
    def M(self) -> int:
        """Coefficients per piece, 2m."""
        return 2 * self.root.m

    @property
    def n(self) -> int:
        """Number of pieces."""
        return len(self.root.targets)

    @property
    def rows(self) -> int:
        """Pieces rounded up to whole groups of L (the padding rows are zero)."""
        return -(-self.n // self.lanes) * self.lanes

    @property
    def blocks_in(self) -> int:
        """Input blocks of m coefficients that hold an input (degree < p)."""
        return -(-self.p // self.m)

    @property
    def blocks_out(self) -> int:
        """Blocks of m coefficients of the product the fold reads (indices < 2p)."""
        return -(-2 * self.p // self.m)

    @property
    def product_length(self) -> int:
        """Coefficients of the product the inverse stage writes."""
        return self.blocks_out * self.m

    @property
    def leaves(self) -> list[tuple[int, ...]]:
        """The leaf moduli of one piece (monic, lowest coefficient first)."""
        return [tuple(t) for t in self.piece.targets]

    @property
    def leaf_offsets(self) -> list[int]:
        """Where each leaf's coefficients start among a piece's :attr:`leaf_length`."""
        out, k = [], 0
        for t in self.leaves:
            out.append(k)
            k += len(t) - 1
        return out

    @property
    def leaf_length(self) -> int:
        """Coefficients of all leaves of one piece (= 2M for Nussbaumer, M for Bruun)."""
        return sum(len(t) - 1 for t in self.leaves)

    @property
    def root_scale(self) -> int:
        """The factor of the unnormalised Schönhage inverse: n for the cyclic map, 2l for the
        truncated one (see :func:`schoenhage_inverse`)."""
        if isinstance(self.root, TruncatedSchoenhageMap):
            return 2 * self.root.l
        return self.root.n

    @property
    def piece_scale(self) -> int:
        """The factor of the unnormalised piece inverse (:attr:`piece_inverse_trace`)."""
        if isinstance(self.piece, NussbaumerMap):
            return 2 * self.piece.k
        norms = set(self.piece.norms() or ())
        if len(norms) != 1:  # pragma: no cover - the Bruun trees have one norm
            raise ValueError(f"{self.piece.name}: leaves with different norms {norms}")
        return pow(norms.pop(), -1, self.q)

    @property
    def fold_scale(self) -> int:
        """What the fold's K undoes besides beta^-1."""
        return self.root_scale * self.piece_scale % self.q

    @cached_property
    def piece_forward_trace(self) -> tuple[Trace, list[list[Sym | int]]]:
        """The piece map's forward on M symbolic coefficients."""
        return trace_map(lambda xs: self.piece.forward(list(xs)), self.q, self.M)

    @cached_property
    def piece_inverse_trace(self) -> tuple[Trace, list[Sym | int]]:
        """The piece map's inverse, unnormalised (by :attr:`piece_scale`), on the leaves."""
        q, piece = self.q, self.piece
        offs, lens = self.leaf_offsets, [len(t) - 1 for t in self.leaves]

        def inverse(xs: Sequence[Sym]) -> list[list[Sym | int]]:
            parts = [list(xs[o : o + n]) for o, n in zip(offs, lens, strict=True)]
            if isinstance(piece, NussbaumerMap):
                k, r = piece.k, piece.r
                c = piece.dft.apply(parts, True, Cost())
                blocks = [add_blocks(c[i], mul_xpow(c[i + k], 1, q, Cost()), q, Cost())
                          for i in range(k)]  # fmt: skip
                out: list[Sym | int] = [0] * (k * r)
                for i in range(k):
                    for j in range(r):
                        out[piece.gather(i, j)] = blocks[i][j]
                return [[x] for x in out]
            return [[x] for x in piece.inverse_raw(parts)]

        trace, outs = trace_map(inverse, q, self.leaf_length)
        return trace, [o[0] for o in outs]

    def plan_lines(self, modulus: str) -> list[str]:
        """The "Plan:" paragraph of the generated files' header."""
        root, leaf = self.root, self.leaves[0]
        kind = "truncated Schönhage" if isinstance(root, TruncatedSchoenhageMap) else "Schönhage"
        piece = "Nussbaumer" if isinstance(self.piece, NussbaumerMap) else "Bruun"
        return [
            f"Plan:   {self.pipeline}: the product in Z_q[x]/({describe(root.source, self.q)}), "
            f"{kind}'s map",
            f"        to {self.n} pieces x^{self.M} + 1 (twiddles are shifts), {piece} on "
            f"each to {len(self.leaves)} leaves of degree {len(leaf) - 1},",
            f"        {self.n * len(self.leaves)} leaf products, inverse maps, fold modulo "
            f"{modulus}",
        ]


def shift_shape(pipeline: str, p: int, q: int, lanes: int) -> ShiftShape:
    """The shape of ``pipeline`` (Good–Schönhage–Bruun or Schönhage–Nussbaumer) for (p, q) at
    ``lanes`` lanes, from the pipeline's checked plan (raises the plan's error, naming the
    rule, where it does not exist for (p, q)).

    Where a piece is narrower than a vector (Good–Schönhage–Bruun's x^32 + 1 at AVX-512's 32
    lanes) the blocks double and the power-of-two axis halves, the same g: Schönhage with
    blocks of 32 over 3 x l/2, pieces x^64 + 1 split by Bruun to degree 8 (8 leaves each)."""
    plan = plan_pipeline(pipeline, p, q)
    if pipeline not in SHIFT_PIPELINES:
        raise ValueError(f"{pipeline} is not a Schönhage pipeline")
    tree = build_pipeline(pipeline, p, q).tree
    root, piece = tree.root, tree.children[0]  # type: ignore[attr-defined]
    if pipeline == GSB and lanes > plan.sizes["m"]:
        m, ell = 2 * plan.sizes["m"], plan.sizes["l"] // 2
        root = SchoenhageMap(q, m, ell, odd=plan.sizes["odd"])
        piece = bruun_tree(q, 2 * m, 0, 1, 8)
    return ShiftShape(pipeline, p, q, lanes, root, piece)


# --------------------------------------------------------------------------- block graph
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


# --------------------------------------------------------------------------- stages
def program_forward(
    S: Builder, shape: ShiftShape, contract: tuple[int, int], zip_group: int | None
) -> None:
    """forward(r, a): the leaves of a, pieces in lanes: for group g of L pieces, coefficient i
    of the piece's leaves (in leaf order) at r[(g * leaf_length + i) * L + lane]."""
    p, m, M, L = shape.p, shape.m, shape.M, shape.lanes
    LC = shape.leaf_length
    r = S.output("r", shape.rows * LC, doc="leaves, pieces in lanes")
    a = S.input("a", p, contract, doc="coefficients")
    red = Reducer(S)
    lower = TraceLowering(S, red)
    zero = S.const(0, hint="zero")
    nb = shape.blocks_in
    # a, zero above p, in blocks of m (the last chunk of a may overlap the one before it)
    padded = S.local("a_pad", nb * m)
    for i in range(0, m, L):
        S.store(padded, (nb - 1) * m + i, zero)
    starts = list(range(0, p - L + 1, L))
    if p % L:
        starts.append(p - L)
    for s in starts:
        S.store(padded, s, S.load(a, s, hint="a"))
    # each block embedded in x^M + 1 (zero above m) and stored as [B | -B]
    ext = S.local("a_ext", nb * 2 * M)

    def fill(v: LoopVar) -> None:
        c0 = Affine.of(v) * L
        for j in range(nb):
            x = S.load(padded, c0 + j * m, hint="a")
            S.store(ext, c0 + j * 2 * M, x)
            S.store(ext, c0 + j * 2 * M + M, negate(S, red, (x, -1)))
            S.store(ext, c0 + j * 2 * M + m, zero)
            S.store(ext, c0 + j * 2 * M + M + m, zero)

    S.loop(m // L, fill, hint="col")
    g = BlockGraph(M, shape.q)
    blocks = [g.input(ext, j * 2 * M) for j in range(nb)]
    pieces = S.local("pieces", shape.rows * M)
    for k, piece in enumerate(schoenhage_forward(g, shape.root, blocks)):
        g.output(piece, pieces, k * M)
    lower_blocks(S, g, red, lower)
    for k in range(shape.n, shape.rows):
        for i in range(0, M, L):
            S.store(pieces, k * M + i, zero)
    trace, outs = shape.piece_forward_trace
    flat = [x for leaf in outs for x in leaf]

    def group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        x = load_rows(S, pieces, k0, M, M, zip_group)
        got = lower.run(trace, lambda i: (x[i], 1), flat)
        for i, y in enumerate(got):
            val = zero if y is None else negate(S, red, y)
            S.store(r, k0 * LC + i * L, val)

    S.loop(shape.rows // L, group, hint="grp", unroll=False)


def reduce_mod(
    S: Builder, red: Reducer, lower: TraceLowering, full: list[Value], modulus: tuple[int, ...]
) -> list[Value]:
    """full mod the monic ``modulus`` (coefficients lowest first): from the top, coefficient
    i >= d goes to i - d + j times -modulus[j]."""
    q, d = S.arith.q, len(modulus) - 1
    c: list[Value | None] = list(full)
    for i in range(len(full) - 1, d - 1, -1):
        top = c[i]
        if top is None:
            continue
        for j in range(d):
            t = modulus[j] % q
            if t == 0:
                continue
            if t in (1, q - 1):
                term: Signed = (top, -1 if t == 1 else 1)
            else:
                term = (lower.multiply(top, -t), 1)
            prev = c[i - d + j]
            if prev is None:
                c[i - d + j] = negate(S, red, term)
            else:
                c[i - d + j] = signed_sum(S, red, (prev, 1), term, False)[0][0]
    return c[:d]  # type: ignore[return-value]


def program_base(
    S: Builder, shape: ShiftShape, contract_a: tuple[int, int], contract_b: tuple[int, int]
) -> None:
    """base(r, a, b): every leaf product a_t * b_t * beta^-1 mod its modulus, pieces in lanes
    (the layout of :func:`program_forward`)."""
    L, LC = shape.lanes, shape.leaf_length
    size = shape.rows * LC
    r = S.output("r", size, doc="leaf products (times beta^-1)")
    a = S.input("a", size, contract_a, doc="leaves")
    b = S.input("b", size, contract_b, doc="leaves")
    red = Reducer(S)
    lower = TraceLowering(S, red)
    prod = Products(S, red)
    q = S.arith.q

    def load(src: Buffer, at: Affine) -> Value:
        v = S.load(src, at, hint=src.name)
        return red.within(v, q)

    def group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        for leaf, off in zip(shape.leaves, shape.leaf_offsets, strict=True):
            d = len(leaf) - 1
            x = [load(a, k0 * LC + (off + i) * L) for i in range(d)]
            y = [load(b, k0 * LC + (off + i) * L) for i in range(d)]
            full = prod.product(x, y, prod.times_qinv(y))
            for i, val in enumerate(reduce_mod(S, red, lower, full, leaf)):
                S.store(r, k0 * LC + (off + i) * L, val)

    S.loop(shape.rows // L, group, hint="grp", unroll=False)


def program_inverse(
    S: Builder, shape: ShiftShape, contract: tuple[int, int], zip_group: int | None
) -> None:
    """inverse(r, c): the product's coefficients 0 .. product_length-1 times
    ``shape.fold_scale`` * beta^-1... (c: the leaf products of :func:`program_base`)."""
    M, L, LC, m = shape.M, shape.lanes, shape.leaf_length, shape.m
    r = S.output("r", shape.product_length, doc="scaled product")
    c = S.input("c", shape.rows * LC, contract, doc="leaf products")
    red = Reducer(S)
    lower = TraceLowering(S, red)
    pieces = S.local("pieces", shape.rows * 2 * M)
    trace, outs = shape.piece_inverse_trace

    def group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        leaves = [S.load(c, k0 * LC + i * L, hint="c") for i in range(LC)]
        got = lower.run(trace, lambda i: (leaves[i], 1), outs)
        zero = S.const(0, hint="zero")
        vals = [zero if y is None else negate(S, red, y) for y in got]
        for h in range(0, M, L):
            tile = vals[h : h + L]
            back = transpose(S, tile, zip_group) if L > 1 else tile
            for rr, val in enumerate(back):
                at = k0 * (2 * M) + rr * 2 * M + h
                S.store(pieces, at, val)
                S.store(pieces, at + M, negate(S, red, (val, -1)))

    S.loop(shape.rows // L, group, hint="grp", unroll=False)
    g = BlockGraph(M, shape.q)
    parts = [g.input(pieces, k * 2 * M) for k in range(shape.n)]
    for j, blk in enumerate(schoenhage_inverse(g, shape.root, parts, shape.blocks_out)):
        g.output(blk, r, j * m, m)
    lower_blocks(S, g, red, lower)


# --------------------------------------------------------------------------- functions
def build_shift_pipeline(
    pipeline: str,
    p: int,
    q: int,
    arith: Arith,
    lanes: int,
    zip_group: int | None = None,
    coarse_reductions: bool = False,
) -> NtruFunctions:
    """``polymul`` and ``polymul_small`` (as :func:`nttgen.programs.ntru.build_good_rader`)
    through Good–Schönhage–Bruun or Schönhage–Nussbaumer at ``lanes`` lanes
    (``coarse_reductions``: as there)."""
    shape = shift_shape(pipeline, p, q, lanes)
    half = (q - 1) // 2
    f: dict[str, Function] = {}

    def builder(name: str, doc: str) -> Builder:
        S = Builder(name, arith, lanes, doc)
        S.unroll_default = lanes > 1
        S.coarse_reductions = coarse_reductions
        return S

    def stage(S: Builder, require: dict[str, tuple[int, int]] | None = None) -> Function:
        fn = S.finish(require=require)
        fn.internal = True
        fn.distinct_buffers = True
        return fn

    for name, contract in (("forward", (-half, half)), ("forward_small", (-1, 1))):
        S = builder(name, f"{pipeline} forward maps, inputs in {contract}")
        program_forward(S, shape, contract, zip_group)
        f[name] = stage(S)
    big = f["forward"].contract.outputs["r"]
    small = f["forward_small"].contract.outputs["r"]
    S = builder("base", f"{shape.n * len(shape.leaves)} leaf products, pieces in lanes")
    program_base(S, shape, big, (min(big[0], small[0]), max(big[1], small[1])))
    f["base"] = stage(S)
    S = builder("inverse", "unnormalised inverse maps and overlap-add")
    program_inverse(S, shape, f["base"].contract.outputs["r"], zip_group)
    f["inverse"] = stage(S)
    S = builder("fold", f"fold modulo x^{p} - x - 1, scale and centre")
    program_fold(S, shape, f["inverse"].contract.outputs["r"])
    f["fold"] = stage(S, require={"r": (-half, half)})
    size = shape.rows * shape.leaf_length
    for name, fwd_b, b_range in (
        ("polymul", "forward", (-half, half)),
        ("polymul_small", "forward_small", (-1, 1)),
    ):
        S = builder(name, f"r = a*b mod (q, x^{p} - x - 1), centred")
        r = S.output("r", p, doc=f"product, centred in [{-half}, {half}]")
        a = S.input("a", p, (-half, half), doc="coefficients")
        b = S.input("b", p, b_range, doc="coefficients" if b_range[1] > 1 else "small")
        ta, tb, tc = S.local("a_hat", size), S.local("b_hat", size), S.local("c_hat", size)
        prod = S.local("c", shape.product_length)
        S.call(f["forward"], r=ta, a=a)
        S.call(f[fwd_b], r=tb, a=b)
        S.call(f["base"], r=tc, a=ta, b=tb)
        S.call(f["inverse"], r=prod, c=tc)
        S.call(f["fold"], r=r, c=prod)
        f[name] = S.finish(require={"r": (-half, half)})
    return NtruFunctions(shape, f)  # type: ignore[arg-type]
