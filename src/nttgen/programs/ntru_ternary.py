"""The small operand's forward DFT as sums of exact products (inputs in [-1, 1]).

For ``polymul_small`` one operand has coefficients in {-1, 0, 1}. Rader's algorithm (the
forward of :mod:`.ntru_lines`) first adds the inputs, so its products by constants see full
residues and each is a Montgomery product. A product of an input in [-1, 1] by a centred
constant is exact in a 16-bit lane, one ``mullo``, so for this operand the DFT along Rader's
axis is cheapest by its defining sum over the nonzero blocks only: each of the r - 1 kept
outputs of a line is a sum of one exact product per nonzero input.

Those sums run in a loop over the lines with one body, because the lines' nonzero blocks are
rotations of each other along Rader's axis. Input blocks j < blocks_in are nonzero; the
blocks rho + w i (w = n / r lines, rho < w) make one line, and block j lies at position
pos(j) of Rader's axis, which the Good–Thomas index map makes additive: pos(rho + w i) =
pos(rho) + pos(w i) mod r. So on the line of blocks rho, rho + w, rho + 2w, ... output k is

    sum_i W(pos(rho) + pos(w i), k) A_(rho + w i) = T(rho, k) * sum_i G(i, k) A_(rho + w i)

with W(e, k) the DFT's matrix, G(i, k) = W(pos(w i), k) the same constants for every line
and T(rho, k) = W(pos(rho), k) a twiddle (T(0, k) = 1: pos(0) = 0). :func:`ternary_lines`
computes G and T from Rader's algorithm itself on unit inputs and checks the factorisation
on every entry. The twiddles are Montgomery products in the next pass, by a table indexed by
the frequency, where each of those inputs needed a reduction anyway (a Montgomery product
reduces it).

The same two loops serve the other operand's forward (``rotated_forward``): each line body
runs Rader's algorithm on line 0's nonzero positions (:func:`rotated_rader_kernel`, zeros
elsewhere, which its trace skips) instead of the sums; the blocks come straight from the
input, with no pass through a grid in Good–Thomas order, and the twiddles take the place
of most of the frequencies pass's reductions.

``forward_small`` (:func:`program_forward_ternary`; ``forward``: :func:`program_forward_rotated`)
    the sums (Rader's algorithm for ``forward``) in a loop over rho, inputs straight from a,
    the rows that run past p through a zero-padded scratch; then for each kept frequency k
    the twiddles and the DFT over the other axes (:func:`~.ntru_lines.rest_kernel`), written
    to the pieces' rows in the order of :func:`~.ntru_lines.program_forward_lines`, sign +1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from ..dsl.builder import Builder
from ..dsl.ir import Affine, LoopVar, Value
from ..plan.maps.cost import Cost
from ..plan.maps.trace import Sym, Trace, trace_map
from .lazy import Reducer
from .ntru_lines import Kernel, copy_tail, kept_frequencies, rest_kernel
from .ntru_lowering import twisted_tables
from .ntru_shape import GoodRaderShape, columns


@dataclass(frozen=True)
class TernaryLines:
    """The factorised DFT along Rader's axis on the nonzero input blocks (module docstring).

    ``per_line``: nonzero blocks per line (rho + w i for i < per_line; blocks at or past
    blocks_in are zero); ``sums[k][i]``: G(i, k) for the kept frequencies k (in program
    order); ``twiddles[rho][k]``: T(rho, k); ``line_of[rho]``: the line (position along the
    other axes, 0 .. w - 1) of the blocks rho + w i."""

    per_line: int
    position: tuple[int, ...]
    sums: tuple[tuple[int, ...], ...]
    twiddles: tuple[tuple[int, ...], ...]
    line_of: tuple[int, ...]


@cache
def ternary_lines(shape: GoodRaderShape) -> TernaryLines:
    """G, T and the line of each residue for ``shape`` (:class:`TernaryLines`), checked on
    every block of the grid; raises ValueError naming the rule where the lines are not
    rotations of one another (never for a Good–Thomas map, whose index map is additive)."""
    r, q = shape.axes[0], shape.q
    width = shape.n // r
    where = shape.map.in_perm
    dft = shape.map.dfts[0]
    # W(e, k): the DFT of a unit input at position e, by the checked algorithm itself
    column = [[v[0] for v in dft.apply([[int(i == e)] for i in range(r)], False, Cost())]
              for e in range(r)]  # fmt: skip
    first, count = kept_frequencies(shape)
    kept = range(first, first + count)

    def pos(j: int) -> int:
        return where[j] // width

    if pos(0) != 0:
        raise ValueError("ternary forward: block 0 must lie at position 0 of Rader's axis")
    line_of = tuple(where[rho] % width for rho in range(width))
    twiddles = tuple(tuple(column[pos(rho)][k] for k in kept) for rho in range(width))
    for rho in range(width):
        for i in range(r):
            j = rho + width * i
            if where[j] % width != line_of[rho] or pos(j) != (pos(rho) + pos(width * i)) % r:
                raise ValueError(f"ternary forward: block {j} is not block {rho} rotated")
            for kk, k in enumerate(kept):
                if column[pos(j)][k] != twiddles[rho][kk] * column[pos(width * i)][k] % q:
                    raise ValueError(
                        f"ternary forward: the DFT entry of block {j} at frequency {k} is not "
                        "its line's twiddle times the shared constant"
                    )
    per_line = -(-shape.blocks_in // width)
    sums = tuple(tuple(column[pos(width * i)][k] for i in range(per_line)) for k in kept)
    position = tuple(pos(width * i) for i in range(per_line))
    return TernaryLines(per_line, position, sums, twiddles, line_of)


@cache
def sums_kernel(shape: GoodRaderShape) -> tuple[Trace, list[Sym | int]]:
    """The trace of one line's sums: input i is block rho + w i, output k (program order)
    is sum_i G(i, k) * input i, accumulated in the order of i."""
    lines = ternary_lines(shape)

    def run(xs: Sequence[Sym]) -> list[list[Sym | int]]:
        out: list[list[Sym | int]] = []
        for row in lines.sums:
            acc: Sym | int = 0
            for x, g in zip(xs, row, strict=True):
                acc = acc + x * g
            out.append([acc])
        return out

    trace, outs = trace_map(run, shape.q, lines.per_line)
    return trace, [part[0] for part in outs]


@cache
def rotated_rader_kernel(shape: GoodRaderShape) -> tuple[Trace, list[Sym | int]]:
    """Rader's algorithm on line 0's nonzero blocks (input i at position pos(w i), zeros
    elsewhere), the kept outputs: what every line computes before its twiddles."""
    lines = ternary_lines(shape)
    r = shape.axes[0]
    dft = shape.map.dfts[0]
    first, count = kept_frequencies(shape)

    def run(xs: Sequence[Sym]) -> list[list[Sym | int]]:
        line: list[list[Sym | int]] = [[0] for _ in range(r)]
        for x, e in zip(xs, lines.position, strict=True):
            line[e] = [x]
        out = dft.apply(line, False, Cost())
        return [out[k] for k in range(first, first + count)]

    trace, outs = trace_map(run, shape.q, lines.per_line)
    kept = [part[0] for part in outs]
    return trace.pruned(kept), kept


def program_forward_ternary(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    thresholds: tuple[int | None, int | None] = (None, None),
) -> None:
    """forward(r, a) for a in ``contract`` within [-1, 1] by the sums of exact products: the
    pieces as :func:`~.ntru_lines.program_forward_lines` writes them (row k = piece k, sign
    +1; rows past the pieces zero), by the two loops of the module docstring; ``thresholds``:
    the reducer's in each (:attr:`~.ntru_lines.LineThresholds.forward`). Raises ValueError
    for a contract wider than [-1, 1]."""
    if contract[0] < -1 or contract[1] > 1:
        raise ValueError(f"the ternary forward needs inputs in [-1, 1], got {list(contract)}")
    _program_forward_two_loops(S, shape, contract, thresholds, rader=False)


def program_forward_rotated(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    thresholds: tuple[int | None, int | None] = (None, None),
) -> None:
    """forward(r, a) for a in any ``contract`` by the same two loops as
    :func:`program_forward_ternary`, with Rader's algorithm on each line's nonzero blocks
    (:func:`rotated_rader_kernel`) in place of the sums: the same pieces, in the same rows."""
    _program_forward_two_loops(S, shape, contract, thresholds, rader=True)


def _program_forward_two_loops(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    thresholds: tuple[int | None, int | None],
    rader: bool,
) -> None:
    """The two loops of the module docstring: the lines (the sums, or Rader's algorithm with
    ``rader``), then the frequencies (twiddles and the DFT over the other axes)."""
    p, m, L = shape.p, shape.m, shape.lanes
    width = shape.n // shape.axes[0]
    lines = ternary_lines(shape)
    count = len(lines.sums)
    r = S.output("r", shape.rows * m, doc="pieces, row k = a mod (x^m - t_k)")
    a = S.input("a", p, contract, doc="coefficients in [-1, 1]")
    sums = S.local("sums", count * width * m)
    zero = S.const(0, hint="zero")
    # rows i of blocks (w i .. w i + w - 1) that lie within p are read from a, the others
    # from a scratch copy, zero above p
    full_rows = min(p // (width * m), lines.per_line)
    tail_at = full_rows * width * m
    tail, lead = copy_tail(S, a, p, tail_at, (lines.per_line - full_rows) * width * m, zero)
    for k in range(len(shape.pieces), shape.rows):
        for i in range(0, m, L):
            S.store(r, k * m + i, zero)

    def block(c0: Affine, rho: Affine, i: int) -> Value:
        if i < full_rows:
            return S.load(a, c0 + (rho + width * i) * m, hint="a")
        return S.load(tail, c0 + (rho + width * (i - full_rows)) * m + lead, hint="a")

    def line_sums(c0: Affine) -> None:
        traced = rotated_rader_kernel(shape) if rader else sums_kernel(shape)
        kernel = Kernel(S, traced, Reducer(S, thresholds[0]))

        def line(v: LoopVar) -> None:
            rho = Affine.of(v)
            kernel.run(
                lambda i: block(c0, rho, i),
                lambda k, x: S.store(sums, c0 + (rho + k * width) * m, x),
            )

        S.loop(width, line, hint="line", unroll=False)

    rho_of = {line: rho for rho, line in enumerate(lines.line_of)}
    twiddle = twiddle_table(S, shape, [list(row) for row in lines.twiddles], "tw")
    fwd_rest = rest_kernel(shape, False)

    def frequencies(c0: Affine) -> None:
        kernel = Kernel(S, fwd_rest, Reducer(S, thresholds[1]))

        def frequency(v: LoopVar) -> None:
            k = Affine.of(v)

            def load(e: int) -> Value:
                rho = rho_of[e]
                val = S.load(sums, c0 + (rho + k * width) * m, hint="s")
                if rho == 0:
                    return val
                return S.mulconst(val, *twiddle(k, rho), hint="tw")

            kernel.run(load, lambda e, x: S.store(r, c0 + (k * width + e) * m, x))

        S.loop(count, frequency, hint="freq", unroll=False)

    # one loop nest per pass: stores inside a loop nest are seen after it ends
    for body in (line_sums, frequencies):
        columns(S, shape, body)


def twiddle_table(
    S: Builder, shape: GoodRaderShape, rows: list[list[int]], name: str
) -> Callable[[Affine, int], tuple[Value, Value]]:
    """A table of the twiddles ``rows[rho][k]`` for rho != 0 (rho = 0 has none: 1), each
    repeated over a vector; returns its loader: the twisted pair of (frequency k, rho)."""
    L, width = shape.lanes, len(rows)
    count = len(rows[0])
    table = [rows[rho][k] for k in range(count) for rho in range(1, width)]
    load = twisted_tables(S, name, table, f"{name}: twiddle of line rho at frequency k", L)
    return lambda k, rho: load((k * (width - 1) + (rho - 1)) * L)
