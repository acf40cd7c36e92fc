"""The sizes of the Good–Rader pipeline, and what every NTRU Prime pipeline's build returns.

:class:`GoodRaderShape` holds the pipeline's sizes for one ring at L lanes (block size m, the
DFT's axes, the pieces computed, the blocks read and written) and its checked Good–Thomas
map's traces (:attr:`~GoodRaderShape.forward_trace`, :attr:`~GoodRaderShape.inverse_trace`),
which the DFT stages lower; :func:`good_rader_shape` chooses it from the pipeline's plan.
:func:`columns` is the loop over a block's chunks of L coefficient positions that every DFT
stage runs in. :class:`NtruFunctions` is the result of a pipeline's build (this pipeline's,
:mod:`.ntru`, and the Schönhage pipelines', :mod:`.ntru_shift`). See :mod:`.ntru` for the
pipeline as a whole.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Function
from ..errors import IsaUnavailableError
from ..plan.maps.choose import GRB, plan_pipeline
from ..plan.maps.good_thomas import GoodThomasMap, fold_phi, inverse_dft_blocks
from ..plan.maps.modarith import sqrt_mod
from ..plan.maps.trace import Sym, Trace, trace_map


@dataclass(frozen=True)
class GoodRaderShape:
    """The sizes of the Good–Rader pipeline for Z_q[x]/(x^p - x - 1) at L lanes.

    ``m``: block size (coefficients per piece); ``axes``: the coprime DFT lengths (the first
    prime, done by Rader's algorithm, then 3 and 2); ``lanes``: L, a divisor of m;
    ``paired_leaves``: Rader's quadratic leaves by three multiplications and one more addition
    instead of four multiplications (:class:`~nttgen.plan.maps.basecase.ConstMul`), where the
    ISA measured it faster (``NtruConfig.paired_leaves``); ``cyclotomic``: the product modulo
    Phi_r(x^(m*n/r)) instead of x^(m*n) - 1 (r = ``axes[0]``, Rader's prime), which drops the
    factor x^(m*n/r) - 1: the n/r pieces at Rader's zero frequency are neither computed nor
    multiplied (:attr:`pieces`), and the inverse folds its top n/r blocks back (see
    :attr:`inverse_trace`). Valid where the product still fits (:attr:`admits_cyclotomic`)."""

    p: int
    q: int
    m: int
    axes: tuple[int, ...]
    lanes: int
    paired_leaves: bool = True
    cyclotomic: bool = False

    def __post_init__(self) -> None:
        if self.m % self.lanes:
            raise IsaUnavailableError(
                f"the Good–Rader program keeps a block of {self.m} coefficients in whole "
                f"vectors: {self.lanes} lanes do not divide {self.m}"
            )
        if self.blocks_out > self.degree_blocks:
            raise ValueError(f"{self.modulus} is too small for p = {self.p}")

    @property
    def n(self) -> int:
        """Number of pieces (the DFT length)."""
        out = 1
        for a in self.axes:
            out *= a
        return out

    @property
    def degree_blocks(self) -> int:
        """Blocks of m coefficients in the ring's modulus: n for x^(m*n) - 1, n - n/r for
        Phi_r(x^(m*n/r)) (:attr:`cyclotomic`)."""
        return self.n - self.n // self.axes[0] if self.cyclotomic else self.n

    @property
    def admits_cyclotomic(self) -> bool:
        """Whether the fold's blocks (those the product can occupy) lie below the degree of
        Phi_r(x^(m*n/r)), so that the product is determined modulo it."""
        return self.blocks_out <= self.n - self.n // self.axes[0]

    @property
    def modulus(self) -> str:
        """The ring's modulus as text, e.g. ``x^1632 - 1`` or ``Phi_17(x^96)``."""
        if self.cyclotomic:
            return f"Phi_{self.axes[0]}(x^{self.m * self.n // self.axes[0]})"
        return f"x^{self.m * self.n} - 1"

    @cached_property
    def pieces(self) -> list[int]:
        """The map targets (indices into the Good–Thomas map's points, in its order) that the
        program computes, one row each: all n, or with :attr:`cyclotomic` those whose index on
        Rader's axis is nonzero (x^m - t_k with t_k^(n/r) != 1)."""
        return [
            k for k, (idx, _) in enumerate(self.map.points) if not (self.cyclotomic and idx[0] == 0)
        ]

    @property
    def blocks_in(self) -> int:
        """Blocks holding an input (degree < p)."""
        return -(-self.p // self.m)

    @property
    def blocks_out(self) -> int:
        """Blocks of the product the fold reads: indices up to 2p - 1."""
        return -(-2 * self.p // self.m)

    @property
    def rows(self) -> int:
        """Pieces rounded up to whole groups of L (the padding rows are zero)."""
        return -(-len(self.pieces) // self.lanes) * self.lanes

    @cached_property
    def map(self) -> GoodThomasMap:
        """The checked Good–Thomas map on single coefficients (m = 1): the same DFT, constants
        and index maps as on blocks, applied lane by lane."""
        return GoodThomasMap(self.q, 1, self.axes, paired_leaves=self.paired_leaves)

    @property
    def points(self) -> list[int]:
        """t_k of every computed piece (x^m - t_k), row by row (:attr:`pieces`)."""
        return [self.map.points[k][1] for k in self.pieces]

    @cached_property
    def split_roots(self) -> list[int] | None:
        """s_k with s_k^2 = t_k for every piece k, when every t_k is a square: then each
        x^m - t_k = (x^(m/2) - s_k)(x^(m/2) + s_k) and the base product is two half-size
        products (Cooley–Tukey). None where some t_k is not a square (q = 4591: at m = 16,
        n = 102, the odd powers of w_102 are not), or m is odd."""
        if self.m % 2:
            return None
        roots = [sqrt_mod(t, self.q) for t in self.points]
        if any(r is None for r in roots):
            return None
        return roots  # type: ignore[return-value]

    @property
    def fold_scale(self) -> int:
        """The factor the inverse stage leaves on the product besides beta^-1 (the fold's
        constant K undoes it): n (the unnormalised inverse DFT) times :attr:`base_scale`."""
        return self.n * self.base_scale

    @property
    def product_length(self) -> int:
        """Coefficients of the product the inverse stage writes (whole blocks, >= 2p)."""
        return self.blocks_out * self.m

    @property
    def base_scale(self) -> int:
        """The factor the base stage leaves on every product besides beta^-1: 2 where the
        pieces are split (the CRT back from x^(m/2) -+ s computes 2c), 1 otherwise."""
        return 2 if self.split_roots is not None else 1

    def plan_lines(self, modulus: str) -> list[str]:
        """The "Plan:" paragraph of the generated files' header."""
        axes = " x ".join(map(str, self.axes))
        ring = f"Z_q[x]/({self.modulus})"
        if self.cyclotomic:
            whole = self.m * self.n
            ring += (
                f" (x^{whole} - 1 without its factor x^{whole // self.axes[0]} - 1: no pieces"
                " at Rader's zero frequency)"
            )
        text = (
            f"{GRB}: the product in {ring}, Good–Thomas DFT of length {self.n} = {axes} "
            f"over blocks of {self.m} coefficients (Rader for {self.axes[0]}), "
            f"{len(self.pieces)} products modulo x^{self.m} - t_k, inverse DFT, fold modulo "
            f"{modulus}; outputs centred in [{-(self.q // 2)}, {self.q // 2}]"
        )
        return textwrap.wrap(
            text, 88, initial_indent="Plan:   ", subsequent_indent=" " * 8, break_on_hyphens=False
        )

    @cached_property
    def forward_trace(self) -> tuple[Trace, list[Sym | int]]:
        """The forward DFT traced on the input blocks (the blocks above are zero)."""
        n, gt = self.n, self.map
        trace, outs = trace_map(
            lambda xs: gt.forward(list(xs) + [0] * (n - len(xs))), self.q, self.blocks_in
        )
        kept = [outs[k][0] for k in self.pieces]
        return trace.pruned(kept), kept

    @cached_property
    def inverse_trace(self) -> tuple[Trace, list[Sym | int]]:
        """The unnormalised inverse DFT traced on the computed pieces, for the output blocks
        the fold reads (the map's own inverse multiplies by 1/n; here that goes into K).

        With :attr:`cyclotomic` the pieces at Rader's zero frequency enter as zero, so the
        inverse DFT returns the c'' with c'' = c mod Phi_r(y) and c'' = 0 mod y - 1 for
        y = x^(m*n/r), of degree < m*n; Phi_r(y) = 1 + y + ... + y^(r-1), so reducing c''
        modulo it subtracts each top block D + i (D = n - n/r, i < n/r) from the blocks below
        D congruent to i mod n/r. That gives c itself: it has degree < 2p - 1 <= m*D."""
        dft_end = 0

        def inverse(xs: Sequence[Sym]) -> list[list[Sym | int]]:
            nonlocal dft_end
            blocks = inverse_dft_blocks(self.map, self.pieces, [[x] for x in xs])
            if not self.cyclotomic:
                return blocks[: self.blocks_out]
            dft_end = len(xs[0].trace.nodes)
            return fold_phi(blocks, self.n // self.axes[0], self.blocks_out)

        trace, outs = trace_map(inverse, self.q, len(self.pieces))
        if self.cyclotomic:
            # Rader's axis is inverted last, one line of r blocks at a time, and each line
            # holds the block its outputs subtract: done there, not after the whole DFT
            trace = trace.hoisted(dft_end)
        return trace, [part[0] for part in outs]


def good_rader_shape(
    p: int, q: int, lanes: int, paired_leaves: bool = True, cyclotomic: bool = True
) -> GoodRaderShape:
    """The shape of the Good–Rader program for (p, q) at ``lanes`` lanes, from the pipeline's
    checked plan (raises the plan's error, naming the rule, where the pipeline does not exist
    for (p, q)). ``cyclotomic`` asks for the product modulo Phi_r(x^(m*n/r)) (see
    :class:`GoodRaderShape`), granted where the product fits in it and the fold's blocks lie
    below its degree.

    Up to the plan's block size m (16) lanes, the shape is the plan's: blocks of m, DFT
    r x 3 x 2. At 2m lanes (AVX-512's 32) the radix-2 axis moves into the block: blocks of
    2m and DFT r x 3, the same x^(6rm) - 1, so a block still fills whole vectors (half as
    many pieces, each twice as long). Wider vectors raise :class:`IsaUnavailableError`.
    ``paired_leaves``: see :class:`GoodRaderShape`."""
    plan = plan_pipeline(GRB, p, q)
    m, r = plan.sizes["m"], plan.sizes["r"]
    if lanes == 2 * m:
        shape = GoodRaderShape(p, q, 2 * m, (r, 3), lanes, paired_leaves)
    else:
        shape = GoodRaderShape(p, q, m, (r, 3, 2), lanes, paired_leaves)
    return replace(shape, cyclotomic=True) if cyclotomic and shape.admits_cyclotomic else shape


def columns(S: Builder, shape: GoodRaderShape, body: Callable[[Affine], None]) -> None:
    """Run ``body(c0)`` for every chunk of L coefficient positions c0 .. c0 + L - 1 of a
    block (a loop over m / L chunks)."""
    L = shape.lanes
    S.loop(shape.m // L, lambda v: body(Affine.of(v) * L), hint="col")


@dataclass
class NtruFunctions:
    """The functions of one NTRU Prime ring at one lane count, entry points last, and the
    optimisation options their file asks gcc for (``NtruConfig.gcc_options``, set only by the
    pipelines that read that choice)."""

    shape: GoodRaderShape
    functions: dict[str, Function]
    gcc_options: tuple[str, ...] = ()
