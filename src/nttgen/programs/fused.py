"""polymul's fused core: the second operand's forward NTT, the base multiplication and the
inverse NTT as one pass over registers, with no scratch array.

When the forward transform's last pass holds the whole polynomial in registers (one chunk, no
loop: n = 256 on AVX2, every n <= 512 on AVX-512), the earlier passes' butterflies can run in
that chunk too (:func:`whole_pass`). The core then loads b once, runs the forward layers,
multiplies by a_hat (which polymul's first transform left in r, in the layout this pass
stores), runs the inverse layers on the same registers and stores r once: b_hat and the
product never go to memory, and basemul's call disappears.

Where the registers hold two polynomials with room to spare (AVX-512's 32), the core can run
both forward transforms (``mul_both``, the build option ``fuse_forwards``): the transforms are
two independent dependency chains, each too long for the core to hide its latency alone, and
interleaved by the statement schedule they overlap. polymul is then one call.

Why no scratch array: a stack array's address relative to the caller's arrays is accidental,
and where the two coincide modulo 4 KiB, loads from one wait for unrelated stores to the other
(the CPU compares only the low 12 address bits at first). The unfused NewHope-1024 AVX2 product,
which keeps two stack arrays, measured 2,123 and 2,735 ticks in the same binary, the stack moved
only by the environment's size; with the products kept in registers and a_hat in r, no array
of the kernel sits at an accidental distance from the caller's (register spills still use the
stack).
"""

from __future__ import annotations

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Table, Value
from ..plan.layout import Butterfly, MemOrder, PassPlan, Step
from ..plan.ntt import NttAlgebra
from .lazy import Reducer
from .ntt import Transform, register_offsets
from .pointwise import base_product, gamma_lanes, reduce_to_standard


def whole_pass(passes: list[PassPlan]) -> PassPlan | None:
    """The forward transform ``passes`` as one pass on the last pass's chunk, or None where
    that chunk does not hold the whole polynomial (its pass loops), where a pass gathers, or
    where an earlier pass moves lanes or butterflies a memory bit the last pass keeps in lanes.
    The earlier passes' butterflies run first, on the slots holding their memory bits; the
    memory order they see is the one they saw as passes of their own."""
    last = passes[-1]
    if last.loops or any(p.gathered for p in passes):
        return None
    steps: list[Step] = []
    for p in passes[:-1]:
        for st in p.steps:
            if not isinstance(st, Butterfly) or p.slots[st.slot] not in last.slots:
                return None
            steps.append(Butterfly(st.layer, last.slots.index(p.slots[st.slot]), st.bit))
    if passes[0].order_in != last.order_in:  # an earlier pass moved lanes
        return None
    return PassPlan(
        layers=tuple(layer for p in passes for layer in p.layers),
        slots=last.slots,
        steps=(*steps, *last.steps),
        loops=(),
        order_in=passes[0].order_in,
        order_out=last.order_out,
        lane_bits=last.lane_bits,
    )


def pair_slot(whole: PassPlan, degree: int) -> int | None:
    """The register slot of ``whole`` (see :func:`whole_pass`) that holds a degree-2
    factor's two coefficients (-1 for a complete NTT, which multiplies register by register),
    or None when they share a register (their product would need shuffles first)."""
    if degree == 1:
        return -1
    pos = whole.order_out.perm.index(0)  # the memory bit holding the factor's bit 0
    return whole.slots.index(pos) if pos in whole.slots else None


def _gamma_table(
    S: Builder, alg: NttAlgebra, order: MemOrder, pairs: list[tuple[int, int]], offsets: list[int]
) -> Table:
    """The twisted roots of the factors register pair k holds, lane by lane: L lanes of z,
    then L lanes of zq per pair."""
    rows = [x for r0, _ in pairs for x in gamma_lanes(alg, order, offsets[r0], S.lanes)]
    return S.table(
        "gammas_fused",
        rows,
        doc=f"roots g_j of the degree-2 factors x^2 - g_j, {alg.arith.pair_doc}, per register"
        " pair of the fused pass: L lanes of z, then L lanes of the second",
    )


def program_mul_core(
    S: Builder,
    alg: NttAlgebra,
    whole: PassPlan,
    inverse: Transform,
    slot: int,
    r: Buffer,
    b: Buffer,
    a: Buffer | None = None,
) -> None:
    """r <- NTT^-1(r o NTT(b)) reduced to [0, q), standard order, where r holds a_hat on entry
    (NTT domain, native order, within the forward NTT's output contract) and b is in standard
    order within (-q, q); with ``a`` (standard order within (-q, q)) r <- NTT^-1(NTT(a) o
    NTT(b)) instead, both forward transforms held in registers at once, so that their two
    independent dependency chains can overlap. ``whole`` is the transform as one pass
    (:func:`whole_pass`), ``inverse`` the inverse NTT built in ``S`` over ``[whole]`` (its
    network, final scale and reduction policy), ``slot`` from :func:`pair_slot`. Every load of
    r precedes every store to it, so a_hat may share r."""
    offsets = register_offsets(whole)
    held: list[list[Value]] = []
    held_a: list[list[Value]] = []
    sources = [(b, held)] + ([(a, held_a)] if a is not None else [])
    for src, into in sources:
        forward = Transform(S, alg, [whole], network="ct", red=Reducer(S))
        forward.run(
            0,
            r,
            src=src,
            before_store=forward.red.fit_for_product,
            store_chunk=lambda addr, regs, into=into: into.append(regs),  # type: ignore[misc]
        )
    if slot < 0:
        pairs = [(reg, reg) for reg in range(whole.registers)]
        gammas = None
    else:
        pairs = [(x, x | 1 << slot) for x in range(whole.registers) if not x >> slot & 1]
        gammas = _gamma_table(S, alg, whole.order_out, pairs, offsets)
    red = Reducer(S)

    def products(addr: Affine) -> list[Value]:
        (regs,) = held  # one chunk: nothing separates the two directions
        if held_a:
            (xa,) = held_a
        else:
            xa = [S.load(r, addr + off, hint="a") for off in offsets]
        out = list(regs)
        for k, (r0, r1) in enumerate(pairs):
            gamma = None
            if gammas is not None:
                at = 2 * S.lanes * k
                gamma = (
                    S.load(gammas, at, hint="gamma"),
                    S.load(gammas, at + S.lanes, hint="gammaqinv"),
                )
            which = [r0] if r0 == r1 else [r0, r1]
            prod = base_product(S, red, [xa[x] for x in which], [regs[x] for x in which], gamma)
            for x, p in zip(which, prod, strict=True):
                out[x] = p
        return out

    inverse.run(0, r, load_chunk=products, before_store=lambda x: reduce_to_standard(S, x))
