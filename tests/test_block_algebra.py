"""The block algorithms (DFTs, Schönhage's maps) run on two carriers of the block algebra:
coefficient lists (how the maps compute) and the Schönhage programs' graph of symbolic blocks,
evaluated exactly. Both must give the same blocks, and the maps' own results."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest

from nttgen.plan.maps.blocks import CoefficientBlocks
from nttgen.plan.maps.cost import Cost
from nttgen.plan.maps.dft import (
    BlockDFT,
    DirectDFT,
    FieldAction,
    Radix2DFT,
    Radix3DFT,
    ShiftAction,
    run_axes,
)
from nttgen.plan.maps.modarith import primitive_root_of_unity
from nttgen.plan.maps.rader import RaderDFT
from nttgen.plan.maps.schoenhage import SchoenhageMap, TruncatedSchoenhageMap
from nttgen.programs.ntru_blocks import BlockGraph, MaybeRef

Q = 4591  # q - 1 = 2 * 3^3 * 5 * 17


def _on_graph(
    M: int,
    inputs: Sequence[list[int] | None],
    run: Callable[[BlockGraph, list[MaybeRef]], list[MaybeRef]],
    length: int | None = None,
) -> list[list[int]]:
    """``run`` on a graph whose input blocks hold ``inputs`` (None: the zero block, never an
    input), each result written by an output of ``length`` coefficients, evaluated."""
    g = BlockGraph(M, Q)
    refs = [None if x is None else g.input(None, 0) for x in inputs]  # type: ignore[arg-type]
    for res in run(g, refs):
        g.output(res, None, 0, length)  # type: ignore[arg-type]
    return g.evaluate([x for x in inputs if x is not None])


def _blocks(rng: random.Random, count: int, length: int) -> list[list[int]]:
    return [[rng.randrange(Q) for _ in range(length)] for _ in range(count)]


def _dfts() -> list[BlockDFT]:
    return [
        Radix2DFT(ShiftAction(Q, 16, 2, 16)),  # twiddles x^(2e) in x^16 + 1
        Radix2DFT(ShiftAction(Q, 16, 8, 4)),
        Radix2DFT(FieldAction(Q, primitive_root_of_unity(2, Q), 2)),
        Radix3DFT(FieldAction(Q, primitive_root_of_unity(3, Q), 3)),
        DirectDFT(FieldAction(Q, primitive_root_of_unity(9, Q), 9)),
        DirectDFT(FieldAction(Q, primitive_root_of_unity(2, Q), 2)),  # w = -1: a subtraction
        DirectDFT(ShiftAction(Q, 16, 4, 8)),
    ]


@pytest.mark.parametrize("dft", _dfts(), ids=lambda d: f"{type(d).__name__}-{d.n}")
@pytest.mark.parametrize("inverse", [False, True])
def test_dft_on_both_carriers(dft: BlockDFT, inverse: bool) -> None:
    """A DFT on coefficient lists and on the graph (one input block zero, which the graph
    skips) gives the same blocks; on lists, ``run`` is ``apply`` (the counted kernels)."""
    rng = random.Random(f"{type(dft).__name__}{dft.n}{inverse}")
    line: list[list[int] | None] = list(_blocks(rng, dft.n, 16))
    line[1] = None
    ints = [[0] * 16 if x is None else x for x in line]
    got = dft.run(CoefficientBlocks(Q, Cost()), ints, inverse)
    assert got == dft.apply(ints, inverse, Cost())
    assert _on_graph(16, line, lambda g, refs: dft.run(g, refs, inverse)) == got


def test_axes_on_both_carriers() -> None:
    """A 3 x 4 array through ``run_axes`` (field axis, then shift axis) on both carriers."""
    rng = random.Random("axes")
    dfts: list[BlockDFT] = [
        Radix3DFT(FieldAction(Q, primitive_root_of_unity(3, Q), 3)),
        Radix2DFT(ShiftAction(Q, 8, 4, 4)),
    ]
    arr = _blocks(rng, 12, 8)
    for inverse in (False, True):
        want = run_axes(CoefficientBlocks(Q, Cost()), arr, (3, 4), dfts, inverse)
        got = _on_graph(8, list(arr), lambda g, r, i=inverse: run_axes(g, r, (3, 4), dfts, i))
        assert got == want


def test_rader_needs_coefficients() -> None:
    """Rader's lane-by-lane convolution runs on coefficient lists only."""
    rader = RaderDFT(Q, 5, primitive_root_of_unity(5, Q))
    line = _blocks(random.Random(5), 5, 4)
    assert rader.run(CoefficientBlocks(Q, Cost()), line, False) == rader.apply(line, False, Cost())
    with pytest.raises(NotImplementedError, match="Rader"):
        rader.run(BlockGraph(4, Q), [None] * 5, False)


MAPS: dict[str, Callable[[], SchoenhageMap | TruncatedSchoenhageMap]] = {
    "plain": lambda: SchoenhageMap(Q, 8, 8),
    "3x8": lambda: SchoenhageMap(Q, 8, 8, odd=3),
    "9x4": lambda: SchoenhageMap(Q, 4, 4, odd=9),  # the direct DFT on the odd axis
    "truncated": lambda: TruncatedSchoenhageMap(Q, 8, 8),
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_schoenhage_on_both_carriers(name: str) -> None:
    """Schönhage's forward and inverse (normalised and not) on coefficient lists and on the
    graph agree; on lists they are the map's ``forward``/``inverse`` (the unnormalised
    inverse times ``inverse_factor``), and the inverse undoes the forward."""
    root = MAPS[name]()
    m, n = root.m, len(root.targets)
    rng = random.Random(name)
    a = [rng.randrange(Q) for _ in range(root.source_degree)]
    a[-m:] = [0] * m  # a zero top block: the graph's zero block
    short = [a[j * m : (j + 1) * m] for j in range(n)]
    ints = CoefficientBlocks(Q, Cost())
    pieces = root.forward_blocks(ints, short)
    assert pieces == list(root.forward(a))
    inputs: list[list[int] | None] = [blk + [0] * m for blk in short[:-1]] + [None]
    assert _on_graph(2 * m, inputs, root.forward_blocks) == pieces

    parts = _blocks(rng, n, 2 * m)  # any parts, not only images: the inverse is linear
    for normalise in (False, True):
        halves = root.inverse_blocks(ints, parts, normalise)

        def inverse(g: BlockGraph, refs: list[MaybeRef], z: bool = normalise) -> list[MaybeRef]:
            return root.inverse_blocks(g, refs, z)

        assert _on_graph(2 * m, list(parts), inverse, m) == halves, f"normalise={normalise}"
    flat = [x for blk in halves for x in blk]
    assert flat == root.inverse(parts)
    raw = root.inverse_blocks(ints, pieces, False)
    assert [x for blk in raw for x in blk] == [root.inverse_factor() * x % Q for x in a]


def test_evaluate_follows_shifts_and_signs() -> None:
    """The graph's evaluation: x^s reads wrap negated, negations flip, half nodes read the
    low half and ``high`` the top half (so the comparisons above can fail)."""
    g = BlockGraph(4, Q)
    x = g.input(None, 0)  # type: ignore[arg-type]
    g.output(g.shift(x, 1), None, 0)  # type: ignore[arg-type]
    g.output(g.sub(g.mulc(x, 2), g.shift(x, 5)), None, 0)  # type: ignore[arg-type]
    g.output(g.half_add(g.low(x), g.high(x)), None, 0, 2)  # type: ignore[arg-type]
    g.output(None, None, 0, 3)  # type: ignore[arg-type]
    assert g.evaluate([[1, 2, 3, 4]]) == [
        [Q - 4, 1, 2, 3],  # x (1 + 2x + 3x^2 + 4x^3) mod x^4 + 1
        [Q - 2, 4 + 1, 6 + 2, 8 + 3],  # 2a - x^5 a = 2a + x a
        [1 + 3, 2 + 4],
        [0, 0, 0],
    ]
