"""The Good–Rader DFTs as loops over lines: one kernel per axis group, run on every line.

The straight-line stages of :mod:`.ntru_dft` lower the whole DFT's trace at once: the fewest
operations (the zero blocks above p are skipped), but thousands of instructions that run once
per call, decoded afresh each time, and that keep more values live than there are registers.
Here each DFT is two loops whose bodies are the traces of single axes, over a scratch array in
the Good–Thomas order (row-major over the axes, block (k_r, k_rest) at k_r * n/r + k_rest):

``forward``
    the input blocks to their Good–Thomas positions (zero elsewhere); for each of the n/r
    lines along Rader's axis, the Rader DFT of its r blocks; for each of Rader's frequencies
    (those the program keeps: all r, or 1 .. r-1 for Phi_r, see
    :class:`~.ntru_shape.GoodRaderShape`), the DFT over the remaining axes of its n/r blocks,
    written to the pieces' rows.
``inverse``
    the same in reverse (Rader's zero frequency, where left out, enters as zero), then each
    output block from its Good–Thomas position, less the top block it folds onto modulo
    Phi_r (:attr:`~.ntru_shape.GoodRaderShape.inverse_trace`), within the output bound.

A loop body is one line's kernel, whatever the line, so every value stored between the passes
is stored with sign +1 (a traced value of sign -1 is negated first): the rows the forward
writes are the pieces themselves, and the inverse takes them so. Below L = m lanes each pass
runs inside the loop over the block's columns, one loop nest per pass (a nest's stores are
seen by the analysis once it ends). Used where ``NtruConfig.dft_lines`` says so (AVX2 and
RVV, where it measured faster; docs/design.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, LoopVar, Value
from ..plan.maps.cost import Cost
from ..plan.maps.dft import apply_axes
from ..plan.maps.trace import Sym, Trace, trace_map
from .lazy import Reducer
from .ntru_lowering import TraceLowering, negate
from .ntru_shape import GoodRaderShape, columns


@cache
def rader_kernel(shape: GoodRaderShape, inverse: bool) -> tuple[Trace, list[Sym | int]]:
    """The trace of the DFT along Rader's axis on one line of r single coefficients: forward,
    r inputs and the outputs the program keeps (without frequency 0 for Phi_r); inverse, the
    kept frequencies as inputs (frequency 0 zero for Phi_r) and all r outputs."""
    r = shape.axes[0]
    dft = shape.map.dfts[0]
    kept = list(range(1, r)) if shape.cyclotomic else list(range(r))

    def run(xs: Sequence[Sym]) -> list[list[Sym | int]]:
        if not inverse:
            out = dft.apply([[x] for x in xs], False, Cost())
            return [out[k] for k in kept]
        line: list[list[Sym | int]] = [[0] for _ in range(r)]
        for k, x in zip(kept, xs, strict=True):
            line[k] = [x]
        return dft.apply(line, True, Cost())

    trace, outs = trace_map(run, shape.q, r if not inverse else len(kept))
    kept_outs = [part[0] for part in outs]
    return trace.pruned(kept_outs), kept_outs


@cache
def rest_kernel(shape: GoodRaderShape, inverse: bool) -> tuple[Trace, list[Sym | int]]:
    """The trace of the DFT over the axes after Rader's on one frequency's n/r single
    coefficients (row-major over those axes), forward or inverse."""
    axes, dfts = shape.axes[1:], shape.map.dfts[1:]
    width = shape.n // shape.axes[0]
    trace, outs = trace_map(
        lambda xs: apply_axes([[x] for x in xs], axes, dfts, inverse, Cost()), shape.q, width
    )
    return trace, [part[0] for part in outs]


def kept_frequencies(shape: GoodRaderShape) -> tuple[int, int]:
    """(first, count) of Rader's frequencies the program keeps."""
    r = shape.axes[0]
    return (1, r - 1) if shape.cyclotomic else (0, r)


def copy_tail(
    S: Builder, a: Buffer, p: int, at: int, length: int, zero: Value
) -> tuple[Buffer, int]:
    """A scratch copy of a[at .. at + length - 1], zero from p on (``zero``: the zero vector),
    for vector loads that would run past a's p coefficients. Returns the scratch and its
    lead: coefficient x is at lead + x - at. The copy moves whole vectors, the last one
    a[p - L .. p - 1] (it may overlap the one before); where that starts below ``at``, the
    scratch starts one vector early (lead L) to take it. The copy must end at or past p."""
    L = S.lanes
    if at + length < p:
        raise ValueError(f"a tail copy from {at} of {length} coefficients ends before p = {p}")
    partial = (p - at) % L != 0 and at < p
    lead = L if partial and p - L < at else 0
    tail = S.local("a_tail", lead + length)
    for i in range(0, lead + length, L):
        S.store(tail, i, zero)
    starts = list(range(at, p - L + 1, L))
    if partial:
        starts.append(p - L)
    for s in starts:
        S.store(tail, lead + s - at, S.load(a, s, hint="a"))
    return tail, lead


class Kernel:
    """One axis kernel lowered in a loop body: its trace, and a lowering whose constants
    are broadcast once, before the loop (where this is built)."""

    def __init__(self, S: Builder, traced: tuple[Trace, list[Sym | int]], red: Reducer) -> None:
        self.S, (self.trace, self.outs) = S, traced
        self.lower = TraceLowering(S, red)
        self.lower.preload(self.trace)

    def run(self, load: Callable[[int], Value], store: Callable[[int, Value], None]) -> None:
        """Lower the kernel: input i from ``load(i)`` (sign +1), output j to
        ``store(j, value)`` with sign +1 (zero outputs stored as zero)."""
        S, red = self.S, self.lower.red
        got = self.lower.run(self.trace, lambda i: (load(i), 1), self.outs)
        for j, x in enumerate(got):
            store(j, S.const(0, hint="zero") if x is None else negate(S, red, x))


def program_forward_lines(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    thresholds: tuple[int | None, int | None] = (None, None),
) -> None:
    """forward(r, a) as :func:`~.ntru_dft.program_forward` computes it (row k = piece k, sign +1;
    rows past the pieces zero), by the two loops of the module docstring; ``thresholds``:
    the reducer's in each loop (:attr:`LineThresholds.forward`)."""
    p, m, n, L = shape.p, shape.m, shape.n, shape.lanes
    width = n // shape.axes[0]
    r = S.output("r", shape.rows * m, doc="pieces, row k = a mod (x^m - t_k)")
    a = S.input("a", p, contract, doc="coefficients")
    grid = S.local("grid", n * m)
    lines = S.local("lines", n * m)
    where = shape.map.in_perm
    zero = S.const(0, hint="zero")
    # the last two input blocks through a scratch pair, zero above p; the blocks below
    # straight from a
    last = shape.blocks_in - 1
    first_tail = max(last - 1, 0)
    tail, lead = copy_tail(S, a, p, first_tail * m, 2 * m, zero)

    def place(c0: Affine) -> None:
        for j in range(n):
            at = c0 + where[j] * m
            if j < first_tail:
                S.store(grid, at, S.load(a, c0 + j * m, hint="a"))
            elif j <= last:
                S.store(grid, at, S.load(tail, c0 + (j - first_tail) * m + lead, hint="a"))
            else:
                S.store(grid, at, zero)

    first, count = kept_frequencies(shape)
    fwd_rader, fwd_rest = rader_kernel(shape, False), rest_kernel(shape, False)

    def rader_lines(c0: Affine) -> None:
        kernel = Kernel(S, fwd_rader, Reducer(S, thresholds[0]))

        def line(v: LoopVar) -> None:
            d = Affine.of(v)
            kernel.run(
                lambda i: S.load(grid, c0 + (d + i * width) * m, hint="g"),
                lambda k, x: S.store(lines, c0 + (d + (first + k) * width) * m, x),
            )

        S.loop(width, line, hint="line", unroll=False)

    def frequencies(c0: Affine) -> None:
        kernel = Kernel(S, fwd_rest, Reducer(S, thresholds[1]))

        def frequency(v: LoopVar) -> None:
            k = Affine.of(v)
            kernel.run(
                lambda e: S.load(lines, c0 + ((k + first) * width + e) * m, hint="l"),
                lambda e, x: S.store(r, c0 + (k * width + e) * m, x),
            )

        S.loop(count, frequency, hint="freq", unroll=False)

    for k in range(len(shape.pieces), shape.rows):
        for i in range(0, m, L):
            S.store(r, k * m + i, zero)
    # one loop nest per pass: stores inside a loop nest are seen after it ends
    for body in (place, rader_lines, frequencies):
        columns(S, shape, body)


def program_inverse_lines(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    thresholds: tuple[int | None, int | None, int | None] = (None, None, None),
    out_bound: int | None = None,
    indexed_outputs: bool = False,
) -> None:
    """inverse(r, c) as :func:`~.ntru_dft.program_inverse` computes it, for pieces of sign +1 (as
    :func:`program_forward_lines` writes them), by the loops of the module docstring;
    ``thresholds``: the reducer's in each pass (:attr:`LineThresholds.inverse`);
    ``indexed_outputs``: the last pass as a loop over the output blocks, their Good–Thomas
    positions read from a table of offsets (else straight-line code, one copy per block)."""
    m, n = shape.m, shape.n
    width = n // shape.axes[0]
    r = S.output("r", shape.blocks_out * m, doc="n times the product, low blocks")
    c = S.input("c", shape.rows * m, contract, doc="piecewise products")
    freqs = S.local("freqs", n * m)
    grid = S.local("grid", n * m)
    where = shape.map.in_perm
    first, count = kept_frequencies(shape)
    inv_rest, inv_rader = rest_kernel(shape, True), rader_kernel(shape, True)
    top, stride = shape.degree_blocks, width

    def frequencies(c0: Affine) -> None:
        kernel = Kernel(S, inv_rest, Reducer(S, thresholds[0]))

        def frequency(v: LoopVar) -> None:
            k = Affine.of(v)
            kernel.run(
                lambda e: S.load(c, c0 + (k * width + e) * m, hint="c"),
                lambda e, x: S.store(freqs, c0 + ((k + first) * width + e) * m, x),
            )

        S.loop(count, frequency, hint="freq", unroll=False)

    def rader_lines(c0: Affine) -> None:
        kernel = Kernel(S, inv_rader, Reducer(S, thresholds[1]))

        def line(v: LoopVar) -> None:
            d = Affine.of(v)
            kernel.run(
                lambda i: S.load(freqs, c0 + (d + (first + i) * width) * m, hint="f"),
                lambda j, x: S.store(grid, c0 + (d + j * width) * m, x),
            )

        S.loop(width, line, hint="line", unroll=False)

    def output(
        red: Reducer,
        tops: dict[int, Value],
        j: int,
        at: Affine,
        c0: Affine,
        block: Affine | None = None,
    ) -> None:
        """Output block j (``block`` where a loop's counter gives it, j then naming its top)
        from the grid block at ``at`` (from column ``c0``), less its top block (loaded into
        ``tops`` on first use)."""
        val = S.load(grid, c0 + at, hint="g")
        if shape.cyclotomic:
            i = j % stride
            if i not in tops:
                tops[i] = S.load(grid, c0 + where[top + i] * m, hint="g")
            val, tops[i] = red.make_room(val, tops[i], need_sum=False)
            val = S.sub(val, tops[i], hint="o")
        if out_bound is not None:
            val = red.fit_to(val, (-out_bound, out_bound))
        S.store(r, c0 + (Affine.of(j) if block is None else block) * m, val)

    def fold(c0: Affine) -> None:
        red = Reducer(S, thresholds[2])
        tops: dict[int, Value] = {}
        for j in range(shape.blocks_out):
            output(red, tops, j, Affine.of(where[j] * m), c0)

    def indexed_fold(c0: Affine) -> None:
        # The output order is a CRT map of the grid's, affine in no counter: one loop over
        # groups of `per` blocks (one of each top, so each body's tops are fixed) reads their
        # positions from tables. The tops are loaded, and reduced past the threshold, before
        # the loop, whose body only reads them. Measured (sntrup761, AVX2, Zen 3): the
        # inverse's code 7.0 -> 4.0 KiB, polymul_small 4,400 -> 4,230 ticks.
        red = Reducer(S, thresholds[2])
        per = stride if shape.cyclotomic else 1
        groups = shape.blocks_out // per
        tops: dict[int, Value] = {}
        for i in range(per if shape.cyclotomic else 0):
            tops[i] = S.load(grid, c0 + where[top + i] * m, hint="top")
            if red.threshold is not None and S.bound(tops[i]).magnitude > red.threshold:
                tops[i] = red.reduce(tops[i])
        at = [
            S.offsets(f"out_at{i}", [where[g * per + i] * m for g in range(groups)])
            for i in range(per)
        ]

        def group(v: LoopVar) -> None:
            for i in range(per):
                block = Affine.of(v) * per + i
                output(red, dict(tops), i, Affine.looked_up(at[i], v), c0, block)

        S.loop(groups, group, hint="grp", unroll=False)
        for j in range(groups * per, shape.blocks_out):  # a last partial group, if any
            output(red, tops, j, Affine.of(where[j] * m), c0)

    for body in (frequencies, rader_lines, indexed_fold if indexed_outputs else fold):
        columns(S, shape, body)
