"""The Good–Rader DFTs as straight-line traces: the forward and the inverse stage.

Each stage lowers the whole DFT's trace at once (:attr:`~.ntru_shape.GoodRaderShape.
forward_trace`, :attr:`~.ntru_shape.GoodRaderShape.inverse_trace`) inside the loop over a
block's columns: the fewest operations (the zero blocks above p are skipped), with each value's
sign carried, not performed (:mod:`.ntru_lowering`). The same DFTs as loops over lines are in
:mod:`.ntru_lines` and :mod:`.ntru_ternary`. See :mod:`.ntru` for the stages in the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dsl.builder import Builder
from ..dsl.ir import Affine
from .lazy import Reducer
from .ntru_lowering import TraceLowering, negate
from .ntru_shape import GoodRaderShape, columns


def program_forward(S: Builder, shape: GoodRaderShape, contract: tuple[int, int]) -> None:
    """forward(r, a): r[k*m + i] = coefficient i of a mod (x^m - t_k) up to the sign of piece
    k (the trace's, see :mod:`.ntru`), for the n pieces; rows n .. rows-1 are zero."""
    p, m = shape.p, shape.m
    L = shape.lanes
    r = S.output("r", shape.rows * m, doc="pieces, row k = a mod (x^m - t_k) up to sign")
    a = S.input("a", p, contract, doc="coefficients")
    padded = S.local("a_pad", shape.blocks_in * m)
    red = Reducer(S)
    zero = S.const(0, hint="zero")
    # the last block, zero above p, then the input over it (the last chunk may overlap)
    for i in range(0, m, L):
        S.store(padded, (shape.blocks_in - 1) * m + i, zero)
    starts = list(range(0, p - L + 1, L))
    if p % L:
        starts.append(p - L)
    for s in starts:
        S.store(padded, s, S.load(a, s, hint="a"))
    for k in range(len(shape.pieces), shape.rows):
        for i in range(0, m, L):
            S.store(r, k * m + i, zero)
    trace, outs = shape.forward_trace
    lower = TraceLowering(S, red)

    def chunk(c0: Affine) -> None:
        got = lower.run(trace, lambda j: (S.load(padded, c0 + j * m, hint="a"), 1), outs)
        for k, x in enumerate(got):
            S.store(r, c0 + k * m, zero if x is None else x[0])

    columns(S, shape, chunk)


def forward_signs(shape: GoodRaderShape) -> list[int]:
    """The sign each piece of :func:`program_forward` carries (+1 or -1; +1 for zero)."""
    trace, outs = shape.forward_trace
    sign: dict[int, int] = {}
    for node in trace.nodes:
        if node.op == "neg":
            sign[node.id] = -sign[node.args[0].id]  # type: ignore[union-attr]
        elif node.op in ("in", "mulc"):
            sign[node.id] = 1
        elif node.op in ("add", "sub"):
            a, b = node.args
            sa, sb = sign[a.id], sign[b.id]  # type: ignore[union-attr]
            sb = -sb if node.op == "sub" else sb
            sign[node.id] = sa if sa == sb else 1
    return [1 if isinstance(o, int) else sign[o.id] for o in outs]


def program_inverse(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    signs: Sequence[int],
    threshold: int | None = None,
    out_bound: int | None = None,
) -> None:
    """inverse(r, c): r = n * c mod the ring's modulus (:attr:`GoodRaderShape.modulus`) for
    the blocks the fold reads, where row k of c is piece k (:attr:`GoodRaderShape.pieces`)
    times ``signs[k]``; ``threshold``: the reducer's (None: the lazy policy alone);
    ``out_bound``: every output within [-out_bound, out_bound] (reduced where its range is
    wider; None: whatever range the lazy policy leaves)."""
    m = shape.m
    r = S.output("r", shape.blocks_out * m, doc="n times the product, low blocks")
    c = S.input("c", shape.rows * m, contract, doc="piecewise products")
    red = Reducer(S, threshold)
    trace, outs = shape.inverse_trace
    lower = TraceLowering(S, red)

    def chunk(c0: Affine) -> None:
        got = lower.run(trace, lambda k: (S.load(c, c0 + k * m, hint="c"), signs[k]), outs)
        for j, x in enumerate(got):
            if x is None:
                val = S.const(0, hint="zero")
            else:
                val = negate(S, red, x)
                if out_bound is not None:
                    val = red.fit_to(val, (-out_bound, out_bound))
            S.store(r, c0 + j * m, val)

    columns(S, shape, chunk)
