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
    (the algorithms of ``plan.maps.dft`` and ``plan.maps.schoenhage`` run on
    :class:`~.ntru_blocks.BlockGraph`, a carrier of symbolic blocks) and lowered in *levels*:
    an operation joins the loop over chunks of its operands when it reads them unshifted, and
    starts a new loop (its operands through memory) when it reads one shifted
    (:mod:`.ntru_blocks`).
``lanes = pieces`` (the piece maps and the leaf products)
    L pieces' coefficient i form one vector (an L x L transpose, as in the Good–Rader base),
    so the piece map is the same straight-line code in every lane: its trace
    (``plan.maps.trace``) is lowered as for the Good–Rader DFT. The leaves' products are full
    Karatsuba products reduced modulo the leaf's modulus (y^8 + 1, x^8 + alpha x^4 + beta).

Stages of ``polymul(r, a, b)``: ``forward`` (once per operand: Schönhage's map, then the piece
map, leaves out in lanes = pieces), ``base`` (leaf products, times beta^-1), ``inverse`` (the
piece map's and Schönhage's inverses, unnormalised, with the overlap-add: the product's
coefficients), ``fold`` (:func:`nttgen.programs.ntru_fold.program_fold`, whose constant K undoes
beta^-1 and every normalisation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Function, LoopVar, Value
from ..errors import IsaUnavailableError
from ..plan.constants import Arith
from ..plan.maps.base import RingMap
from ..plan.maps.bruun import bruun_tree
from ..plan.maps.choose import GSB, SN, plan_pipeline
from ..plan.maps.cost import Cost
from ..plan.maps.nussbaumer import NussbaumerMap
from ..plan.maps.ops import add as add_blocks
from ..plan.maps.ops import mul_xpow
from ..plan.maps.pipelines import build_pipeline
from ..plan.maps.polys import describe
from ..plan.maps.schoenhage import SchoenhageMap, TruncatedSchoenhageMap
from ..plan.maps.trace import Sym, Trace, trace_map
from .lazy import Reducer
from .ntru_base import Products
from .ntru_blocks import (
    BlockGraph,
    BNode,
    MaybeRef,
    Ref,
    lower_blocks,
)
from .ntru_fold import program_fold
from .ntru_lowering import Signed, TraceLowering, negate, signed_sum
from .ntru_shape import NtruFunctions
from .ntru_transpose import load_rows, transpose

__all__ = [
    "SHIFT_PIPELINES",
    "BNode",
    "BlockGraph",
    "MaybeRef",
    "Ref",
    "ShiftShape",
    "build_shift_pipeline",
    "lower_blocks",
    "program_base",
    "program_forward",
    "program_inverse",
    "reduce_mod",
    "shift_shape",
]

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
        truncated one (see ``inverse_blocks`` of the maps in :mod:`nttgen.plan.maps.schoenhage`)."""
        return self.root.inverse_factor()

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
    blocks: list[MaybeRef] = [g.input(ext, j * 2 * M) for j in range(nb)]
    blocks += [None] * (shape.n - nb)  # the zero blocks above p (as many blocks as pieces)
    pieces = S.local("pieces", shape.rows * M)
    for k, piece in enumerate(shape.root.forward_blocks(g, blocks)):
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
    parts: list[MaybeRef] = [g.input(pieces, k * 2 * M) for k in range(shape.n)]
    halves = shape.root.inverse_blocks(g, parts, normalise=False)  # times root_scale
    for j, blk in enumerate(halves[: shape.blocks_out]):
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
