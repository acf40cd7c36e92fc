"""NTRU Prime's pair sums on AVX2 and AVX-512 (the op group ``pair_sums``): ``vpmaddwd`` sums
the products of two adjacent 16-bit lanes into one 32-bit lane, and one Montgomery reduction
per vector of such sums brings them back to 16-bit lanes."""

from __future__ import annotations

from typing import Any

from .. import c_ast as C


def _call(name: str, *args: C.Expr) -> C.Expr:
    return C.Call(name, args)


class X86PairSums:
    """Templates and helpers of the pair-sum ops, mixed into :class:`~.x86.X86Simd` (they
    compose its intrinsics ``_i``, ``_fn``, ``_byte_shuffle``, ``_mont32_steps`` and
    ``blend_odd``)."""

    def _x(self) -> Any:
        return self

    def pair_madd(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """``vpmaddwd``: the pairs already sit in adjacent lanes."""
        self._pairs_need16("pair_madd")
        return self._x()._i("madd", a, b, e="epi16")

    def pair_add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """``vpaddd``."""
        self._pairs_need16("pair_add")
        return self._x()._i("add", a, b, e="epi32")

    def pair_mred(self, even: C.Expr, odd: C.Expr) -> C.Expr:
        """The helper ``pair_mred`` (see :meth:`_pair_helpers`)."""
        self._pairs_need16("pair_mred")
        return _call(self._x().helper("pair_mred"), even, odd)

    def pair_swap(self, a: C.Expr) -> C.Expr:
        """The helper ``pair_swap`` (one ``vpshufb``)."""
        self._pairs_need16("pair_swap")
        return _call(self._x().helper("pair_swap"), a)

    def pair_blend(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """``vpblendw`` (or a masked move on AVX-512): odd 16-bit lanes from b."""
        self._pairs_need16("pair_blend")
        return self._x().blend_odd(a, b, 16)

    def _pairs_need16(self, op: str) -> None:
        if self._x().lane.bits != 16:
            raise ValueError(f"{self._x().name}: {op} needs 16-bit lanes (vpmaddwd)")

    def _pair_helpers(self) -> list[C.Top]:
        """``pair_mred``: per 32-bit lane, m = lo(a)*q^-1 by ``vpmullw`` against q^-1 in the
        low words (zero in the high ones, so m arrives zero-extended), a - m*q by
        ``vpmaddwd`` against (q, 0) and ``vpsubd``; the even sums' results move to the low
        words by a shift, the odd sums' already sit in the high words and one ``vpblendw``
        joins them. ``pair_swap``: one ``vpshufb`` within each 128-bit group."""
        body = self._x()._mont32_steps(("even", "odd"))
        low = self._x()._i("srli", C.Name("d_even"), C.Int(16), e="epi32")
        body.append(C.Return(self._x().blend_odd(low, C.Name("d_odd"), 16)))
        mred = self._x()._fn(
            "pair_mred",
            ("even", "odd"),
            body,
            (
                "Signed Montgomery reductions of two vectors of 32-bit pair sums into one of",
                "16-bit lanes: lane 2i = even[i]/2^16 mod q, lane 2i+1 = odd[i]/2^16 mod q.",
            ),
        )
        # bytes of one 128-bit group with the two 16-bit lanes of each pair exchanged
        order = [b ^ 2 for b in range(16)]
        doc = ("Lanes 2i and 2i+1 exchanged (vpshufb).",)
        return [mred, self._x()._byte_shuffle("pair_swap", order, doc)]
