"""Good–Thomas (prime-factor) maps: Z_q[x]/(x^(m*n) - 1) -> prod_k Z_q[x]/(x^m - t_k).

Write a = sum_{j<n} A_j t^j with t = x^m and blocks A_j of m coefficients. For n = n_1 * ... * n_d
with pairwise coprime n_i, the Good–Thomas index map

    j -> (j mod n_1, ..., j mod n_d)

identifies Z_q[t]/(t^n - 1) with Z_q[u_1, ..., u_d]/(u_1^n_1 - 1, ..., u_d^n_d - 1) via
t = u_1 * ... * u_d (t^j = u_1^j ... u_d^j). Evaluating every u_i at all powers of a primitive
n_i-th root w_i (independent DFTs along each axis, no twiddles between axes) gives, at output
multi-index (k_1, ..., k_d), the image of a in Z_q[x]/(x^m - t_k) with t_k = prod_i w_i^k_i. The
t_k run over all n-th roots of unity, so prod_k (x^m - t_k) = x^(mn) - 1: a ``crt`` map.

Per axis the algorithm is the radix-3 butterfly for n_i = 3, Rader's algorithm for primes >= 5,
radix 2 for powers of two >= 4, and the defining sum otherwise (n_i = 2 is one add and one sub).
The inverse runs the inverse DFTs, multiplies by n^-1 once (``scale``) and undoes the index map.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from math import gcd, prod

from ...arith import is_power_of_two, is_prime
from .base import RingMap
from .cost import Cost
from .dft import BlockDFT, DirectDFT, FieldAction, Radix2DFT, Radix3DFT, apply_axes
from .errors import SizeError
from .modarith import centred, inverse_mod, primitive_root_of_unity
from .ops import scale
from .polys import binomial, describe
from .rader import RaderDFT


def field_dft(q: int, n: int, w: int | None = None, paired_leaves: bool = True) -> BlockDFT:
    """The DFT algorithm this module uses for an axis of length n over Z_q (see the module
    docstring); w defaults to the smallest primitive n-th root of unity; ``paired_leaves``:
    Rader's quadratic leaves by three multiplications (see :class:`~.basecase.ConstMul`)."""
    w = primitive_root_of_unity(n, q) if w is None else w
    if n == 3:
        return Radix3DFT(FieldAction(q, w, 3))
    if is_prime(n) and n >= 5:
        return RaderDFT(q, n, w, paired_leaves)
    if is_power_of_two(n) and n >= 4:
        return Radix2DFT(FieldAction(q, w, n))
    return DirectDFT(FieldAction(q, w, n))


def check_coprime(axes: Sequence[int]) -> None:
    """Raise :class:`SizeError` unless the axis lengths are >= 2 and pairwise coprime."""
    for i, a in enumerate(axes):
        if a < 2:
            raise SizeError(f"Good–Thomas axis lengths must be >= 2, got {a}")
        for b in axes[i + 1 :]:
            if gcd(a, b) != 1:
                raise SizeError(
                    f"Good–Thomas needs pairwise coprime sizes: gcd({a}, {b}) = {gcd(a, b)}"
                )


def index_map(j: int, axes: Sequence[int]) -> tuple[int, ...]:
    """The Good–Thomas input index map j -> (j mod n_1, ..., j mod n_d)."""
    return tuple(j % n for n in axes)


def index_unmap(idx: Sequence[int], axes: Sequence[int]) -> int:
    """The inverse of :func:`index_map` (Chinese remaindering)."""
    n = prod(axes)
    j = 0
    for r, ni in zip(idx, axes, strict=True):
        other = n // ni
        j += r * other * pow(other, -1, ni)
    return j % n


def flat(idx: Sequence[int], axes: Sequence[int]) -> int:
    """Row-major position of a multi-index in an array of shape ``axes``."""
    pos = 0
    for r, ni in zip(idx, axes, strict=True):
        pos = pos * ni + r
    return pos


class GoodThomasMap(RingMap):
    """Z_q[x]/(x^(m*n) - 1) -> prod_k Z_q[x]/(x^m - t_k) for n = prod(axes), axes pairwise
    coprime (see the module docstring). Targets are in row-major order of (k_1, ..., k_d).

    ``omegas`` (optional) fixes the root of each axis; by default the smallest primitive n_i-th
    root of unity (raises :class:`~.errors.NoRootOfUnityError` if n_i does not divide q - 1);
    ``paired_leaves``: see :func:`field_dft`."""

    def __init__(
        self,
        q: int,
        m: int,
        axes: Sequence[int],
        omegas: Sequence[int] | None = None,
        paired_leaves: bool = True,
    ) -> None:
        axes = tuple(axes)
        check_coprime(axes)
        if m < 1:
            raise SizeError(f"block size must be >= 1, got {m}")
        ws = [primitive_root_of_unity(n, q) for n in axes] if omegas is None else list(omegas)
        self.m, self.axes, self.n = m, axes, prod(axes)
        self.omegas = [w % q for w in ws]
        self.dfts = [
            field_dft(q, n, w, paired_leaves) for n, w in zip(axes, self.omegas, strict=True)
        ]
        self.points: list[tuple[tuple[int, ...], int]] = []
        for k in product(*(range(n) for n in axes)):
            t = prod(pow(w, ki, q) for w, ki in zip(self.omegas, k, strict=True)) % q
            self.points.append((k, t))
        self.in_perm = [flat(index_map(j, axes), axes) for j in range(self.n)]
        super().__init__(
            q,
            binomial(m * self.n, 1, q),
            [binomial(m, t, q) for _, t in self.points],
            f"GoodThomas({'x'.join(map(str, axes))}, m={m})",
        )
        self.inv_n = inverse_mod(self.n, q)
        self._verify()

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        m = self.m
        arr: list[list[int]] = [[] for _ in range(self.n)]
        for j in range(self.n):
            arr[self.in_perm[j]] = a[j * m : (j + 1) * m]
        return apply_axes(arr, self.axes, self.dfts, False, ctr)

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        arr = apply_axes(parts, self.axes, self.dfts, True, ctr)
        out: list[int] = []
        for j in range(self.n):
            out.extend(scale(arr[self.in_perm[j]], self.inv_n, self.q, ctr))
        return out

    def constants(self) -> dict[str, object]:
        """{"m", "axes", "omegas", "index_map" (block j -> row-major position), "points"
        (multi-index k and t_k, centred), "axis_algorithms", "targets"}."""
        q = self.q
        return {
            "m": self.m,
            "axes": self.axes,
            "omegas": dict(zip(self.axes, self.omegas, strict=True)),
            "index_map": self.in_perm,
            "points": [(k, centred(t, q)) for k, t in self.points],
            "axis_algorithms": [d.constants() for d in self.dfts],
            "targets": [describe(t, q) for t in self.targets],
        }
