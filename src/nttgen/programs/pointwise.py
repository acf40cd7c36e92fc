"""Programs that work coefficient-wise or on the NTT domain's base factors: base multiplication
(pointwise, or degree 2 for incomplete NTTs), multiply-accumulate of k products, full reduction
to [0, q), conversions to and from Montgomery form, and copies.

The NTT domain may be kept in a permuted order (a :class:`MemOrder`): base multiplication uses it
to find each factor's coefficients and its root, so it works for any layout a backend picks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, LoopVar, Table, Value
from ..plan.layout import LoopRun, MemOrder, Shuffle, loop_runs, plan_regroup
from ..plan.ntt import NttAlgebra
from .lazy import Reducer
from .loops import nest_loops, run_bases


def for_each_vector(S: Builder, length: int, body: Callable[[Affine], None]) -> None:
    """Loop over a buffer of ``length`` elements one vector (L lanes) at a time."""
    if length % S.lanes:
        raise ValueError(f"{length} elements do not split into {S.lanes}-lane vectors")
    S.loop(length // S.lanes, lambda v: body(Affine.of(v) * S.lanes), hint="i")


def reduce_to_standard(S: Builder, x: Value) -> Value:
    """Map a lane value to its representative in [0, q), doing only what its range needs:
    a Barrett reduction unless it already lies in (-q, q), then adding q where negative, then
    (only if it can still reach q) subtracting q and adding it back where negative."""
    q = S.arith.q
    if S.bound(x).within(0, q - 1):
        return x
    if not S.bound(x).within(-(q - 1), q - 1):
        x = S.barrett(x, hint="red")
    x = S.cond_add_q(x, hint="red")
    if S.bound(x).max >= q:
        x = S.cond_add_q(S.sub(x, S.const(q, hint="q"), hint="red"), hint="red")
    return x


def reduce_centred(S: Builder, x: Value) -> Value:
    """Map a lane value to its representative in [-(q-1)/2, (q-1)/2] (q odd): one Barrett
    reduction where that already lands there (the analysis says so for the presets' ISAs);
    else to [0, q) first, then y = x - (q+1)/2 is negative exactly where x <= (q-1)/2, so
    adding q there and subtracting (q-1)/2 gives x where x <= (q-1)/2 and x - q elsewhere,
    with no branch."""
    q = S.arith.q
    half = (q - 1) // 2
    if not S.bound(x).within(-half, half):
        x = reduce_partial(S, x)
    if S.bound(x).within(-half, half):
        return x
    x = reduce_to_standard(S, x)
    y = S.cond_add_q(S.sub(x, S.const((q + 1) // 2, hint="half"), hint="red"), hint="red")
    return S.sub(y, S.const((q - 1) // 2, hint="half"), hint="red")


def reduce_partial(S: Builder, x: Value) -> Value:
    """Map a lane value to a representative in (-q, q) by one Barrett reduction, unless its
    range already lies there (the cheapest reduction: enough before ML-DSA's caddq)."""
    q = S.arith.q
    return x if S.bound(x).within(-(q - 1), q - 1) else S.barrett(x, hint="red")


REDUCTIONS = {
    "reduce": (reduce_to_standard, "[0, q)"),
    "reduce_centred": (reduce_centred, "[-(q-1)/2, (q-1)/2]"),
    "reduce_partial": (reduce_partial, "(-q, q)"),
}
"""The in-place reductions every x^n + 1 kernel set offers: name -> (map, its range)."""


def program_reduce(S: Builder, n: int, name: str = "reduce") -> None:
    """One of the :data:`REDUCTIONS` (``reduce``: every coefficient to its standard
    representative in [0, q)), in place, on any lane values."""
    a = S.inout("a", n, (S.lane.min, S.lane.max), doc="any lane values")
    reduce = REDUCTIONS[name][0]

    def body(i: Affine) -> None:
        S.store(a, i, reduce(S, S.load(a, i, hint="x")))

    for_each_vector(S, n, body)


def program_scale(
    S: Builder,
    n: int,
    pair: tuple[int, int],
    what: str,
    target: tuple[int, int] | None = None,
) -> None:
    """a <- a times one constant given as its twisted pair: used for to/from Montgomery form;
    each result reduced into ``target`` where its range could leave it."""
    a = S.inout("a", n, (S.lane.min, S.lane.max), doc="any lane values")
    S.comment(what)
    red = Reducer(S)

    def body(i: Affine) -> None:
        z = S.const(pair[0], hint="f")
        zq = S.const(pair[1], hint="fqinv")
        x = S.mulconst(S.load(a, i, hint="x"), z, zq, hint="x")
        S.store(a, i, x if target is None else red.fit_to(x, target))

    for_each_vector(S, n, body)


def copy(S: Builder, dst: Buffer, src: Buffer, n: int) -> None:
    """dst <- src, vector by vector."""
    for_each_vector(S, n, lambda i: S.store(dst, i, S.load(src, i, hint="x")))


def gamma_lanes(alg: NttAlgebra, order: MemOrder, base: int, lanes: int) -> list[int]:
    """The twisted roots g_j of the degree-2 factors whose coefficients the ``lanes`` memory
    positions from ``base`` hold (in ``order``): the lanes' z, then their second constants."""
    pairs = [alg.arith.twisted(alg.base_root(order.index(base + k) >> 1)) for k in range(lanes)]
    return [z for z, _ in pairs] + [zq for _, zq in pairs]


@dataclass(frozen=True)
class Chunk:
    """One chunk of base multiplication: the register ``offsets`` from ``addr`` (1 for
    pointwise, 2 = (a0, a1) for degree 2), its root vector ``gamma`` (degree 2; as the
    twisted pair (z, zq)), and where its entries of the multiplication cache start
    (``cache_at``, within one polynomial's cache)."""

    offsets: list[int]
    addr: Affine
    gamma: tuple[Value, Value] | None
    cache_at: Affine


class BaseMul:
    """Base multiplication in the NTT domain for a given memory order.

    Complete NTTs multiply pointwise. Degree-2 factors x^2 - g_j multiply as
    (a0 + a1 x)(b0 + b1 x) = (a0 b0 + g_j a1 b1) + (a0 b1 + a1 b0) x, each product a signed
    Montgomery product, so the result carries a factor beta^-1 (undone by the inverse NTT)."""

    def __init__(self, S: Builder, alg: NttAlgebra, order: MemOrder) -> None:
        self.S = S
        self.alg = alg
        self.order = order
        self.degree = alg.ring.base_degree
        log_n = alg.ring.log_n
        lane_bits = S.lanes.bit_length() - 1
        self.table: Table | None = None
        if self.degree == 1:
            return
        self.slots, self.shuffles, self.inner_order = plan_regroup(order, log_n, lane_bits, 0)
        positions = [p for p in range(lane_bits, log_n) if p not in self.slots]
        self.loops = loop_runs(positions, self.inner_order, lambda j: True)
        rows: list[int] = []
        for base in run_bases(self.loops):
            rows.extend(gamma_lanes(alg, self.inner_order, base, S.lanes))
        self.table = S.table(
            "gammas",
            rows,
            doc=f"roots g_j of the degree-2 factors x^2 - g_j, {alg.arith.pair_doc}, as lane"
            " vectors in consumption order",
        )

    @property
    def cache_length(self) -> int:
        """Elements of one polynomial's multiplication cache (see :meth:`cache_values`)."""
        return self.alg.ring.n // self.degree

    def for_each_chunk(self, body: Callable[[Chunk], None]) -> None:
        """Call ``body(chunk)`` once per chunk (see :class:`Chunk`)."""
        self.for_each_chunk_group(lambda chunks: body(chunks[0]), 1)

    def for_each_chunk_group(self, body: Callable[[list[Chunk]], None], chunks: int) -> None:
        """Call ``body(group)`` once per group of ``chunks`` consecutive chunks (fewer where
        the innermost loop over chunks is shorter): the loop over groups runs, the chunks of
        a group are unrolled."""
        S = self.S
        n = self.alg.ring.n
        if self.degree == 1:
            per = math.gcd(chunks, n // S.lanes)
            step = per * S.lanes

            def vectors(v: LoopVar) -> None:
                at = [Affine.of(v) * step + u * S.lanes for u in range(per)]
                body([Chunk([0], a, None, a) for a in at])

            S.loop(n // step, vectors, hint="i")
            return
        slot = self.slots[0]
        per_chunk = 2 * S.lanes
        if self.loops:
            *outer, last = self.loops
            bits = min(last.width, chunks.bit_length() - 1)
            runs = [*outer, LoopRun(last.start + bits, last.width - bits, last.twiddles)]
            start = last.start
        else:  # one chunk holds the whole polynomial (n = 2 lanes): no loop at all
            bits, runs, start = 0, [], 0

        def group(addr: Affine, it: Affine) -> None:
            assert self.table is not None
            found = []
            for u in range(1 << bits):
                at = it * (1 << bits) + u
                z = S.load(self.table, at * per_chunk, hint="gamma")
                zq = S.load(self.table, at * per_chunk + S.lanes, hint="gammaqinv")
                found.append(Chunk([0, 1 << slot], addr + (u << start), (z, zq), at * S.lanes))
            body(found)

        nest_loops(S, [r for r in runs if r.width], group, hint="i")

    def cache_values(self, b: list[Value], gamma: tuple[Value, Value] | None) -> Value:
        """The multiplication cache of one chunk of b (the registers :meth:`load` gives):
        for degree-2 factors x^2 - g, g * b1 mod q (a Montgomery product by g's twisted
        pair), so that products need no product by g; for a complete NTT, b * q^-1 mod beta,
        the twist of a Montgomery product by b."""
        S = self.S
        if gamma is None:
            return S.mullo(b[0], S.const(S.arith.qinv, hint="qinv"), hint="bq")
        return S.mulconst(b[1], gamma[0], gamma[1], hint="gb")

    def load(self, buf: Buffer, addr: Affine, offsets: list[int], hint: str) -> list[Value]:
        """Load one chunk and shuffle it so that register k holds coefficient k of each factor."""
        regs = [self.S.load(buf, addr + off, hint=hint) for off in offsets]
        return self._shuffle(regs)

    def store(self, buf: Buffer, addr: Affine, offsets: list[int], regs: list[Value]) -> None:
        """Undo :meth:`load`'s shuffles and store one chunk."""
        regs = self._shuffle(regs)
        for off, r in zip(offsets, regs, strict=True):
            self.S.store(buf, addr + off, r)

    def _shuffle(self, regs: list[Value]) -> list[Value]:
        if self.degree == 1:
            return regs
        for sh in self.shuffles:
            assert isinstance(sh, Shuffle)
            regs[0], regs[1] = self.S.shuffle(regs[0], regs[1], 1 << sh.lane_bit, ("x", "x"))
        return regs

    def multiply(
        self, red: Reducer, a: list[Value], b: list[Value], gamma: tuple[Value, Value] | None
    ) -> list[Value]:
        """The base product of one chunk (Montgomery: carries beta^-1)."""
        return base_product(self.S, red, a, b, gamma)


def base_product(
    S: Builder,
    red: Reducer,
    a: list[Value],
    b: list[Value],
    gamma: tuple[Value, Value] | None,
    gb: Value | None = None,
) -> list[Value]:
    """The base product of one factor's coefficient registers, a Montgomery product carrying
    beta^-1: ``[a0 * b0]`` for a complete NTT (``gamma`` None); for a degree-2 factor
    x^2 - g, ``[a0 b0 + g a1 b1, a0 b1 + a1 b0]`` with ``gamma`` the twisted root g as
    (z, zq) lane vectors. Operand ranges must allow their Montgomery products (an NTT
    output's ``fit_for_product`` contract); sums are made room for by ``red``. With ``gb``,
    g * b1 from the multiplication cache, a1 * g * b1 is one product (``gamma`` unused)."""
    if len(a) == 1:
        return [S.montmul_var(a[0], b[0], hint="p")]
    assert gamma is not None
    # Each b coefficient meets two a coefficients: twist it once (bq = b*q^-1 mod beta)
    # and every product is a Montgomery multiplication by a "constant": 3 multiplies
    # instead of 4 (the multiplier ports bound this kernel).
    qinv = S.const(S.arith.qinv, hint="qinv")
    bq = [S.mullo(x, qinv, hint="bq") for x in b]
    p00 = S.montmul(a[0], b[0], bq[0], hint="p")
    if gb is None:
        p11 = S.montmul(a[1], b[1], bq[1], hint="p")
        g11 = S.mulconst(p11, gamma[0], gamma[1], hint="p")
    else:
        g11 = S.montmul_var(a[1], gb, hint="p")
    p01 = S.montmul(a[0], b[1], bq[1], hint="p")
    p10 = S.montmul(a[1], b[0], bq[0], hint="p")
    x, y = red.make_room(p00, g11, need_diff=False)
    u, w = red.make_room(p01, p10, need_diff=False)
    return [S.add(x, y, hint="r"), S.add(u, w, hint="r")]


def program_basemul(
    S: Builder,
    alg: NttAlgebra,
    order: MemOrder,
    contract: tuple[int, int],
    target: tuple[int, int] | None = None,
) -> None:
    """basemul(r, a, b): r = a o b * beta^-1 in the NTT domain, for a and b in ``contract``;
    each product reduced into ``target`` where its range could leave it."""
    n = alg.ring.n
    r = S.output("r", n, doc="product in the NTT domain (times beta^-1)")
    a = S.input("a", n, contract, doc="NTT domain")
    b = S.input("b", n, contract, doc="NTT domain")
    bm = BaseMul(S, alg, order)
    red = Reducer(S)

    def body(ch: Chunk) -> None:
        xa = bm.load(a, ch.addr, ch.offsets, "a")
        prod = bm.multiply(red, xa, bm.load(b, ch.addr, ch.offsets, "b"), ch.gamma)
        if target is not None:
            prod = [red.fit_to(x, target) for x in prod]
        bm.store(r, ch.addr, ch.offsets, prod)

    bm.for_each_chunk(body)
