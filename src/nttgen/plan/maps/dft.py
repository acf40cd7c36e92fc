"""Discrete Fourier transforms over *blocks*: the butterflies that Good–Thomas, Schönhage and
Nussbaumer maps are made of.

A length-n DFT of blocks A_0, ..., A_{n-1} computes  Â_k = sum_j w^(jk) * A_j  for k < n, where
the root w of order n acts on a block through an *action*:

* :class:`FieldAction`: w in Z_q, acting by multiplication of every coefficient (``mul_const``);
* :class:`ShiftAction`: w = x^s in Z_q[x]/(x^L + 1) (so s * n = 2L), acting by a negacyclic
  shift (``shift``: free).

The inverse (``inverse=True``) computes  sum_j w^(-jk) * Â_j = n * A_k: it is *unnormalised*; the
caller applies n^-1 once (as ``scale``).

Algorithms (one class each, all with explicit loops over blocks, written once against the block
algebra of :mod:`.blocks`: :meth:`BlockDFT.run` takes the carrier of the blocks, and
:meth:`BlockDFT.apply` runs on lists of coefficients with counted kernels):

* :class:`DirectDFT`: the defining sum, for tiny n (2, or a size without a better algorithm);
* :class:`Radix3DFT`: the radix-3 butterfly with one multiplication by w per coefficient;
* :class:`Radix2DFT`: iterative Gentleman–Sande (forward) / Cooley–Tukey (inverse) with an
  explicit bit-reversal list and an explicit table of twiddle exponents per stage;
* Rader's algorithm for prime n lives in :mod:`.rader`.

:func:`run_axes` (:func:`apply_axes` on coefficient lists) runs one 1-D algorithm along each axis
of a multi-dimensional block array (row-major), which is how the Good–Thomas maps use them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from math import prod
from typing import TypeVar

from ...arith import bitrev, is_power_of_two, log2_exact
from ...errors import NoRootOfUnityError, SizeError
from .blocks import Block, BlockAlgebra, CoefficientBlocks
from .cost import Cost
from .modarith import is_primitive_root_of_unity
from .ops import mul_const, mul_xpow

B = TypeVar("B")


class FieldAction:
    """Multiplication of a block by w^e, w in Z_q of multiplicative order exactly ``n``
    (checked at construction)."""

    def __init__(self, q: int, w: int, n: int) -> None:
        if not is_primitive_root_of_unity(w, n, q):
            raise NoRootOfUnityError(f"{w} is not a primitive {n}-th root of unity mod q={q}")
        self.q, self.w, self.n = q, w % q, n
        self.powers = [pow(w, e, q) for e in range(n)]

    def mul(self, block: Sequence[int], e: int, ctr: Cost) -> Block:
        """w^e * block."""
        return mul_const(block, self.powers[e % self.n], self.q, ctr)

    def apply_to(self, alg: BlockAlgebra[B], block: B, e: int) -> B:
        """w^e * block (any int e) on the carrier ``alg``: one ``mulc`` by w^(e mod n)."""
        return alg.mulc(block, self.powers[e % self.n])

    def is_minus_one(self, e: int) -> bool:
        """Whether w^e = -1."""
        return self.powers[e % self.n] == self.q - 1

    def is_one(self, e: int) -> bool:
        """Whether w^e = 1."""
        return e % self.n == 0

    def describe(self) -> str:
        """E.g. ``w=1158 in Z_q``."""
        return f"w={self.w} in Z_q"


class ShiftAction:
    """Multiplication of an element of Z_q[x]/(x^L + 1) (a block of L coefficients) by
    (x^unit)^e. x has order 2L there, so x^unit is a principal n-th root of unity exactly when
    unit * n = 2L and n is a power of two (then (x^unit)^(n/2) = x^L = -1); checked here."""

    def __init__(self, q: int, length: int, unit: int, n: int) -> None:
        if not (is_power_of_two(n) and n >= 2 and unit >= 1 and unit * n == 2 * length):
            raise NoRootOfUnityError(
                f"x^{unit} is not a principal {n}-th root of unity in Z_q[x]/(x^{length}+1): "
                f"need n a power of two with unit*n = 2*{length}"
            )
        self.q, self.length, self.unit, self.n = q, length, unit, n

    def mul(self, block: Sequence[int], e: int, ctr: Cost) -> Block:
        """x^(unit*e) * block in Z_q[x]/(x^L + 1)."""
        return mul_xpow(block, self.unit * e, self.q, ctr)

    def apply_to(self, alg: BlockAlgebra[B], block: B, e: int) -> B:
        """x^(unit*e) * block (any int e; blocks of L coefficients) on the carrier ``alg``: one
        ``shift`` by unit*e (the carrier takes it mod 2L)."""
        return alg.shift(block, self.unit * e)

    def shift_amount(self, e: int) -> int:
        """The shift unit*e mod 2L that multiplying by w^e performs (>= L means negated)."""
        return (self.unit * e) % (2 * self.length)

    def is_minus_one(self, e: int) -> bool:
        """Whether w^e = -1."""
        return self.shift_amount(e) == self.length

    def is_one(self, e: int) -> bool:
        """Whether w^e = 1."""
        return self.shift_amount(e) == 0

    def describe(self) -> str:
        """E.g. ``w=x^2 in Z_q[x]/(x^32+1)``."""
        return f"w=x^{self.unit} in Z_q[x]/(x^{self.length}+1)"


Action = FieldAction | ShiftAction


class BlockDFT(ABC):
    """A length-n DFT algorithm on blocks (see the module docstring)."""

    n: int
    q: int

    @abstractmethod
    def run(self, alg: BlockAlgebra[B], line: Sequence[B], inverse: bool) -> list[B]:
        """Â_k = sum_j w^(+-jk) A_j for k < n (w^-1 when ``inverse``; unnormalised), on the n
        full blocks ``line`` of the carrier ``alg``; returns the n blocks Â_0 .. Â_(n-1)."""

    def apply(self, line: Sequence[Block], inverse: bool, ctr: Cost) -> list[Block]:
        """:meth:`run` on lists of coefficients in [0, q) (or traced coefficients), counting
        the kernels in ``ctr``; returns new lists."""
        return self.run(CoefficientBlocks(self.q, ctr), line, inverse)

    @abstractmethod
    def constants(self) -> dict[str, object]:
        """The algorithm's constants (root, exponent tables, permutations)."""


class DirectDFT(BlockDFT):
    """The defining sum: out_k = A_0 + sum_{j>0} w^(jk) A_j, adding or subtracting where
    w^(jk) = +-1 and multiplying otherwise."""

    def __init__(self, action: Action) -> None:
        self.action, self.n, self.q = action, action.n, action.q
        self.exponents = [[(j * k) % self.n for j in range(self.n)] for k in range(self.n)]

    def run(self, alg: BlockAlgebra[B], line: Sequence[B], inverse: bool) -> list[B]:
        """See :meth:`BlockDFT.run`."""
        n, act = self.n, self.action
        out = []
        for k in range(n):
            acc = line[0]
            for j in range(1, n):
                e = (-self.exponents[k][j]) % n if inverse else self.exponents[k][j]
                if act.is_one(e):  # w^e = +-1: an addition or subtraction, no multiplication
                    acc = alg.add(acc, line[j])
                elif act.is_minus_one(e):
                    acc = alg.sub(acc, line[j])
                else:
                    acc = alg.add(acc, act.apply_to(alg, line[j], e))
            out.append(acc)
        return out

    def constants(self) -> dict[str, object]:
        """{"algorithm", "n", "root", "exponents" (row k: the exponent jk mod n of w)}."""
        return {
            "algorithm": "direct",
            "n": self.n,
            "root": self.action.describe(),
            "exponents": self.exponents,
        }


class Radix3DFT(BlockDFT):
    """Size-3 DFT with one multiplication per coefficient, using w^2 = -1 - w:

    out_0 = A0 + A1 + A2,  T = w (A1 - A2),  out_1 = (A0 - A2) + T,  out_2 = (A0 - A1) - T.

    The inverse is the same butterfly with w^-1 = w^2."""

    def __init__(self, action: FieldAction) -> None:
        if action.n != 3:
            raise SizeError(f"Radix3DFT needs a root of order 3, got order {action.n}")
        self.action, self.n, self.q = action, 3, action.q

    def run(self, alg: BlockAlgebra[B], line: Sequence[B], inverse: bool) -> list[B]:
        """See :meth:`BlockDFT.run`."""
        a0, a1, a2 = line
        t = self.action.apply_to(alg, alg.sub(a1, a2), 2 if inverse else 1)
        out0 = alg.add(alg.add(a0, a1), a2)
        out1 = alg.add(alg.sub(a0, a2), t)
        out2 = alg.sub(alg.sub(a0, a1), t)
        return [out0, out1, out2]

    def constants(self) -> dict[str, object]:
        """{"algorithm", "n", "root"}."""
        return {"algorithm": "radix-3 butterfly", "n": 3, "root": self.action.describe()}


class Radix2DFT(BlockDFT):
    """Iterative radix-2 DFT of length n = 2^k.

    Forward (Gentleman–Sande, decimation in frequency): for half = n/2, n/4, ..., 1, for each
    group start s (step 2*half) and j < half, with e = j * n/(2*half):
    (u, v) = (A[s+j], A[s+j+half]) -> (u + v, w^e (u - v)). The result is in bit-reversed order;
    out_k = A[bitrev(k)] (the explicit list :attr:`bitrev`).

    Inverse (Cooley–Tukey, decimation in time, unnormalised): read in bit-reversed order, then
    for half = 1, 2, ..., n/2: (u, v) -> (u + w^-e v, u - w^-e v)."""

    def __init__(self, action: Action) -> None:
        if not is_power_of_two(action.n) or action.n < 2:
            raise SizeError(f"Radix2DFT needs a power-of-two length, got {action.n}")
        self.action, self.n, self.q = action, action.n, action.q
        k = log2_exact(self.n)
        self.bitrev = [bitrev(i, k) for i in range(self.n)]
        self.stages: list[tuple[int, list[int]]] = []
        half = self.n // 2
        while half >= 1:
            step = self.n // (2 * half)
            self.stages.append((half, [j * step for j in range(half)]))
            half //= 2

    def run(self, alg: BlockAlgebra[B], line: Sequence[B], inverse: bool) -> list[B]:
        """See :meth:`BlockDFT.run`."""
        act, n = self.action, self.n
        if not inverse:
            a = list(line)
            for half, exps in self.stages:
                for s in range(0, n, 2 * half):
                    for j in range(half):
                        u, v = a[s + j], a[s + j + half]
                        a[s + j] = alg.add(u, v)
                        a[s + j + half] = act.apply_to(alg, alg.sub(u, v), exps[j])
            return [a[self.bitrev[k]] for k in range(n)]
        a = [line[self.bitrev[i]] for i in range(n)]
        for half, exps in reversed(self.stages):
            for s in range(0, n, 2 * half):
                for j in range(half):
                    u = a[s + j]
                    v = act.apply_to(alg, a[s + j + half], -exps[j])
                    a[s + j] = alg.add(u, v)
                    a[s + j + half] = alg.sub(u, v)
        return a

    def constants(self) -> dict[str, object]:
        """{"algorithm", "n", "root", "bitrev", "stages": [(half, exponents)], and for a shift
        action "shifts": the shift amount of every twiddle per stage}."""
        out: dict[str, object] = {
            "algorithm": "radix-2 (GS forward, CT inverse)",
            "n": self.n,
            "root": self.action.describe(),
            "bitrev": self.bitrev,
            "stages": self.stages,
        }
        if isinstance(self.action, ShiftAction):
            act = self.action
            out["shifts"] = [[act.shift_amount(e) for e in exps] for _, exps in self.stages]
        return out


def apply_axes(
    arr: list[Block],
    shape: Sequence[int],
    dfts: Sequence[BlockDFT],
    inverse: bool,
    ctr: Cost,
) -> list[Block]:
    """:func:`run_axes` on lists of coefficients (or traced coefficients), counting the kernels
    in ``ctr``. Returns a new array."""
    alg = CoefficientBlocks(dfts[0].q if dfts else 0, ctr)
    return run_axes(alg, arr, shape, dfts, inverse)


def run_axes(
    alg: BlockAlgebra[B],
    arr: Sequence[B],
    shape: Sequence[int],
    dfts: Sequence[BlockDFT],
    inverse: bool,
) -> list[B]:
    """Run ``dfts[d]`` (:meth:`BlockDFT.run` on the carrier ``alg``) along axis d of the
    row-major array ``arr`` of full blocks of shape ``shape``, for every axis d (forward: axis 0
    first; inverse: last axis first; within an axis, line by line in order of the line's first
    index). Returns a new array of the same shape (:class:`SizeError` on a shape mismatch)."""
    if prod(shape) != len(arr) or len(shape) != len(dfts):
        raise SizeError(f"array of {len(arr)} blocks does not have shape {tuple(shape)}")
    for d, t in zip(shape, dfts, strict=True):
        if t.n != d:
            raise SizeError(f"axis of length {d} given a DFT of length {t.n}")
    out = list(arr)
    axes = range(len(shape) - 1, -1, -1) if inverse else range(len(shape))
    for d in axes:
        stride = prod(shape[d + 1 :])
        n = shape[d]
        for base in range(len(out)):
            if (base // stride) % n:
                continue  # not the first element of a line along axis d
            idx = [base + i * stride for i in range(n)]
            res = dfts[d].run(alg, [out[i] for i in idx], inverse)
            for i, b in zip(idx, res, strict=True):
                out[i] = b
    return out
