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
from typing import TypeVar

from ...arith import is_power_of_two, is_prime
from ...errors import SizeError
from .base import RingMap
from .cost import Cost
from .dft import BlockDFT, DirectDFT, FieldAction, Radix2DFT, Radix3DFT, apply_axes
from .modarith import centred, inverse_mod, primitive_root_of_unity
from .ops import scale
from .polys import binomial, cyclotomic_of_power, describe
from .rader import RaderDFT
from .trace import Trace, trace_map

T = TypeVar("T")


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


def inverse_dft_blocks(
    gt: GoodThomasMap, kept: Sequence[int], parts: Sequence[Sequence[T]]
) -> list[list[T | int]]:
    """The unnormalised inverse Good–Thomas DFT of ``parts`` (the pieces at the indices
    ``kept`` into ``gt.points``; every other piece zero), as the n blocks of the source in
    their natural order (block j = coefficients j*m .. j*m + m - 1, m = len of a part).
    Works on ints and on traced symbols alike."""
    m = len(parts[0])
    full: list[list[T | int]] = [[0] * m for _ in range(gt.n)]
    for i, part in zip(kept, parts, strict=True):
        full[i] = list(part)
    arr = apply_axes(full, gt.axes, gt.dfts, True, Cost())  # type: ignore[arg-type]
    return [arr[gt.in_perm[j]] for j in range(gt.n)]


def fold_phi(blocks: Sequence[Sequence[T]], width: int, count: int) -> list[list[T]]:
    """Blocks 0 .. count-1 of c mod Phi_r(y^width), y = x^m, for any c given as its n =
    r * width blocks of m coefficients (degree < n m): Phi_r(y^width) = 1 + y^width + ... +
    y^(width (r-1)) is monic of degree top = n - width blocks, so each top block top + i
    (i < width) is subtracted from the blocks below congruent to i mod width. ``count`` at
    most ``top`` (the remainder has no more blocks)."""
    top = len(blocks) - width
    if count > top:
        raise SizeError(f"{count} blocks asked of Phi's {top}")
    return [
        [u - v for u, v in zip(blocks[j], blocks[top + j % width], strict=True)]  # type: ignore[operator]
        for j in range(count)
    ]


class CyclotomicGoodThomasMap(RingMap):
    """Z_q[x]/(Phi_r(x^(m*n/r))) -> prod_k Z_q[x]/(x^m - t_k) over the n - n/r points of the
    Good–Thomas map with k_r != 0, r = axes[0] (a prime, done by Rader's algorithm).

    x^(m*n) - 1 = (x^(m*n/r) - 1) * Phi_r(x^(m*n/r)), and the first factor is the product of
    the n/r pieces at Rader's zero frequency (t_k^(n/r) = 1), so leaving those out gives a CRT
    map of the second (the ring of Hwang 2023 for sntrup761: Phi_17(x^96), degree 1536).
    The forward is the Good–Thomas DFT with the input's n/r top blocks zero, pruned to the kept
    pieces; the inverse runs the inverse DFT with the left-out pieces zero, which gives the
    representative c'' of the element that is 0 modulo x^(m*n/r) - 1, then reduces c''
    modulo Phi_r(y^(n/r)), y = x^m: each top block (n - n/r + i) is subtracted from the blocks
    below congruent to i mod n/r; then n^-1 (``scale``).

    Costs are those of this structure: the DFTs as traced (``plan.maps.trace``, on one
    coefficient per block, times m): the forward without the operations only the left-out
    pieces or the zero top blocks need, the inverse without those on its zero inputs."""

    def __init__(
        self,
        q: int,
        m: int,
        axes: Sequence[int],
        omegas: Sequence[int] | None = None,
        paired_leaves: bool = True,
    ) -> None:
        self.whole = GoodThomasMap(q, m, axes, omegas, paired_leaves)
        self.m, self.axes, self.n = m, self.whole.axes, self.whole.n
        r = self.axes[0]
        if not is_prime(r) or r < 5:
            raise SizeError(f"the cyclotomic Good–Thomas map needs Rader's prime first, got {r}")
        self.width = self.n // r
        self.kept = [i for i, (k, _) in enumerate(self.whole.points) if k[0]]
        self.points = [self.whole.points[i] for i in self.kept]
        self.modulus_text = f"Phi_{r}(x^{m * self.width})"
        super().__init__(
            q,
            cyclotomic_of_power(r, m * self.width, q),
            [self.whole.targets[i] for i in self.kept],
            f"GoodThomas({'x'.join(map(str, self.axes))}, m={m}) mod {self.modulus_text}",
        )
        self.top = self.n - self.width  # blocks of the source
        self._fwd_cost, self._inv_cost = self._traced_costs(paired_leaves)
        self._verify()

    def _traced_costs(self, paired_leaves: bool) -> tuple[Cost, Cost]:
        """The forward and inverse counts, from traces of the map on one coefficient per
        block (the same DFTs and constants), times m."""
        q, top, width = self.q, self.top, self.width
        one = GoodThomasMap(q, 1, self.axes, self.whole.omegas, paired_leaves)
        fwd, outs = trace_map(lambda xs: one.forward(list(xs) + [0] * width), q, top)
        kept = [outs[i][0] for i in self.kept]
        fwd = fwd.pruned(kept)

        def inverse(xs: Sequence[object]) -> list[list[object]]:
            blocks = inverse_dft_blocks(one, self.kept, [[x] for x in xs])
            return fold_phi(blocks, width, top)

        inv, _ = trace_map(inverse, q, len(self.kept))  # type: ignore[arg-type]
        scale_count = Cost({"scale": top}) if self.whole.inv_n != 1 else Cost()
        return _trace_cost(fwd) * self.m, _trace_cost(inv) * self.m + scale_count * self.m

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        parts = self.whole._forward(a + [0] * (self.m * self.width), Cost())
        _tick(ctr, self._fwd_cost)
        return [parts[i] for i in self.kept]

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        q, inv_n = self.q, self.whole.inv_n
        blocks = fold_phi(inverse_dft_blocks(self.whole, self.kept, parts), self.width, self.top)
        out = [x * inv_n % q for block in blocks for x in block]
        _tick(ctr, self._inv_cost)
        return out

    def constants(self) -> dict[str, object]:
        """The whole map's constants (:meth:`GoodThomasMap.constants`) with "kept" (the points
        computed, indices into "points") and "modulus" (Phi_r(x^(m n / r)) as text)."""
        out = self.whole.constants()
        out["kept"] = list(self.kept)
        out["modulus"] = self.modulus_text
        return out

    def describe(self) -> str:
        """One line: name and a summary of the targets (the source by name)."""
        return f"{self.name}: {len(self.targets)} parts of degree {self.m}"


def _trace_cost(trace: Trace) -> Cost:
    """A trace's operations as :mod:`.cost` counts: additions and subtractions ``add``,
    products by constants ``mul_const``, negations ``shift`` (as :mod:`.ops` counts them)."""
    kinds = {"add": "add", "sub": "add", "mulc": "mul_const", "neg": "shift"}
    out = Cost()
    for op, count in trace.counts().items():
        if op in kinds:
            out.tick(kinds[op], count)
    return out


def _tick(ctr: Cost, cost: Cost) -> None:
    """Add every count of ``cost`` to ``ctr``."""
    for key, value in cost.as_dict().items():
        ctr.tick(key, value)
