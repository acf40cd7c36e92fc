"""Rader's algorithm: a DFT of prime length n through a cyclic convolution of length n - 1.

With g a generator of (Z/n)^* (checked: order n - 1), write the inputs j != 0 as j = g^-b and the
outputs k != 0 as k = g^a. Then jk = g^(a-b) and

    Â_{g^a} - A_0 = sum_{b < n-1} W_{(a-b) mod (n-1)} * A_{g^-b},   W_c = w^(g^c),

a cyclic convolution of the kernel W (constants) with the permuted inputs. Â_0 = sum_j A_j.

The explicit lists are :attr:`RaderDFT.perm_in` (perm_in[b] = g^-b mod n: which input goes to
position b of the convolution) and :attr:`RaderDFT.perm_out` (perm_out[a] = g^a mod n: which
output position a of the convolution feeds). The convolution is the product modulo x^(n-1) - 1,
computed by the split tree of :func:`~.split.auto_split` (radix-2 Cooley–Tukey and Bruun levels as
far as Z_q allows), the transformed kernel times the transformed data in each leaf
(:class:`~.basecase.ConstMul`), and the tree's unnormalised inverse (its normalisation
constants are folded into the transformed kernel, so Rader's algorithm has no ``scale``
operations). On blocks it runs lane by lane (one scalar convolution per coefficient position),
which is what a vectorised program does with whole vectors.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from ...arith import is_prime, multiplicative_order
from ...errors import FactorisationError, NoRootOfUnityError, SizeError
from .base import RingMap
from .basecase import ConstMul
from .blocks import BlockAlgebra, CoefficientBlocks
from .cost import Cost
from .dft import Block, BlockDFT, DirectDFT, FieldAction
from .modarith import centred, is_primitive_root_of_unity, multiplicative_generator
from .ops import add
from .polys import binomial, describe
from .split import auto_split

B = TypeVar("B")


class RaderDFT(BlockDFT):
    """Length-n DFT (n an odd prime) with root w in Z_q of order n, by Rader's algorithm.

    Constructed constants (all checked): the generator g, the permutations, the kernels W for
    w (forward) and w^-1 (inverse), the split tree of x^(n-1) - 1 and the kernels' transforms.
    The construction compares the result with the defining sum on a pseudo-random line."""

    def __init__(self, q: int, n: int, w: int, paired_leaves: bool = True) -> None:
        if not (is_prime(n) and n > 2):
            raise SizeError(f"Rader's algorithm needs an odd prime length, got {n}")
        if not is_primitive_root_of_unity(w, n, q):
            raise NoRootOfUnityError(f"{w} is not a primitive {n}-th root of unity mod q={q}")
        self.q, self.n, self.w = q, n, w % q
        self.paired_leaves = paired_leaves
        g = multiplicative_generator(n)
        if multiplicative_order(g, n) != n - 1:  # pragma: no cover - defensive
            raise FactorisationError(f"{g} does not generate (Z/{n})^*")
        self.generator = g
        self.perm_in = [pow(g, -b, n) for b in range(n - 1)]
        self.perm_out = [pow(g, a, n) for a in range(n - 1)]
        for perm in (self.perm_in, self.perm_out):
            if sorted(perm) != list(range(1, n)):  # pragma: no cover - defensive
                raise FactorisationError(f"Rader permutation {perm} is not a permutation of 1..n-1")
        self.kernel = [pow(w, pow(g, c, n), q) for c in range(n - 1)]
        self.kernel_inv = [pow(w, -pow(g, c, n), q) for c in range(n - 1)]
        self.conv_modulus = binomial(n - 1, 1, q)
        self.conv: RingMap | None = auto_split(q, self.conv_modulus, 1)
        leaves = self.conv.targets if self.conv is not None else (self.conv_modulus,)
        self.leaves = leaves
        self.kernel_hat = self._transform_kernel(self.kernel)
        self.kernel_inv_hat = self._transform_kernel(self.kernel_inv)
        self._check()

    def _transform_kernel(self, kernel: Sequence[int]) -> list[ConstMul]:
        """The kernel's image in every leaf, times the leaf's normalisation nu (so the tree's
        unnormalised inverse can be used: no ``scale`` operations remain)."""
        q = self.q
        if self.conv is None:
            return [ConstMul(q, self.conv_modulus, kernel, self.paired_leaves)]
        parts = self.conv.forward(kernel)
        nus = self.conv.norms()
        if nus is None:  # pragma: no cover - every split map has norms
            raise FactorisationError("Rader: the convolution tree has no unnormalised inverse")
        return [
            ConstMul(q, g, [x * nu % q for x in k], self.paired_leaves)
            for g, k, nu in zip(self.leaves, parts, nus, strict=True)
        ]

    def _convolve(self, x: list[int], inverse: bool, ctr: Cost) -> list[int]:
        """Cyclic convolution of x with the kernel (of w^-1 when ``inverse``)."""
        muls = self.kernel_inv_hat if inverse else self.kernel_hat
        if self.conv is None:
            return muls[0].mul(x, ctr)
        parts = self.conv.forward(x, ctr)
        prods = [m.mul(p, ctr) for m, p in zip(muls, parts, strict=True)]
        return self.conv.inverse_raw(prods, ctr)

    def run(self, alg: BlockAlgebra[B], line: Sequence[B], inverse: bool) -> list[B]:
        """See :meth:`BlockDFT.run`. Rader's convolution works coefficient by coefficient, which
        the block algebra does not offer: only :class:`~.blocks.CoefficientBlocks` carries it
        (as :meth:`apply`); another carrier raises NotImplementedError."""
        if not isinstance(alg, CoefficientBlocks):
            raise NotImplementedError(f"Rader's algorithm on {type(alg).__name__}")
        return self.apply(line, inverse, alg.ctr)  # type: ignore[arg-type, return-value]

    def apply(self, line: Sequence[Block], inverse: bool, ctr: Cost) -> list[Block]:
        """See :meth:`BlockDFT.apply`: Â_0 = sum of the blocks; Â_{perm_out[a]} = A_0 + conv_a,
        lane by lane."""
        q, n = self.q, self.n
        lanes = len(line[0])
        total = list(line[0])
        for j in range(1, n):
            total = add(total, line[j], q, ctr)
        permuted = [line[i] for i in self.perm_in]  # the Rader input permutation
        conv_blocks: list[list[int]] = [[0] * lanes for _ in range(n - 1)]
        for lane in range(lanes):
            c = self._convolve([blk[lane] for blk in permuted], inverse, ctr)
            for a in range(n - 1):
                conv_blocks[a][lane] = c[a]
        out: list[Block] = [[] for _ in range(n)]
        out[0] = total
        for a in range(n - 1):
            out[self.perm_out[a]] = add(line[0], conv_blocks[a], q, ctr)
        return out

    def _check(self) -> None:
        rng = random.Random(f"rader/{self.q}/{self.n}")
        line = [[rng.randrange(self.q)] for _ in range(self.n)]
        direct = DirectDFT(FieldAction(self.q, self.w, self.n))
        for inverse in (False, True):
            if self.apply(line, inverse, Cost()) != direct.apply(line, inverse, Cost()):
                raise FactorisationError(
                    f"Rader DFT of length {self.n} disagrees with the defining sum"
                )

    def constants(self) -> dict[str, object]:
        """{"algorithm", "n", "omega", "generator", "perm_in", "perm_out", "kernel" (centred),
        "convolution_leaves" (the split of x^(n-1) - 1)}."""
        q = self.q
        return {
            "algorithm": "Rader",
            "n": self.n,
            "omega": self.w,
            "generator": self.generator,
            "perm_in": self.perm_in,
            "perm_out": self.perm_out,
            "kernel": [centred(x, q) for x in self.kernel],
            "convolution_leaves": [describe(g, q) for g in self.leaves],
        }
