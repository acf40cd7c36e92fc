"""The block algebra that the block algorithms (the DFTs of :mod:`.dft`, :func:`.dft.run_axes`,
Schönhage's maps of :mod:`.schoenhage`) are written against, and its exact carrier.

The algorithms only add, subtract, multiply by constants and shift whole *blocks*; they never
look at a coefficient. So each is written once, against :class:`BlockAlgebra`, and runs on any
*carrier* of blocks:

* :class:`CoefficientBlocks`: lists of coefficients, through the counted kernels of :mod:`.ops`
  (how the maps compute, and, with :class:`~.trace.Sym` coefficients, how they are traced);
* ``nttgen.programs.ntru_blocks.BlockGraph``: symbolic blocks, recording a graph of block
  operations that the Schönhage programs lower to vector code.

A carrier decides how it represents a block, and the algorithms issue the carrier's operations
in a fixed order (which fixes the order of a recorded graph, hence of generated statements).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from .cost import Cost
from .ops import add, mul_const, mul_xpow, scale, sub

B = TypeVar("B")


class BlockAlgebra(Protocol[B]):
    """Operations on blocks over Z_q, of three kinds (every operation says which it takes):

    * a *full block*: an element of Z_q[x]/(x^M + 1) (M coefficients; x^M = -1);
    * a *short block*: a polynomial of degree < M/2 not yet embedded (an input block of
      Schönhage's map before :meth:`embed`); sums and differences of short blocks are short;
    * a *half block*: M/2 coefficients cut out of a full block by :meth:`low` or :meth:`high`
      (the overlap-add of Schönhage's inverse), combined only by :meth:`half_add` and
      :meth:`half_sub`.

    Values are residues mod q; every operation is exact in Z_q (a carrier reduces, or defers
    reductions, as it likes). A carrier may represent a short block embedded (zero above M/2)
    and a half block as any full block whose low M/2 coefficients are the half; so :meth:`embed`
    is never applied to a half block. A DFT over blocks of another length (Nussbaumer's, the
    Good–Thomas DFTs on blocks of any length) uses only :meth:`add`, :meth:`sub`, :meth:`mulc`
    and :meth:`shift`, with M the length of its blocks."""

    def add(self, a: B, b: B, /) -> B:
        """a + b, for two full or two short blocks (the same kind comes out)."""
        ...

    def sub(self, a: B, b: B, /) -> B:
        """a - b, for two full or two short blocks (the same kind comes out)."""
        ...

    def mulc(self, a: B, c: int, /) -> B:
        """c * a for a constant c of Z_q (any int; taken mod q), a full block."""
        ...

    def scale(self, a: B, c: int, /) -> B:
        """c * a for a *normalisation* constant c (n^-1, 2^-1: counted apart from
        :meth:`mulc` by :class:`CoefficientBlocks`), a full or half block."""
        ...

    def shift(self, a: B, s: int, /) -> B:
        """x^s * a in Z_q[x]/(x^M + 1) for any int s (x has order 2M: s is taken mod 2M,
        and coefficients that wrap past x^M are negated), a full block."""
        ...

    def embed(self, a: B, /) -> B:
        """The short block a as a full block (zero coefficients M/2 .. M-1)."""
        ...

    def low(self, a: B, /) -> B:
        """Coefficients 0 .. M/2-1 of the full block a, as a half block."""
        ...

    def high(self, a: B, /) -> B:
        """Coefficients M/2 .. M-1 of the full block a, as a half block."""
        ...

    def half_add(self, a: B, b: B, /) -> B:
        """a + b for half blocks a, b (a half block)."""
        ...

    def half_sub(self, a: B, b: B, /) -> B:
        """a - b for half blocks a, b (a half block)."""
        ...


Block = list[int]


class CoefficientBlocks:
    """:class:`BlockAlgebra` on lists of coefficients in [0, q), every operation one counted
    kernel of :mod:`.ops` ticking ``ctr``. A block's length is its list's: a short block is its
    M/2 coefficients and :meth:`embed` pads it with zeros, a half block is a slice. The kernels
    use only ``+``, ``-``, ``*`` by ints and ``% q``, so :class:`~.trace.Sym` coefficients
    trace the operations."""

    def __init__(self, q: int, ctr: Cost) -> None:
        self.q, self.ctr = q, ctr

    def add(self, a: Sequence[int], b: Sequence[int], /) -> Block:
        """a + b (len(a) ``add``)."""
        return add(a, b, self.q, self.ctr)

    def sub(self, a: Sequence[int], b: Sequence[int], /) -> Block:
        """a - b (len(a) ``add``)."""
        return sub(a, b, self.q, self.ctr)

    def mulc(self, a: Sequence[int], c: int, /) -> Block:
        """c * a (see :func:`.ops.mul_const` for what it counts)."""
        return mul_const(a, c, self.q, self.ctr)

    def scale(self, a: Sequence[int], c: int, /) -> Block:
        """c * a (len(a) ``scale`` unless c = 1)."""
        return scale(a, c, self.q, self.ctr)

    def shift(self, a: Sequence[int], s: int, /) -> Block:
        """x^s * a modulo x^len(a) + 1 (len(a) ``shift`` unless s = 0 mod 2 len(a))."""
        return mul_xpow(a, s, self.q, self.ctr)

    def embed(self, a: Sequence[int], /) -> Block:
        """a followed by len(a) zeros (free)."""
        return list(a) + [0] * len(a)

    def low(self, a: Sequence[int], /) -> Block:
        """The first half of a (free)."""
        return list(a[: len(a) // 2])

    def high(self, a: Sequence[int], /) -> Block:
        """The second half of a (free)."""
        return list(a[len(a) // 2 :])

    def half_add(self, a: Sequence[int], b: Sequence[int], /) -> Block:
        """a + b (len(a) ``add``)."""
        return add(a, b, self.q, self.ctr)

    def half_sub(self, a: Sequence[int], b: Sequence[int], /) -> Block:
        """a - b (len(a) ``add``)."""
        return sub(a, b, self.q, self.ctr)
