"""Data layouts of a vectorised transform: which coefficient sits in which lane of which register.

The model (as in FFT code generators): a logical position i in [0, n) has log2(n) index bits.
Memory holds position i at address sum(bit(i, perm[p]) << p): *position bit* p holds *index bit*
perm[p] (:class:`MemOrder`). A vector load takes L = 2^lane_bits consecutive addresses, so the low
``lane_bits`` position bits are lane bits. Within one chunk of a pass, a few more position bits
(the *slots*) select one of the chunk's registers; the remaining position bits are enumerated by
loops.

A butterfly on index bit t works register-wise when t sits at a slot. When t sits at a lane, a
``shuffle`` at lane distance 2^p' between registers that differ in slot s swaps the contents of
position bits s and p' (see :func:`nttgen.dsl.semantics.shuffle`): a transposition of ``perm``.
This module plans those steps for any L, ISA-independently; every ISA then only has to provide
the shuffle for each distance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class MemOrder:
    """A bit-permutation order: position bit p holds index bit perm[p]."""

    perm: tuple[int, ...]

    @staticmethod
    def identity(bits: int) -> MemOrder:
        """The natural order (address = logical position)."""
        return MemOrder(tuple(range(bits)))

    @property
    def bits(self) -> int:
        """log2 of the number of positions."""
        return len(self.perm)

    def position_of_bit(self, index_bit: int) -> int:
        """The position bit where an index bit lives."""
        return self.perm.index(index_bit)

    def address(self, i: int) -> int:
        """The address that holds logical position i."""
        return sum(((i >> b) & 1) << p for p, b in enumerate(self.perm))

    def index(self, address: int) -> int:
        """The logical position stored at an address."""
        return sum(((address >> p) & 1) << b for p, b in enumerate(self.perm))

    def swap(self, p1: int, p2: int) -> MemOrder:
        """The order after exchanging the contents of position bits p1 and p2."""
        perm = list(self.perm)
        perm[p1], perm[p2] = perm[p2], perm[p1]
        return MemOrder(tuple(perm))

    def zip(self, slot: int, w: int, g: int, inverse: bool = False) -> MemOrder:
        """The order after a :class:`Zip` at position bit ``slot`` (see
        :func:`nttgen.dsl.semantics.zip_lanes`): forward, the slot's index bit goes to lane bit
        w, lane bits w .. g-2 move one up and lane bit g-1 goes to the slot; ``inverse`` undoes
        that."""
        perm = list(self.perm)
        cycle = [slot, *range(w, g)]  # forward: each position takes the content of the previous
        if inverse:
            cycle.reverse()
        moved = [perm[p] for p in cycle]
        for p, bit in zip(cycle, [moved[-1], *moved[:-1]], strict=True):
            perm[p] = bit
        return MemOrder(tuple(perm))

    @property
    def is_identity(self) -> bool:
        """Whether this is the natural order."""
        return self.perm == tuple(range(self.bits))


@dataclass(frozen=True)
class Butterfly:
    """A butterfly layer applied to every register pair that differs in slot ``slot``."""

    layer: int
    slot: int
    bit: int


@dataclass(frozen=True)
class Shuffle:
    """Exchange slot ``slot`` with lane position bit ``lane_bit`` (distance 2^lane_bit)."""

    slot: int
    lane_bit: int


@dataclass(frozen=True)
class Zip:
    """Rotate slot ``slot`` into the lanes by an interleave of elements of 2^``width`` lanes
    inside groups of 2^``group`` lanes (:func:`nttgen.dsl.semantics.zip_lanes`): the lane bit
    group-1 comes out into the slot. A transform run backwards applies the inverse."""

    slot: int
    width: int
    group: int


Step = Butterfly | Shuffle | Zip
Move = Shuffle | Zip


@dataclass(frozen=True)
class MoveCosts:
    """What an ISA pays to bring a lane bit into a register slot, in vector instructions per
    register pair, as (forward, inverse) pairs (a transform run backwards applies each move's
    inverse): ``swap[p]`` for a :class:`Shuffle` of lane position p; ``zip[w]`` for a
    :class:`Zip` of 2^w-lane elements in groups of 2^``zip_group`` lanes (empty when the ISA
    has no such interleave). The planner picks, per pass, the moves of least total cost."""

    swap: tuple[tuple[int, int], ...]
    zip_group: int | None = None
    zip: tuple[tuple[int, int], ...] = ()

    def of(self, move: Move) -> int:
        """Forward plus inverse cost of one move."""
        if isinstance(move, Shuffle):
            return sum(self.swap[move.lane_bit])
        return sum(self.zip[move.width])


@dataclass(frozen=True)
class LoopRun:
    """A loop over ``width`` consecutive position bits starting at ``start``. ``twiddles``
    says whether twiddle values depend on it (such loops are nested outside the others)."""

    start: int
    width: int
    twiddles: bool

    @property
    def count(self) -> int:
        """Trip count."""
        return 1 << self.width


@dataclass(frozen=True)
class PassPlan:
    """One pass: load a chunk of registers, run ``steps``, store the chunk back.

    ``gathered`` lists (lane position, slot position) pairs exchanged *as the chunk is
    loaded*: each register takes its lanes from addresses that differ in the slot positions
    (an indexed load, a gather by constant offsets) instead of consecutive ones, so those lane
    bits need no in-register move. The chunk is stored to consecutive addresses, so the memory
    order changes as if the moves had been made; a transform run backwards loads consecutive
    addresses and scatters its stores."""

    layers: tuple[int, ...]
    slots: tuple[int, ...]
    steps: tuple[Step, ...]
    loops: tuple[LoopRun, ...]
    order_in: MemOrder
    order_out: MemOrder
    lane_bits: int
    gathered: tuple[tuple[int, int], ...] = ()

    @property
    def registers(self) -> int:
        """Registers per chunk."""
        return 1 << len(self.slots)

    @property
    def loaded_order(self) -> MemOrder:
        """The order of the chunk's registers right after loading (``order_in`` with the
        gathered exchanges made)."""
        cur = self.order_in
        for lane_pos, slot_pos in self.gathered:
            cur = cur.swap(lane_pos, slot_pos)
        return cur

    def gather_offsets(self) -> tuple[list[int], tuple[int, ...]]:
        """For a pass with gathered bits: (each register's offset, each lane's offset) in the
        memory of ``order_in``, to add to a chunk's base address. A register's offset has the
        bits of its slots, a lane's the bits of its lane number, each at the position where
        the gather exchanged it (the lane bits not exchanged stay where they are)."""
        where = list(range(max(self.slots, default=0) + 1))
        for lane_pos, slot_pos in self.gathered:
            where[lane_pos], where[slot_pos] = slot_pos, lane_pos
        registers = [
            sum(((r >> j) & 1) << where[p] for j, p in enumerate(self.slots))
            for r in range(self.registers)
        ]
        lanes = tuple(
            sum(((k >> b) & 1) << where[b] for b in range(self.lane_bits))
            for k in range(1 << self.lane_bits)
        )
        return registers, lanes

    def slot_orders(self) -> list[MemOrder]:
        """The order *before* each step (and the final one), for computing twiddle lanes."""
        orders = [self.loaded_order]
        cur = self.loaded_order
        for st in self.steps:
            cur = apply_move(cur, self.slots, st)
            orders.append(cur)
        return orders


def apply_move(order: MemOrder, slots: tuple[int, ...] | list[int], step: Step) -> MemOrder:
    """The order after one step of a pass whose slots are ``slots`` (butterflies move
    nothing)."""
    if isinstance(step, Shuffle):
        return order.swap(slots[step.slot], step.lane_bit)
    if isinstance(step, Zip):
        return order.zip(slots[step.slot], step.width, step.group)
    return order


def plan_pass(
    order: MemOrder,
    layers: list[int],
    log_n: int,
    lane_bits: int,
    extra_slots: int = 0,
    class_slots: int = 0,
    park_bits: tuple[int, ...] = (),
    costs: MoveCosts | None = None,
    gather: bool = False,
) -> PassPlan:
    """Plan one forward pass (see :func:`_plan_pass`). With ``gather`` the lane bits the pass
    needs in slots are exchanged as the chunk is loaded (:attr:`PassPlan.gathered`). With
    ``costs`` whose ISA has zips, every mix of swaps and zips that brings the lane bits into
    slots is tried and the cheapest (forward plus inverse) kept; otherwise every lane bit is
    swapped in."""
    args = (order, layers, log_n, lane_bits, extra_slots, class_slots, park_bits)
    if gather:
        return _plan_gathered(*args)
    if costs is None or costs.zip_group is None:
        return _plan_pass(*args)
    best: tuple[int, int, PassPlan] | None = None
    todo: list[tuple[str | int, ...]] = [()]
    while todo:
        choices = todo.pop()
        try:
            plan = _plan_pass(*args, zip_group=costs.zip_group, choices=choices)
        except _NeedsChoice:
            widths = range(min(costs.zip_group - 1, len(costs.zip)))
            todo += [(*choices, c) for c in ("swap", *widths)]
            continue
        except _BadChoice:
            continue
        moves = [st for st in plan.steps if isinstance(st, (Shuffle, Zip))]
        total = sum(costs.of(m) for m in moves)
        zips = sum(isinstance(m, Zip) for m in moves)
        if best is None or (total, zips) < best[:2]:
            best = (total, zips, plan)
    assert best is not None
    return best[2]


def _plan_gathered(
    order: MemOrder,
    layers: list[int],
    log_n: int,
    lane_bits: int,
    extra_slots: int = 0,
    class_slots: int = 0,
    park_bits: tuple[int, ...] = (),
) -> PassPlan:
    """A pass whose butterfly (and ``park_bits``) index bits found in the lanes are exchanged
    with positions above the lanes as the chunk is loaded: the highest positions whose index
    bit the pass does not use become slots for them. The rest is :func:`_plan_pass` on the
    loaded order, which then needs no lane move."""
    bits = [log_n - 1 - layer for layer in layers]
    wanted = [b for b in [*bits, *park_bits] if order.position_of_bit(b) < lane_bits]
    spare = [p for p in range(log_n - 1, lane_bits - 1, -1) if order.perm[p] not in bits]
    spare = [p for p in spare if order.perm[p] not in park_bits]
    if len(spare) < len(wanted):
        raise ValueError(
            f"a gathered pass of layers {layers} needs {len(wanted)} positions above the "
            f"{1 << lane_bits} lanes that it does not use; there are {len(spare)}"
        )
    gathered = tuple((order.position_of_bit(b), p) for b, p in zip(wanted, spare, strict=False))
    loaded = order
    for lane_pos, slot_pos in gathered:
        loaded = loaded.swap(lane_pos, slot_pos)
    plan = _plan_pass(loaded, layers, log_n, lane_bits, extra_slots, class_slots, park_bits)
    assert not any(isinstance(st, (Shuffle, Zip)) for st in plan.steps)
    # a gathered park bit the butterflies did not need in a slot gets one (appended: the
    # steps name slots by their index)
    slots = plan.slots + tuple(p for _, p in gathered if p not in plan.slots)
    if slots != plan.slots:
        loops = [p for p in range(lane_bits, log_n) if p not in slots]
        plan = replace(
            plan, slots=slots, loops=loop_runs(loops, plan.order_out, lambda j: j > min(bits))
        )
    return replace(plan, order_in=order, gathered=gathered)


class _NeedsChoice(Exception):
    """The planner reached a lane bit with no choice left for it."""


class _BadChoice(Exception):
    """A choice cannot be applied (a zip whose group's top lane bit is not the one needed)."""


def _plan_pass(
    order: MemOrder,
    layers: list[int],
    log_n: int,
    lane_bits: int,
    extra_slots: int = 0,
    class_slots: int = 0,
    park_bits: tuple[int, ...] = (),
    *,
    zip_group: int | None = None,
    choices: tuple[str | int, ...] = (),
) -> PassPlan:
    """Plan one forward pass over consecutive ``layers`` starting from memory ``order``.

    Butterfly bits found at positions above the lanes become slots; a butterfly bit found in the
    lanes is swapped into the slot whose butterfly finished first (or into a spare slot taken
    from the loop bits). ``extra_slots`` more loop bits (the highest) are made slots up front,
    for instruction-level parallelism. ``class_slots`` loop bits just below the pass's lowest
    butterfly bit become slots too: in the inverse transform those bits tell a coefficient that
    was a sum from one that was a Montgomery product, so giving them their own registers lets
    the analysis track the two ranges apart instead of joining them over a loop. ``park_bits``
    are index bits moved out of the lanes into slots after the last butterfly (base
    multiplication wants the two coefficients of a degree-2 factor in different registers).

    With ``zip_group`` (the ISA's interleave group, in lane bits), the k-th lane bit brought
    into a slot uses ``choices[k]``: ``"swap"`` (a :class:`Shuffle`) or w (a :class:`Zip` of
    2^w-lane elements, possible only when the bit is the group's top lane bit); running out
    of choices raises :class:`_NeedsChoice`, so a caller can enumerate them."""
    moves = iter(choices)

    def move_in(slot: int, pos: int, cur: MemOrder) -> tuple[Step, MemOrder]:
        if zip_group is None:
            return Shuffle(slot, pos), cur.swap(slots[slot], pos)
        choice = next(moves, None)
        if choice is None:
            raise _NeedsChoice
        if choice == "swap":
            return Shuffle(slot, pos), cur.swap(slots[slot], pos)
        assert isinstance(choice, int)
        if pos != zip_group - 1:
            raise _BadChoice
        return Zip(slot, choice, zip_group), cur.zip(slots[slot], choice, zip_group)

    bits = [log_n - 1 - layer for layer in layers]
    free = [p for p in range(log_n - 1, lane_bits - 1, -1) if order.perm[p] not in bits]
    below = [p for p in free if order.perm[p] < min(bits)]
    below.sort(key=lambda p: -order.perm[p])
    spares = free[:extra_slots]
    spares += [p for p in below[:class_slots] if p not in spares]
    butterfly_slots = [p for p in range(lane_bits, log_n) if order.perm[p] in bits]
    slots = sorted(set(spares) | set(butterfly_slots), reverse=True)
    done = [slots.index(p) for p in spares]  # slots free to receive a lane bit, oldest first
    steps: list[Step] = []
    cur = order
    for layer, t in zip(layers, bits, strict=True):
        pos = cur.position_of_bit(t)
        if pos < lane_bits:
            if not done:
                cand = [p for p in free if p not in slots]
                if not cand:
                    raise ValueError("no register slot is free to shuffle a lane bit into")
                slots.append(cand[0])
                done.append(len(slots) - 1)
            slot = done.pop(0)
            step, cur = move_in(slot, pos, cur)
            steps.append(step)
            pos = slots[slot]
        slot = slots.index(pos)
        steps.append(Butterfly(layer, slot, t))
        done.append(slot)
    for b in park_bits:
        pos = cur.position_of_bit(b)
        if pos >= lane_bits:
            continue
        slot = done.pop(0)
        step, cur = move_in(slot, pos, cur)
        steps.append(step)
        done.append(slot)
    loop_positions = [p for p in range(lane_bits, log_n) if p not in slots]
    return PassPlan(
        layers=tuple(layers),
        slots=tuple(slots),
        steps=tuple(steps),
        loops=loop_runs(loop_positions, cur, lambda j: j > min(bits)),
        order_in=order,
        order_out=cur,
        lane_bits=lane_bits,
    )


def loop_runs(
    positions: list[int], order: MemOrder, depends: Callable[[int], bool]
) -> tuple[LoopRun, ...]:
    """Group loop positions into runs of consecutive bits with the same twiddle dependence
    (``depends(index_bit)`` says whether twiddles vary with the index bit a position holds);
    twiddle-dependent runs first (outermost), each group from high bits to low."""
    runs: list[LoopRun] = []
    for p in sorted(positions):
        dep = depends(order.perm[p])
        if runs and runs[-1].start + runs[-1].width == p and runs[-1].twiddles == dep:
            last = runs.pop()
            runs.append(LoopRun(last.start, last.width + 1, dep))
        else:
            runs.append(LoopRun(p, 1, dep))
    outer = sorted((r for r in runs if r.twiddles), key=lambda r: -r.start)
    inner = sorted((r for r in runs if not r.twiddles), key=lambda r: -r.start)
    return tuple(outer + inner)


def plan_forward(
    log_n: int,
    depth: int,
    lane_bits: int,
    merge: list[int],
    extra_slots: list[int] | None = None,
    order: MemOrder | None = None,
    class_slots: int = 0,
    park_bits: tuple[int, ...] = (),
    costs: MoveCosts | None = None,
    gather: bool = False,
) -> list[PassPlan]:
    """Plan all forward passes: ``merge`` lists how many consecutive layers each pass runs
    (summing to ``depth``); ``extra_slots`` gives per pass the extra registers for ILP;
    ``class_slots``, ``costs`` and ``gather`` are passed to every :func:`plan_pass`,
    ``park_bits`` to the last one."""
    if sum(merge) != depth or any(m < 1 for m in merge):
        raise ValueError(f"merge plan {merge} must be positive and sum to depth {depth}")
    if lane_bits > log_n - 1:
        raise ValueError(f"{1 << lane_bits} lanes is too wide for n = {1 << log_n}")
    extra = extra_slots or [0] * len(merge)
    cur = order or MemOrder.identity(log_n)
    plans: list[PassPlan] = []
    first = 0
    for k, (m, e) in enumerate(zip(merge, extra, strict=True)):
        park = park_bits if k == len(merge) - 1 else ()
        layers = list(range(first, first + m))
        p = plan_pass(cur, layers, log_n, lane_bits, e, class_slots, park, costs, gather)
        plans.append(p)
        cur = p.order_out
        first += m
    return plans


def plan_regroup(
    order: MemOrder, log_n: int, lane_bits: int, index_bit: int
) -> tuple[tuple[int, ...], tuple[Shuffle, ...], MemOrder]:
    """Plan a chunk in which ``index_bit`` is a slot (for base multiplication pairs): return
    (slots, shuffles to apply after loading, the order inside registers)."""
    pos = order.position_of_bit(index_bit)
    if pos >= lane_bits:
        return (pos,), (), order
    cand = [p for p in range(lane_bits, log_n)]
    slot_pos = cand[0]
    return (slot_pos,), (Shuffle(0, pos),), order.swap(slot_pos, pos)


def simd_plan(
    log_n: int,
    depth: int,
    lane_bits: int,
    registers: int = 16,
    gathered_park: int | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A default pass plan for a SIMD ISA with ``registers`` vector registers: chunks of half of
    them (the rest hold twiddles and temporaries). The last pass runs every layer whose
    butterfly bit lies in its chunk (slot bits plus lane bits: the low log2(R) + lane_bits
    bits, with shuffles for the lane bits); the layers above run in passes of at most log2(R)
    layers, filled up with extra slots to R registers. With ``gathered_park`` (the number of
    park bits; plans whose lane bits are gathered at load time) the last pass runs only as
    many layers as leave a slot to each park bit. Returns (merge, extra_slots)."""
    chunk_bits = max((registers // 2).bit_length() - 1, 1)
    lowest = log_n - depth  # the lowest butterfly bit (1 for degree-2 base cases)
    if gathered_park is None:
        last = max(min(depth, chunk_bits + lane_bits - lowest), 1)
    else:  # no slot is reused: every butterfly and parked bit needs its own
        last = max(min(depth, chunk_bits - gathered_park), 1)
    rest = depth - last
    merge: list[int] = []
    while rest > 0:
        m = min(chunk_bits, rest)
        merge.append(m)
        rest -= m
    merge.reverse()
    merge.append(last)
    extra = [max(chunk_bits - m, 0) for m in merge[:-1]] + [0]
    return tuple(merge), tuple(extra)
