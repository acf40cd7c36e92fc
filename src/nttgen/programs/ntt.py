"""The forward and inverse NTT programs, written once for every ring, lane count and layout.

A transform is a list of passes (:mod:`nttgen.plan.layout`). A pass loops over chunks; each chunk
loads its registers, runs the pass's steps (butterflies on register pairs, shuffles that move a
lane bit into a register slot) and stores them back. Twiddles live in one table per function in
consumption order, as ready (z, z*q^-1) vectors, loaded once per iteration of the loops they
depend on. Where to reduce is left to :class:`nttgen.programs.lazy.Reducer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Table, Value
from ..plan.layout import Butterfly, LoopRun, MemOrder, Move, PassPlan, Shuffle, Zip, loop_runs
from ..plan.ntt import Network, NttAlgebra
from .lazy import Reducer
from .loops import nest_loops, run_bases


def register_offsets(pas: PassPlan) -> list[int]:
    """The memory offset of each register of a chunk of ``pas`` from the chunk's base address
    (register r holds the L consecutive positions at its offset; bit j of r is slot j)."""
    return [sum(((r >> j) & 1) << p for j, p in enumerate(pas.slots)) for r in range(pas.registers)]


def _pairs(registers: int, slot: int) -> list[tuple[int, int]]:
    return [(r, r | (1 << slot)) for r in range(registers) if not (r >> slot) & 1]


ChunkSource = Callable[[Affine], list[Value]]
"""A fused pass's loads: the chunk's base address -> its registers (in register order)."""
ChunkSink = Callable[[Affine, list[Value]], None]
"""A fused pass's stores: the chunk's base address and its final registers."""

Depends = Callable[[int, int], bool]
"""``depends(index_bit, pair_bit)``: whether twiddles of butterflies on ``pair_bit`` vary with
``index_bit`` (:meth:`NttAlgebra.twiddle_depends` for one network)."""


def _twiddle_key(
    pas: PassPlan, order: MemOrder, slot: int, bit: int, r0: int, depends: Depends
) -> tuple[int, ...]:
    """Register pairs with the same key share a twiddle vector: the key keeps only the slot bits
    whose index bit the twiddle depends on."""
    return tuple(
        (r0 >> j) & 1 for j, p in enumerate(pas.slots) if j != slot and depends(order.perm[p], bit)
    )


class _TwiddleUse:
    """One twiddle vector loaded per relevant iteration: (step number, key)."""

    def __init__(self, step: int, key: tuple[int, ...], r0: int) -> None:
        self.step = step
        self.key = key
        self.r0 = r0


def _uses(pas: PassPlan, step_order: list[int], depends: Depends) -> list[_TwiddleUse]:
    orders = pas.slot_orders()
    uses: list[_TwiddleUse] = []
    for si in step_order:
        st = pas.steps[si]
        if not isinstance(st, Butterfly):
            continue
        seen: set[tuple[int, ...]] = set()
        for r0, _ in _pairs(pas.registers, st.slot):
            key = _twiddle_key(pas, orders[si], st.slot, st.bit, r0, depends)
            if key not in seen:
                seen.add(key)
                uses.append(_TwiddleUse(si, key, r0))
    return uses


def _step_order(pas: PassPlan, inverse: bool) -> list[int]:
    """The steps in execution order: the inverse runs a forward pass backwards."""
    order = list(range(len(pas.steps)))
    return order[::-1] if inverse else order


def _depends(alg: NttAlgebra, network: Network) -> Depends:
    return lambda index_bit, pair_bit: alg.twiddle_depends(network, index_bit, pair_bit)


def _twiddle_loops(pas: PassPlan, depends: Depends) -> tuple[list[LoopRun], list[LoopRun]]:
    """(loops the twiddles depend on, the others): the former are nested outside. The pass
    plan's loops are regrouped by the network's dependence rule (the plan groups them for the
    forward network)."""
    bits = [st.bit for st in pas.steps if isinstance(st, Butterfly)]
    positions = [r.start + k for r in pas.loops for k in range(r.width)]
    runs = loop_runs(positions, pas.order_out, lambda j: any(depends(j, t) for t in bits))
    return [r for r in runs if r.twiddles], [r for r in runs if not r.twiddles]


@dataclass
class TwiddleLayout:
    """Where a pass's twiddles sit in the table: per iteration of the twiddle-dependent loops,
    a block of ``per_iter`` entries (a multiple of L, so vector loads stay aligned). A use whose
    twiddle is the same in every lane of every iteration is stored as one (z, zq) pair and
    loaded by broadcast; the others as L lanes of z then L lanes of zq. A use whose twiddle is
    1 everywhere (``trivial``) is not stored: its butterflies skip the multiplication."""

    uses: list[_TwiddleUse]
    values: list[list[tuple[list[int], list[int]]]]  # [iteration][use] -> (z lanes, zq lanes)
    uniform: list[bool]
    trivial: list[bool]
    offset: list[int]
    per_iter: int

    def rows(self) -> list[int]:
        """The table entries, in consumption order."""
        out: list[int] = []
        for per_use in self.values:
            block = [0] * self.per_iter
            for u, (zs, zqs) in enumerate(per_use):
                at = self.offset[u]
                if self.trivial[u]:
                    continue
                if self.uniform[u]:
                    block[at : at + 2] = [zs[0], zqs[0]]
                else:
                    block[at : at + 2 * len(zs)] = zs + zqs
            out.extend(block)
        return out


def twiddle_layout(
    alg: NttAlgebra,
    pas: PassPlan,
    lanes: int,
    *,
    network: Network,
    scale: int | None,
    centred_last: bool = False,
) -> TwiddleLayout:
    """The twiddles of one pass run by ``network`` (see :class:`TwiddleLayout`). Lane k of a
    use holds the twiddle of the logical position that lane holds at that step. With
    ``scale`` (the ``gs`` network's folded final factor), layer 0's twiddles carry it too;
    with ``centred_last`` they are Montgomery pairs (:meth:`Arith.montgomery_pair`)."""
    ar = alg.arith
    offsets = register_offsets(pas)
    orders = pas.slot_orders()
    depends = _depends(alg, network)
    uses = _uses(pas, _step_order(pas, network != "ct"), depends)
    values: list[list[tuple[list[int], list[int]]]] = []
    ones = [True] * len(uses)
    for base in run_bases(_twiddle_loops(pas, depends)[0]):
        per_use = []
        for u_i, u in enumerate(uses):
            st = pas.steps[u.step]
            assert isinstance(st, Butterfly)
            zs: list[int] = []
            zqs: list[int] = []
            for k in range(lanes):
                i = orders[u.step].index(base + offsets[u.r0] + k)
                c = alg.twiddle(network, st.layer, i)
                if scale is not None and st.layer == 0:
                    c = c * scale % ar.q
                ones[u_i] = ones[u_i] and c == 1
                centred = centred_last and st.layer == 0
                z, zq = ar.montgomery_pair(c) if centred else ar.twisted(c)
                zs.append(z)
                zqs.append(zq)
            per_use.append((zs, zqs))
        values.append(per_use)
    uniform = [
        all(len(set(it[u][0])) == 1 and len(set(it[u][1])) == 1 for it in values)
        for u in range(len(uses))
    ]
    offset = [0] * len(uses)
    at = 0
    for u in range(len(uses)):  # whole vectors first: they stay aligned
        if not uniform[u] and not ones[u]:
            offset[u] = at
            at += 2 * lanes
    for u in range(len(uses)):
        if uniform[u] and not ones[u]:
            offset[u] = at
            at += 2
    per_iter = -(-at // lanes) * lanes if at else 0
    return TwiddleLayout(uses, values, uniform, ones, offset, per_iter)


def run_pass(
    S: Builder,
    pas: PassPlan,
    buf: Buffer,
    table: Table,
    base_row: int,
    layout: TwiddleLayout,
    *,
    network: Network,
    red: Reducer,
    depends: Depends,
    scale: tuple[int, int] | None = None,
    centred_last: bool = False,
    after_load: Callable[[Value], Value] | None = None,
    twist: Table | None = None,
    before_store: Callable[[Value], Value] | None = None,
    src: Buffer | None = None,
    load_chunk: ChunkSource | None = None,
    store_chunk: ChunkSink | None = None,
) -> None:
    """Emit one pass of ``network`` on ``buf`` (loading from ``src`` instead when given, for an
    out-of-place first pass), reading its twiddles from ``table`` at ``base_row`` (laid out as
    ``layout`` says; ``depends`` is the network's twiddle dependence). ``scale`` is the
    twisted final factor (z, zq) the ``gs`` inverse multiplies its layer-0 sums by, with
    ``centred_last`` by Montgomery products like that layer's twiddles;
    ``after_load`` may transform each loaded register; ``twist`` is a table of (z, zq) lane
    vectors per stored vector (at rows 2*address and 2*address + L), each register is
    Montgomery-multiplied by before it is stored; ``before_store`` then transforms it.
    ``load_chunk`` (chunk address -> its registers) replaces the loads and ``store_chunk``
    (chunk address, final registers) the stores, for passes fused with other work."""
    L = S.lanes
    inverse = network != "ct"
    offsets = register_offsets(pas)
    orders = pas.slot_orders()
    step_order = _step_order(pas, inverse)
    uses = layout.uses
    relevant, inner = _twiddle_loops(pas, depends)
    Twiddles = dict[tuple[int, tuple[int, ...]], tuple[Value, Value] | None]

    load, store = _chunk_access(S, pas, inverse)

    def chunk(addr: Affine, twiddles: Twiddles) -> None:
        regs = load_chunk(addr) if load_chunk else load(src or buf, addr)
        if after_load:
            regs = [after_load(x) for x in regs]
        for si in step_order:
            st = pas.steps[si]
            if isinstance(st, (Shuffle, Zip)):
                apply_move(S, pas, regs, st, inverse=inverse)
                continue
            with S.tag(f"layer {st.layer}"):
                for r0, r1 in _pairs(pas.registers, st.slot):
                    key = _twiddle_key(pas, orders[si], st.slot, st.bit, r0, depends)
                    z = twiddles[(si, key)]
                    if network == "gs":
                        sc = scale if st.layer == 0 else None
                        centred = centred_last and st.layer == 0
                        regs[r0], regs[r1] = gs_butterfly(
                            S, red, regs[r0], regs[r1], z, sc, centred=centred
                        )
                    else:
                        regs[r0], regs[r1] = ct_butterfly(S, red, regs[r0], regs[r1], z)
        final: list[Value] = []
        for r, off in enumerate(offsets):
            v = regs[r]
            if twist is not None:
                at = (addr + off) * 2
                f = S.load(twist, at, hint="tw")
                fq = S.load(twist, at + L, hint="twqinv")
                v = S.mulconst(v, f, fq, hint="x")
            if before_store:
                v = before_store(v)
            if store_chunk:
                final.append(v)
            else:
                store(buf, addr, r, v)
        if store_chunk:
            store_chunk(addr, final)

    def with_twiddles(addr: Affine, it: Affine) -> None:
        tw: Twiddles = {}
        for u_i, u in enumerate(uses):
            row = Affine.of(base_row) + it * layout.per_iter + layout.offset[u_i]
            if layout.trivial[u_i]:
                tw[(u.step, u.key)] = None
            elif layout.uniform[u_i]:
                z = S.load(table, row, hint="zeta", broadcast=True)
                zq = S.load(table, row + 1, hint="zetaqinv", broadcast=True)
                tw[(u.step, u.key)] = (z, zq)
            else:
                z = S.load(table, row, hint="zeta")
                zq = S.load(table, row + L, hint="zetaqinv")
                tw[(u.step, u.key)] = (z, zq)
        nest_loops(S, inner, lambda a, _: chunk(a, tw), hint="j", base=addr)

    layers = ", ".join(map(str, pas.layers))
    what = "inverse layers" if inverse else "layers"
    S.comment(f"{what} {layers}: {pas.registers} register(s) per chunk")
    nest_loops(S, relevant, with_twiddles, hint="blk")


def _chunk_access(
    S: Builder, pas: PassPlan, inverse: bool
) -> tuple[Callable[[Buffer, Affine], list[Value]], Callable[[Buffer, Affine, int, Value], None]]:
    """How a chunk at a base address is loaded (all registers) and stored (register r):
    consecutive lanes at the register offsets of its slots, except that a pass with gathered
    lane bits loads by gather (forward) or stores by scatter (a transform run backwards) at
    offsets in the memory order the forward pass reads (:meth:`PassPlan.gather_offsets`)."""
    offsets = register_offsets(pas)
    gathered, lanes = pas.gather_offsets() if pas.gathered else (offsets, None)

    def load(buf: Buffer, addr: Affine) -> list[Value]:
        if lanes is None or inverse:
            return [S.load(buf, addr + off, hint="x") for off in offsets]
        return [S.load(buf, addr + off, hint="x", lanes_at=lanes) for off in gathered]

    def store(buf: Buffer, addr: Affine, r: int, v: Value) -> None:
        if lanes is None or not inverse:
            S.store(buf, addr + offsets[r], v)
        else:
            S.store(buf, addr + gathered[r], v, lanes_at=lanes)

    return load, store


def apply_move(
    S: Builder, pas: PassPlan, regs: list[Value], move: Move, *, inverse: bool = False
) -> None:
    """Apply one lane move of a pass to every register pair of a chunk (in place), or its
    inverse (a transform run backwards)."""
    for r0, r1 in _pairs(pas.registers, move.slot):
        if isinstance(move, Shuffle):
            regs[r0], regs[r1] = S.shuffle(regs[r0], regs[r1], 1 << move.lane_bit, ("x", "x"))
        else:
            regs[r0], regs[r1] = S.zip(
                regs[r0], regs[r1], move.width, move.group, int(inverse), ("x", "x")
            )


def ct_butterfly(
    S: Builder, red: Reducer, a: Value, b: Value, z: tuple[Value, Value] | None
) -> tuple[Value, Value]:
    """Cooley–Tukey: (a, b) -> (a + z*b, a - z*b), z*b by Montgomery multiplication with the
    twisted twiddle z = (z, zq); z = None stands for the twiddle 1 (no multiplication)."""
    t = b if z is None else S.mulconst(b, z[0], z[1], hint="t")
    a, t = red.make_room(a, t)
    return S.add(a, t, hint="x"), S.sub(a, t, hint="x")


def gs_butterfly(
    S: Builder,
    red: Reducer,
    a: Value,
    b: Value,
    z: tuple[Value, Value] | None,
    scale: tuple[int, int] | None,
    *,
    centred: bool = False,
) -> tuple[Value, Value]:
    """Gentleman–Sande: (a, b) -> (a + b, (a - b)*z); z = None stands for 1. With ``scale``
    (a twisted constant) the sum is multiplied by it too; z then already includes the same
    factor. ``centred``: both products are Montgomery products (z and scale Montgomery pairs),
    whatever the lane arithmetic's products by constants are."""
    mul = S.montmul if centred else S.mulconst
    a, b = red.make_room(a, b)
    s = S.add(a, b, hint="x")
    d = S.sub(a, b, hint="d")
    t = d if z is None else mul(d, z[0], z[1], hint="x")
    if scale is not None:
        c = S.const(scale[0], hint="f")
        cq = S.const(scale[1], hint="fqinv")
        s = mul(s, c, cq, hint="x")
    return s, t


class Transform:
    """One NTT ready to emit pass by pass: the forward (``network="ct"``) or an inverse
    (``"gs"``, ``"dit"``, see :mod:`nttgen.plan.ntt`) network over the forward pass plans
    ``passes`` (an inverse runs them backwards), with its twiddle table built in the function
    under construction. For an inverse, ``scale`` is a constant factor of the output, applied
    without a pass of its own: ``gs`` folds it into the last layer (its twiddles and sums,
    ``scale_first=False``) or Montgomery-multiplies every input by it as it is first loaded
    (``scale_first=True``, which also reduces the inputs, so the layers start from small
    values and any lane value is an acceptable input); ``dit`` multiplies every output by its
    twist times ``scale`` as it is stored (which leaves the outputs reduced). With
    ``centred_last`` the ``gs`` last layer that carries the factor multiplies by Montgomery
    products even where the lane arithmetic's products by constants are Shoup products."""

    def __init__(
        self,
        S: Builder,
        alg: NttAlgebra,
        passes: list[PassPlan],
        *,
        network: Network,
        scale: int | None = None,
        scale_first: bool = False,
        centred_last: bool = False,
        red: Reducer | None = None,
    ) -> None:
        self.S = S
        self.network = network
        self.red = red or Reducer(S)
        inverse = network != "ct"
        self.seq = list(reversed(passes)) if inverse else list(passes)
        fold = scale if (network == "gs" and not scale_first) else None
        # the last layer by Montgomery products: only where it carries the final factor
        self.centred_last = centred_last and fold is not None
        self.depends = _depends(alg, network)
        rows: list[int] = []
        notes: list[tuple[int, str]] = []
        self.bases: list[int] = []
        self.layouts: list[TwiddleLayout] = []
        for k, pas in enumerate(self.seq):
            self.bases.append(len(rows))
            notes.append((len(rows), f"pass {k}: layer(s) {', '.join(map(str, pas.layers))}"))
            self.layouts.append(
                twiddle_layout(
                    alg, pas, S.lanes, network=network, scale=fold, centred_last=self.centred_last
                )
            )
            rows.extend(self.layouts[-1].rows())
        name = {"ct": "zetas", "gs": "zetas_inv", "dit": "zetas_dit"}[network]
        doc = {
            "ct": "twiddles zeta_k = r^brv(k)",
            "gs": "inverse twiddles zeta_k^-1"
            + (" (layer 0 times the final scale)" if fold else "")
            + (", layer 0 in Montgomery form" if self.centred_last else ""),
            "dit": "inverse twiddles of the cyclic DIT network (powers of r^-2)",
        }[network] + (
            f", {alg.arith.pair_doc}, in consumption order: as lane vectors, or as"
            " one pair where all lanes share it (twiddles equal to 1 are not stored)"
        )
        self.table = S.table(name, rows, notes, doc)
        pair_of = alg.arith.montgomery_pair if self.centred_last else alg.arith.twisted
        self.pair = pair_of(scale) if (inverse and scale is not None) else None
        self.folded = fold is not None
        self.scale_first = network == "gs" and scale_first
        # the twist multiplies registers as they are stored, which a gathered pass's scatter
        # then spreads: so its table follows the registers' (loaded) order
        self.twist = (
            _twist_table(S, alg, self.seq[-1].loaded_order, scale) if network == "dit" else None
        )

    def __len__(self) -> int:
        return len(self.seq)

    def _scale_input(self, x: Value) -> Value:
        assert self.pair is not None
        f = self.S.const(self.pair[0], hint="f")
        fq = self.S.const(self.pair[1], hint="fqinv")
        return self.S.mulconst(x, f, fq, hint="x")

    def run(
        self,
        k: int,
        buf: Buffer,
        *,
        src: Buffer | None = None,
        before_store: Callable[[Value], Value] | None = None,
        load_chunk: ChunkSource | None = None,
        store_chunk: ChunkSink | None = None,
    ) -> None:
        """Emit pass ``k`` (in execution order) on ``buf``; see :func:`run_pass` for ``src``,
        ``before_store``, ``load_chunk`` and ``store_chunk``."""
        first, last = k == 0, k == len(self.seq) - 1
        run_pass(
            self.S,
            self.seq[k],
            buf,
            self.table,
            self.bases[k],
            self.layouts[k],
            network=self.network,
            red=self.red,
            depends=self.depends,
            scale=self.pair if self.folded else None,
            centred_last=self.centred_last,
            after_load=self._scale_input if (self.scale_first and first) else None,
            twist=self.twist if last else None,
            before_store=before_store,
            src=src,
            load_chunk=load_chunk,
            store_chunk=store_chunk,
        )


def build_transform(
    S: Builder,
    alg: NttAlgebra,
    passes: list[PassPlan],
    buf: Buffer,
    *,
    network: Network,
    scale: int | None = None,
    scale_first: bool = False,
    centred_last: bool = False,
    before_store: Callable[[Value], Value] | None = None,
    red: Reducer | None = None,
    src: Buffer | None = None,
    also: Sequence[Buffer] = (),
) -> None:
    """Emit every pass of one NTT (see :class:`Transform`) on ``buf``: in place, or reading the
    input from ``src`` (the first pass loads from it, so no copy is needed); ``before_store``
    transforms each register the last pass stores. ``also``: more polynomials transformed in
    place alongside ``buf``, pass by pass: where a pass is one straight run of code, the run
    then holds independent chains (on separate arrays, so no store orders another's loads)
    that the schedule interleaves."""
    t = Transform(
        S,
        alg,
        passes,
        network=network,
        scale=scale,
        scale_first=scale_first,
        centred_last=centred_last,
        red=red,
    )
    for k in range(len(t)):
        for i, b in enumerate((buf, *also)):
            t.run(
                k,
                b,
                src=src if k == 0 and i == 0 else None,
                before_store=before_store if k == len(t) - 1 else None,
            )


def _twist_table(S: Builder, alg: NttAlgebra, order: MemOrder, scale: int | None) -> Table:
    """The ``dit`` inverse's output multipliers r^-j * scale, twisted, as (z, zq) lane vectors
    for each vector of the output (memory ``order``) in address order."""
    L, q = S.lanes, alg.ring.q
    rows: list[int] = []
    for v in range(alg.ring.n // L):
        pairs = [
            alg.arith.twisted(alg.twist(order.index(v * L + k)) * (scale or 1) % q)
            for k in range(L)
        ]
        rows.extend([z for z, _ in pairs] + [zq for _, zq in pairs])
    return S.table(
        "twist",
        rows,
        [],
        "output multipliers r^-j * 2^-depth * beta of the DIT inverse (j: factor index), "
        f"{alg.arith.pair_doc}, per output vector: L lanes of z, then L lanes of the second",
    )


def _permute_pass(
    S: Builder, pas: PassPlan, buf: Buffer, moves: list[Move], *, inverse: bool
) -> None:
    """Apply ``moves`` (or, ``inverse``, their inverses; nothing else) to every chunk of one
    pass's layout."""
    load, store = _chunk_access(S, pas, inverse)

    def chunk(addr: Affine, it: Affine) -> None:
        del it
        regs = load(buf, addr)
        for st in moves:
            apply_move(S, pas, regs, st, inverse=inverse)
        for r, v in enumerate(regs):
            store(buf, addr, r, v)

    nest_loops(S, pas.loops, chunk, hint="j")


def build_permutation(
    S: Builder, passes: list[PassPlan], buf: Buffer, *, to_standard: bool
) -> None:
    """Move ``buf`` between the standard order and the native order the transform leaves, by
    replaying only the passes' shuffles (forward: standard -> native; backwards: native ->
    standard). Coefficient values are not touched."""
    for pas in list(reversed(passes)) if to_standard else list(passes):
        moves: list[Move] = [st for st in pas.steps if isinstance(st, (Shuffle, Zip))]
        if moves or pas.gathered:
            _permute_pass(S, pas, buf, moves[::-1] if to_standard else moves, inverse=to_standard)
