"""The program variants of the NTRU Prime pipelines: one declared record per (ring, ISA).

A variant is a schedule choice, not a capability: every ISA can run every variant that uses
ops it has, and the choice between them is measured (``nttgen.tuning.NTRU_CHOICES`` records
each ISA's choices with the figures behind them, ``NTRU_TUNED`` the thresholds of one ring on
one ISA). The programs read this record only; they never ask which ISA they run on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

BaseProducts = Literal["karatsuba", "wide", "pairs"]
"""How the Good–Rader base multiplies its pieces (see
:func:`nttgen.programs.ntru_base.program_base`): Karatsuba over Montgomery products, exact sums in
double-width lanes (the ``madd``/``addw``/``mredw`` ops), or coefficient pairs in adjacent
lanes summed by ``pair_madd`` (the ``pair_*`` ops)."""
BASE_PRODUCTS: tuple[str, ...] = get_args(BaseProducts)


@dataclass(frozen=True)
class LineThresholds:
    """The lazy reducer's threshold for each pass of the DFTs as lines (lane values; None:
    the lazy policy alone; see :class:`~nttgen.programs.lazy.Reducer`). The policy is greedy
    and not monotone in its threshold, and each pass sees its own input ranges, so one
    threshold per pass finds schedules a single one cannot (see ``tuning.NTRU_TUNED``)."""

    forward: tuple[int | None, int | None] = (None, None)
    """The forward's passes: Rader's lines, then the other axes' frequencies."""
    inverse: tuple[int | None, int | None, int | None] = (None, None, None)
    """The inverse's passes: the other axes' frequencies, Rader's lines, the fold modulo
    Phi_r."""


@dataclass(frozen=True)
class NtruConfig:
    """The program variants of one NTRU Prime ring on one ISA.

    Every pipeline reads ``coarse_reductions``: the lazy reductions by ``barrett_coarse``
    wherever its wider range serves (see :class:`~nttgen.programs.lazy.Reducer`). The rest
    are the Good–Rader pipeline's (:func:`nttgen.programs.ntru.build_good_rader`):

    - ``base_products``: how the base multiplies its pieces (:data:`BaseProducts`);
    - ``inverse_threshold``: the inverse DFT's reduction threshold in lane values (None: the
      lazy policy alone), and ``line_thresholds`` one per pass of the DFTs as lines (None:
      none in the forward's, ``inverse_threshold`` in each of the inverse's);
    - ``paired_leaves``: Rader's quadratic leaves multiplied by a constant with three
      multiplications and one more addition; ``cyclotomic``: the product modulo Phi_17(x^96)
      rather than x^1632 - 1 (see :func:`nttgen.programs.ntru_shape.good_rader_shape`);
    - ``narrow_inverse``: the inverse's outputs within a third of the lane, so that the
      fold's sums need no reduction;
    - ``dft_lines``: the forward and inverse DFTs as loops over lines (and the fold a loop,
      see :mod:`nttgen.programs.ntru_lines`), not one straight-line trace;
    - ``small_forward``: ``polymul_small`` transforms its small operand by a DFT of its own
      (``forward_small``, contract [-1, 1]), else by the shared ``forward``;
      ``ternary_forward``: that DFT by sums of exact products and twiddles
      (:mod:`nttgen.programs.ntru_ternary`);
    - ``rotated_forward``: with ``dft_lines``, ``forward`` by Rader's algorithm on each line's
      nonzero blocks (no grid); ``indexed_outputs``: with ``dft_lines``, the inverse's last
      pass a loop reading its blocks' positions from tables;
    - ``looped_products``: the base's "wide" products of split pieces as loops over their
      coefficients (:class:`nttgen.programs.ntru_base.LoopedTwistedProduct`);
    - ``gcc_options``: optimisation options the files ask gcc for (as
      :class:`nttgen.programs.build_config.BuildConfig`'s)."""

    coarse_reductions: bool = False
    base_products: BaseProducts = "karatsuba"
    inverse_threshold: int | None = None
    line_thresholds: LineThresholds | None = None
    paired_leaves: bool = True
    cyclotomic: bool = True
    narrow_inverse: bool = True
    dft_lines: bool = False
    small_forward: bool = True
    ternary_forward: bool = False
    rotated_forward: bool = False
    indexed_outputs: bool = False
    looped_products: bool = False
    gcc_options: tuple[str, ...] = ()
