"""Schönhage's embedding: roots of unity made from x, so the FFT needs only shifts.

Cyclic form (:class:`SchoenhageMap`). With t = x^m, blocks A_j of m coefficients and n blocks,

    Z_q[x]/(x^(mn) - 1) = (Z_q[x]/(x^m - t))[t]/(t^n - 1)
                        -> (Z_q[x]/(x^2m + 1))[t]/(t^n - 1)      (zero-extend every block)

and in S = Z_q[x]/(x^2m + 1), x has order 4m, so x^(4m/l) is a principal l-th root of unity for
l a power of two dividing 4m: the length-l DFT over S is radix-2 butterflies whose twiddles are
negacyclic shifts (free). With n = odd * l and gcd(odd, 2) = 1, Good–Thomas splits the block index
j -> (j mod odd, j mod l) and the odd axis uses a root w_odd in Z_q (field multiplications) while
the power-of-two axis uses x^(4m/l) (shifts): the twiddles never mix the two. Target
(k1, k2), row-major, is the evaluation t = w_odd^k1 * x^(k2*4m/l), an element of S.

Truncated form (:class:`TruncatedSchoenhageMap`, Bernstein–Brumley–Chen–Tuveri 2022). The source
is G(x^m) with G(t) = (t^l + 1)(t^(l/2) - 1), l | 2m; the t-polynomial is reduced mod t^l + 1
(then twisted by zeta^j, zeta = x^(2m/l), and transformed with x^(4m/l): points t = x^((2k+1)2m/l))
and mod t^(l/2) - 1 (transformed with x^(8m/l)): 3l/2 targets x^2m + 1. For m = l = 32 this is
Z_q[x]/((x^1024 + 1)(x^512 - 1)) -> (Z_q[x]/(x^64 + 1))^48.

Both are ``embedding`` maps (blow-up 2). The inverse transforms back, recombines and *overlap-adds*
the 2m-coefficient blocks C_j as sum_j C_j x^(mj) mod the source. It is valid for ``forward(a)``
(C_j = A_j), for componentwise products ``forward(a) * forward(b)`` mod x^2m + 1 (each C_j is a
signed sum of products A_i B_k of degree <= 2m - 2, so nothing wrapped around x^2m + 1), and for
sums of such terms; on other tuples it returns the overlap-add of whatever the inverse transform
gives, which is not meaningful.

Both maps are written once on blocks, against the block algebra of :mod:`.blocks`
(``forward_blocks``, ``inverse_blocks``): ``_forward``/``_inverse`` run them on coefficient lists,
the Schönhage programs on a graph of symbolic blocks. The inverse comes normalised (the map's
``inverse``) or *unnormalised*, times :meth:`SchoenhageMap.inverse_factor` and without a single
multiplication (what the programs run, folding the factor into a later constant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ...arith import is_power_of_two
from ...errors import NoRootOfUnityError, SizeError
from .base import RingMap
from .blocks import BlockAlgebra, CoefficientBlocks
from .cost import Cost
from .dft import BlockDFT, Radix2DFT, ShiftAction, run_axes
from .good_thomas import check_coprime, field_dft, flat, index_map
from .modarith import centred, inverse_mod, primitive_root_of_unity
from .polys import binomial, describe, poly_prod

B = TypeVar("B")

_VALID = (
    "forward(a) for every a, and componentwise products forward(a)*forward(b) mod x^2m+1 "
    "(and sums of these): inverse then returns a, resp. a*b mod the source"
)


def _check_sizes(m: int, ell: int, divides: int, what: str) -> None:
    if m < 1 or not is_power_of_two(ell) or ell < 2:
        raise SizeError(f"Schönhage needs m >= 1 and l a power of two >= 2 (m={m}, l={ell})")
    if divides % ell:
        raise NoRootOfUnityError(
            f"Schönhage with blocks of m={m}: {what} needs l={ell} to divide {divides}"
        )


class SchoenhageMap(RingMap):
    """Z_q[x]/(x^(m*odd*l) - 1) -> (Z_q[x]/(x^2m + 1))^(odd*l), see the module docstring.

    l is passed as ``ell`` (a power of two dividing 4m). ``odd`` = 1 gives plain Schönhage (one
    radix-2 axis); ``odd`` > 1 needs a primitive odd-th root of unity in Z_q
    (:class:`~.errors.NoRootOfUnityError` otherwise). The zero upper halves of the embedded
    blocks are not skipped: the counts are those of full 2m-coefficient butterflies."""

    kind = "embedding"
    inverse_valid_for = _VALID

    def __init__(self, q: int, m: int, ell: int, odd: int = 1) -> None:
        _check_sizes(m, ell, 4 * m, "x^(4m/l) as a principal l-th root of unity in x^2m+1")
        if odd > 1:
            check_coprime((odd, ell))
        elif odd != 1:
            raise SizeError(f"odd factor must be >= 1, got {odd}")
        self.m, self.l, self.odd = m, ell, odd
        self.n = odd * ell
        self.unit = 4 * m // ell
        self.shift_dft = Radix2DFT(ShiftAction(q, 2 * m, self.unit, ell))
        self.axes: tuple[int, ...] = (odd, ell) if odd > 1 else (ell,)
        self.omega_odd = primitive_root_of_unity(odd, q) if odd > 1 else 1
        self.dfts: list[BlockDFT] = ([field_dft(q, odd, self.omega_odd)] if odd > 1 else []) + [
            self.shift_dft
        ]
        self.in_perm = [flat(index_map(j, self.axes), self.axes) for j in range(self.n)]
        s = binomial(2 * m, q - 1, q)  # x^2m + 1
        super().__init__(
            q, binomial(m * self.n, 1, q), [s] * self.n, f"Schoenhage(m={m}, {odd}x{ell})"
        )
        self.inv_n = inverse_mod(self.n, q)
        self._verify()

    def inverse_factor(self) -> int:
        """The factor n of the unnormalised inverse (``normalise=False``)."""
        return self.n

    def forward_blocks(self, alg: BlockAlgebra[B], blocks: Sequence[B]) -> list[B]:
        """The forward on the carrier ``alg``: the n short blocks A_0 .. A_(n-1) (A_j: source
        coefficients j*m .. j*m + m - 1, degree < m) to the n pieces (full blocks, x^2m + 1),
        target order. The blocks are embedded, placed at their Good–Thomas index and
        transformed along each axis (:func:`.dft.run_axes`)."""
        src = {self.in_perm[j]: j for j in range(self.n)}  # array position -> source block
        arr = [alg.embed(blocks[src[i]]) for i in range(self.n)]
        return run_axes(alg, arr, self.axes, self.dfts, False)

    def inverse_blocks(self, alg: BlockAlgebra[B], parts: Sequence[B], normalise: bool) -> list[B]:
        """The inverse on the carrier ``alg``: the n pieces (full blocks, target order) back to
        the n half blocks of the source polynomial (block j: coefficients j*m .. j*m + m - 1),
        by the inverse DFTs and the cyclic overlap-add low(C_j) + high(C_(j-1)); times n^-1
        when ``normalise``, else times :meth:`inverse_factor` (no multiplication at all)."""
        n = self.n
        arr = run_axes(alg, parts, self.axes, self.dfts, True)
        c = [arr[self.in_perm[j]] for j in range(n)]
        out = [alg.half_add(alg.low(c[j]), alg.high(c[j - 1])) for j in range(n)]
        return [alg.scale(x, self.inv_n) for x in out] if normalise else out

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        m = self.m
        blocks = [a[j * m : (j + 1) * m] for j in range(self.n)]
        return self.forward_blocks(CoefficientBlocks(self.q, ctr), blocks)

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        out = self.inverse_blocks(CoefficientBlocks(self.q, ctr), parts, True)
        return [x for blk in out for x in blk]

    def constants(self) -> dict[str, object]:
        """{"m", "l", "odd", "omega_odd", "shift_unit" (x^unit is the l-th root), "index_map",
        "shift_dft" (bit reversal and twiddle shifts per stage), "points" ((k1, k2) ->
        (w_odd^k1 centred, shift k2*unit)), "target"}."""
        q = self.q
        points = [
            ((k1, k2), (centred(pow(self.omega_odd, k1, q), q), k2 * self.unit))
            for k1 in range(self.odd)
            for k2 in range(self.l)
        ]
        return {
            "m": self.m,
            "l": self.l,
            "odd": self.odd,
            "omega_odd": self.omega_odd,
            "odd_dft": self.dfts[0].constants() if self.odd > 1 else None,
            "shift_unit": self.unit,
            "index_map": self.in_perm,
            "shift_dft": self.shift_dft.constants(),
            "points": points,
            "target": describe(self.targets[0], q),
        }


class TruncatedSchoenhageMap(RingMap):
    """Z_q[x]/(G(x^m)), G(t) = (t^l + 1)(t^(l/2) - 1) -> (Z_q[x]/(x^2m + 1))^(3l/2); l | 2m.

    l is passed as ``ell``. Targets 0..l-1 are the points t = x^((2k+1)*2m/l) (k < l) of
    t^l + 1; targets l..3l/2-1 the points t = x^(k*8m/l) of t^(l/2) - 1. See the module
    docstring."""

    kind = "embedding"
    inverse_valid_for = _VALID

    def __init__(self, q: int, m: int, ell: int) -> None:
        _check_sizes(m, ell, 2 * m, "the twist zeta = x^(2m/l) with zeta^l = -1")
        if ell < 4:
            raise SizeError(f"truncated Schönhage needs l >= 4, got {ell}")
        self.m, self.l = m, ell
        self.zeta_unit = 2 * m // ell
        self.dft_neg = Radix2DFT(ShiftAction(q, 2 * m, 4 * m // ell, ell))
        self.dft_cyc = Radix2DFT(ShiftAction(q, 2 * m, 8 * m // ell, ell // 2))
        self.twist = [j * self.zeta_unit for j in range(ell)]
        src = poly_prod(
            [binomial(m * ell, q - 1, q), binomial(m * ell // 2, 1, q)], q
        )  # (x^ml + 1)(x^(ml/2) - 1)
        s = binomial(2 * m, q - 1, q)
        super().__init__(q, tuple(src), [s] * (3 * ell // 2), f"TruncSchoenhage(m={m}, l={ell})")
        self.inv_l = inverse_mod(ell, q)
        self.inv_half_l = inverse_mod(ell // 2, q)
        self.inv_2 = inverse_mod(2, q)
        self._verify()

    def inverse_factor(self) -> int:
        """The factor 2l of the unnormalised inverse (``normalise=False``)."""
        return 2 * self.l

    def forward_blocks(self, alg: BlockAlgebra[B], blocks: Sequence[B]) -> list[B]:
        """The forward on the carrier ``alg``: the 3l/2 short blocks A_0 .. A_(3l/2-1) (A_j:
        source coefficients j*m .. j*m + m - 1, degree < m) to the 3l/2 pieces (full blocks,
        x^2m + 1, target order): the t-polynomial mod t^l + 1 (l blocks P_j, embedded and
        twisted by zeta^j) and mod t^(l/2) - 1 (l/2 blocks R_j, embedded), then the
        negacyclic and the cyclic DFT."""
        ell, h = self.l, self.l // 2
        blk = list(blocks)
        # t-polynomial mod t^l + 1 and mod t^(l/2) - 1 (on short blocks)
        p = [alg.sub(blk[j], blk[j + ell]) for j in range(h)] + blk[h:ell]
        r = [alg.add(alg.add(blk[j], blk[j + h]), blk[j + ell]) for j in range(h)]
        p = [alg.shift(alg.embed(p[j]), self.twist[j]) for j in range(ell)]  # embed and twist
        r = [alg.embed(x) for x in r]
        return self.dft_neg.run(alg, p, False) + self.dft_cyc.run(alg, r, False)

    def inverse_blocks(self, alg: BlockAlgebra[B], parts: Sequence[B], normalise: bool) -> list[B]:
        """The inverse on the carrier ``alg``: the 3l/2 pieces (full blocks, target order) back
        to the 3l/2 half blocks of the source polynomial W (block j: coefficients j*m ..
        j*m + m - 1) when ``normalise``, else to those of 2l W (:meth:`inverse_factor`), with
        no multiplication at all: with P~ = l P and R~ = (l/2) R the unnormalised inverse
        DFTs, 2l T = 2 R~ - P~_j - P~_(j+h) and 2l P = 2 P~."""
        ell, h = self.l, self.l // 2
        pp = self.dft_neg.run(alg, parts[:ell], True)
        pp = [alg.shift(pp[j], -self.twist[j]) for j in range(ell)]  # untwist: l P_j
        rr = self.dft_cyc.run(alg, parts[ell:], True)  # (l/2) R_j
        # CRT in t: W = P + (t^l + 1) T with T = (R - (P mod t^(l/2) - 1)) / 2
        if normalise:
            p = [alg.scale(x, self.inv_l) for x in pp]
            r = [alg.scale(x, self.inv_half_l) for x in rr]
            t = [alg.scale(alg.sub(alg.sub(r[j], p[j]), p[j + h]), self.inv_2) for j in range(h)]
        else:  # everything times 2l: additions only
            t = [alg.sub(alg.sub(alg.add(rr[j], rr[j]), pp[j]), pp[j + h]) for j in range(h)]
            p = [alg.add(x, x) for x in pp]
        w = [alg.add(p[j], t[j]) for j in range(h)] + p[h:] + t
        # overlap-add sum_j W_j x^(mj), then reduce the overflow block x^(m*3l/2) by G
        nb = 3 * h
        out = [alg.low(w[0])]
        out += [alg.half_add(alg.low(w[j]), alg.high(w[j - 1])) for j in range(1, nb)]
        over = alg.high(w[nb - 1])  # t^(3l/2) = t^l - t^(l/2) + 1
        out[0] = alg.half_add(out[0], over)
        out[h] = alg.half_sub(out[h], over)
        out[ell] = alg.half_add(out[ell], over)
        return out

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        m = self.m
        blocks = [a[j * m : (j + 1) * m] for j in range(3 * self.l // 2)]
        return self.forward_blocks(CoefficientBlocks(self.q, ctr), blocks)

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        out = self.inverse_blocks(CoefficientBlocks(self.q, ctr), parts, True)
        return [x for blk in out for x in blk]

    def constants(self) -> dict[str, object]:
        """{"m", "l", "twist_shifts" (x^(j*2m/l) on block j), "negacyclic_dft" and
        "cyclic_dft" (bit reversal and twiddle shifts per stage), "points" (shift amount e of
        each target's evaluation point t = x^e), "source", "target"}."""
        q, m, ell = self.q, self.m, self.l
        points = [(2 * k + 1) * (2 * m // ell) for k in range(ell)] + [
            k * (8 * m // ell) for k in range(ell // 2)
        ]
        return {
            "m": m,
            "l": ell,
            "twist_shifts": self.twist,
            "negacyclic_dft": self.dft_neg.constants(),
            "cyclic_dft": self.dft_cyc.constants(),
            "points": points,
            "source": describe(self.source, q),
            "target": describe(self.targets[0], q),
        }
