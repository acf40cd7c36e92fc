"""NTRU Prime multiplication as DSL programs: the Good–Rader pipeline over lanes.

The ring Z_q[x]/(x^p - x - 1) has no large power-of-two roots of unity, so the product of two
polynomials of degree < p is computed in a ring with a fast transform and folded back. Write
a = sum_j A_j y^j with y = x^m and blocks A_j of m coefficients. The Good–Thomas map
(``plan.maps.good_thomas``) evaluates y at the n-th roots of unity t_k by a prime-factor DFT
over the blocks (Rader's algorithm for the prime axis r, radix 3 and 2 for the others); piece k
is a's image in Z_q[x]/(x^m - t_k), and all n pieces make Z_q[x]/(x^(m*n) - 1) (for p = 761,
q = 4591: m = 16, n = 102 = 17 * 3 * 2, x^1632 - 1). The programs leave out the n/r pieces at
Rader's zero frequency (t_k^(n/r) = 1), whose product is x^(m*n/r) - 1, and so compute in
Z_q[x]/(Phi_r(x^(m*n/r))) (Phi_17(x^96), degree 1536 >= 2p - 1 = 1521, the ring of Hwang 2023)
wherever the product fits in it (:func:`good_rader_shape`): 96 pieces instead of 102, six
whole AVX2 groups of 16 in the base instead of seven with ten padding rows. Every DFT
operation acts on whole blocks with the same scalar constant, so the programs keep coefficient
positions in lanes (a block of 16 is one AVX2 register) and every constant is a broadcast.

Stages of ``polymul(r, a, b)`` (all functions below, in this order):

``forward`` (once per operand)
    The DFT over blocks, lanes = coefficient positions, in chunks of L lanes (L | m). Its
    straight-line code is the *trace* of the checked map (``plan.maps.trace``): the map run
    on symbolic coefficients, so the program performs exactly the map's additions and
    products by constants, never on the zero padding above p. Negations are not performed:
    each traced value carries a sign that later ops absorb (a - (-b) is an addition, c * (-v)
    a product by -c). Both operands go through the same trace, so a piece's sign is the same
    in both and cancels in their product. Where the ISA measured it faster
    (``NtruConfig.dft_lines``) the DFT runs instead as two loops whose bodies are single axes'
    traces, Rader's on each line, then the other axes' on each frequency
    (:mod:`.ntru_lines`): more operations (no zero blocks skipped, values stored between
    the passes), far less code. The inverse likewise.
``base`` (pieces in lanes)
    c_k = a_k * b_k mod (x^m - t_k). Where every t_k is a square (blocks of 32, DFT 17 x 3:
    the 32-lane shape of AVX-512) the pieces first split by Cooley–Tukey into
    x^(m/2) - s_k and x^(m/2) + s_k, s_k^2 = t_k (per-lane constants), the halves are
    multiplied as below in their own loop, and 2 c_k comes back as (c+ + c-) +
    x^(m/2) (c+ - c-) / s_k (the 2 goes into the fold's constant). Each product modulo
    x^n - t is, as ``NtruConfig.base_products`` chooses, one of three. "wide": a schoolbook
    product against b's coefficients with the wrapped ones multiplied by t (per-lane
    constants) first: every output coefficient is one exact sum of n products in
    double-width lanes (``madd``, ``addw``) and one Montgomery reduction (``mredw``), see
    :func:`twisted_product`. "karatsuba": the full product by Karatsuba (halving down to
    ``KARATSUBA_LEAF`` coefficients, schoolbook below: 108 products for m = 16 instead of
    256), the wrapped half multiplied by t_k, a per-lane constant; each coefficient of b_k
    (and of each Karatsuba sum of them) is multiplied by q^-1 mod beta once, so each product
    is a Montgomery product by a precomputed pair (``montmul``). With L
    lanes, L pieces' coefficient i form one vector: an L x L transpose (one move per
    register bit: the ISA's in-group zips where it has them, ``shuffle`` otherwise) turns the
    rows of the forward output into such vectors and back. "pairs" (where a piece fills a
    register): the same sums as "wide", but with coefficients 2j and 2j+1 of each of L/2
    pieces in adjacent lanes, so that ``pair_madd`` (x86 ``vpmaddwd``) forms each pair of
    products without interleaving, the other operand's pairs come from one blend or swap,
    and the transposes move 2-lane elements (:func:`program_base_pairs`). The products are
    Montgomery products, so c carries a factor beta^-1.
``inverse``
    The inverse DFT over blocks (lanes = coefficient positions again), *without* its 1/n
    normalisation, for the blocks below 2p only (the product has degree <= 2p - 2). With the
    zero-frequency pieces left out it takes them as zero, which gives the representative
    c'' of the product that is 0 modulo y^(n/r) - 1; c'' mod Phi_r(y^(n/r)) subtracts each of
    its top n/r blocks from the blocks below congruent to it mod n/r, one line of Rader's
    axis at a time (:attr:`GoodRaderShape.inverse_trace`). Its outputs are left within a
    third of the lane, so that the fold's sums need no reduction.
``fold``
    r_j = K * (c_j + c_(j+p) + c_(j+p-1)) (the last term for j >= 1), x^p = x + 1, with
    K = beta / (n * base scale) mod q undoing the Montgomery factor, the normalisation and the
    split's factor 2 in one product;
    then the exact centred representative in [-(q-1)/2, (q-1)/2] (two conditional additions
    of q).

Reductions are placed by the interval analysis (:class:`~nttgen.programs.lazy.Reducer`),
so the same code yields each ISA's and each operand range's own schedule (``polymul_small``
runs the small operand's forward transform with the contract [-1, 1] and reduces less, except
where ``NtruConfig.small_forward`` says one shared transform measured faster).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Protocol

import numpy as np

from ..dsl import semantics
from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Function, LoopVar, Value
from ..errors import IsaUnavailableError
from ..plan.constants import Arith
from ..plan.maps.choose import GRB as GRB_NAME
from ..plan.maps.good_thomas import GoodThomasMap, fold_phi, inverse_dft_blocks
from ..plan.maps.modarith import sqrt_mod
from ..plan.maps.trace import Sym, Trace, trace_map
from .lazy import Reducer
from .ntru_config import BASE_PRODUCTS, BaseProducts, LineThresholds, NtruConfig

KARATSUBA_LEAF = 2
"""Base products of at most this many coefficients are schoolbook; larger ones Karatsuba.
On AVX2 (sntrup761 polymul, one harness): schoolbook 16 x 16 7,770 ticks, Karatsuba down to
8: 7,400, to 4: 7,010, to 2: 6,950 (the Montgomery products dominate; the extra additions
and reductions of the deeper levels cost less than the products they save)."""

Signed = tuple[Value, int]
"""A lowered traced value: (vector, sign), standing for sign * vector."""


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
            f"{GRB_NAME}: the product in {ring}, Good–Thomas DFT of length {self.n} = {axes} "
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
    from ..plan.maps.choose import GRB, plan_pipeline

    plan = plan_pipeline(GRB, p, q)
    m, r = plan.sizes["m"], plan.sizes["r"]
    if lanes == 2 * m:
        shape = GoodRaderShape(p, q, 2 * m, (r, 3), lanes, paired_leaves)
    else:
        shape = GoodRaderShape(p, q, m, (r, 3, 2), lanes, paired_leaves)
    return replace(shape, cyclotomic=True) if cyclotomic and shape.admits_cyclotomic else shape


class FoldShape(Protocol):
    """What :func:`program_fold` needs of a pipeline's shape."""

    p: int
    q: int
    lanes: int

    @property
    def fold_scale(self) -> int: ...

    @property
    def product_length(self) -> int: ...


# --------------------------------------------------------------------------- trace lowering
class TraceLowering:
    """Lowers a trace onto the builder: one vocabulary op per traced addition, subtraction or
    product by a constant, negations folded into signs, reductions where the analysis needs
    them. Constants are broadcast once per function."""

    def __init__(self, S: Builder, red: Reducer) -> None:
        self.S, self.red = S, red
        self._consts: dict[int, tuple[Value, Value]] = {}
        self._small: dict[int, Value] = {}

    def constant(self, c: int) -> tuple[Value, Value]:
        """The broadcast pair that multiplies by c (mod q) with ``mulconst``."""
        c %= self.S.arith.q
        if c not in self._consts:
            z, zq = self.S.arith.twisted(c)
            self._consts[c] = (self.S.const(z, hint="w"), self.S.const(zq, hint="wq"))
        return self._consts[c]

    def small_constant(self, c: int) -> Value:
        """The broadcast c (centred, |c| <= q/2) that ``mullo`` multiplies by exactly."""
        if c not in self._small:
            self._small[c] = self.S.const(c, hint="c")
        return self._small[c]

    def preload(self, trace: Trace) -> None:
        """Broadcast every constant the trace may multiply by (either sign, both forms), so
        that a trace lowered inside a loop body finds them made before the loop; the
        unused ones are dead code, which the builder drops."""
        q = self.S.arith.q
        for node in trace.nodes:
            if node.op == "mulc":
                for c in (int(node.const or 0), -int(node.const or 0)):
                    self.constant(c)
                    centred = c % q - q if c % q > q // 2 else c % q
                    self.small_constant(centred)

    def exact_product(self, v: Value, c: int) -> Value | None:
        """v * c as one ``mullo`` by c's centred representative, where the interval analysis
        proves the product is at most q in magnitude (below the bound of a Montgomery product,
        so nothing later needs a reduction it would not have needed anyway); None otherwise.
        Measured by count (sntrup761, AVX2): the small operand's transform then does 55 of
        its 351 products this way and 14 fewer reductions; a looser limit (8,000) converts 18
        more products but costs 30 more reductions. Only the small operand's transform
        (coefficients in [-1, 1]) has such products."""
        S = self.S
        q = S.arith.q
        c %= q
        if c > q // 2:
            c -= q
        if S.bound(v).magnitude * abs(c) > q:
            return None
        return S.mullo(v, self.small_constant(c), hint="t")

    def multiply(self, v: Value, c: int) -> Value:
        """v * c mod q: an exact ``mullo`` where :meth:`exact_product` allows it, else a
        product by the constant's broadcast pair."""
        exact = self.exact_product(v, c)
        if exact is not None:
            return exact
        z, zq = self.constant(c)
        return self.S.mulconst(v, z, zq, hint="t")

    def run(
        self,
        trace: Trace,
        inputs: Callable[[int], Signed],
        outputs: Sequence[Sym | int],
    ) -> list[Signed | None]:
        """Lower every node; ``inputs(i)`` gives input i. Returns each output as (value,
        sign), or None for an output that is identically zero."""
        S, red = self.S, self.red
        env: dict[int, Signed] = {}

        def arg(x: Sym | int) -> tuple[int, Signed]:
            if isinstance(x, int):  # pragma: no cover - the maps only add traced values
                raise AssertionError("a traced op with a constant operand")
            return x.id, env[x.id]

        for node in trace.nodes:
            if node.op == "in":
                env[node.id] = inputs(int(node.const or 0))
            elif node.op == "neg":
                v, s = arg(node.args[0])[1]
                env[node.id] = (v, -s)
            elif node.op == "mulc":
                v, s = arg(node.args[0])[1]
                env[node.id] = (self.multiply(v, s * int(node.const or 0)), 1)
            else:
                (ia, a), (ib, b) = arg(node.args[0]), arg(node.args[1])
                env[node.id], (va, vb) = signed_sum(S, red, a, b, node.op == "sub")
                # later readers of the operands reuse their reductions
                env[ia], env[ib] = (va, a[1]), (vb, b[1])
        return [None if isinstance(o, int) else env[o.id] for o in outputs]


def signed_sum(
    S: Builder, red: Reducer, a: Signed, b: Signed, subtract: bool
) -> tuple[Signed, tuple[Value, Value]]:
    """a + b (or a - b) of signed values as one addition or subtraction, reducing first where
    the analysis needs room. Returns the result (its sign is the operands' where they agree,
    else +1) and the operands' vectors as they were used (reduced or not)."""
    (va, sa), (vb, sb) = a, b
    if subtract:
        sb = -sb
    same = sa == sb
    va, vb = red.make_room(va, vb, need_sum=same, need_diff=not same)
    if same:
        return (S.add(va, vb), sa), (va, vb)
    if sa > 0:
        return (S.sub(va, vb), 1), (va, vb)
    return (S.sub(vb, va), 1), (va, vb)


def negate(S: Builder, red: Reducer, x: Signed) -> Value:
    """The value of a signed pair as one vector (0 - v where the sign is negative)."""
    v, s = x
    if s > 0:
        return v
    zero = S.const(0, hint="zero")
    _, v = red.make_room(zero, v, need_sum=False)
    return S.sub(zero, v, hint="neg")


class Products:
    """Full products of coefficient vectors (lane-wise polynomials), times beta^-1: Karatsuba
    halving down to ``KARATSUBA_LEAF`` coefficients, schoolbook below, with the reductions the
    interval analysis needs. Shared by the base stages of every NTRU Prime program."""

    def __init__(self, S: Builder, red: Reducer) -> None:
        self.S, self.red = S, red
        self.qinv = S.const(S.arith.qinv, hint="qinv")

    def times_qinv(self, y: list[Value]) -> list[Value]:
        """y_j * q^-1 mod beta once per coefficient: each product by y_j is then a Montgomery
        product by a precomputed pair (three multiplications instead of four)."""
        return [self.S.mullo(v, self.qinv, hint="bq") for v in y]

    def accumulate(self, acc: list[Value | None], k: int, x: Value, sub: bool = False) -> None:
        """acc[k] += x (or -= x), reducing first where the sum could overflow."""
        S, red = self.S, self.red
        prev = acc[k]
        if prev is None:
            acc[k] = negate(S, red, (x, -1)) if sub else x
            return
        u, w = red.make_room(prev, x, need_sum=not sub, need_diff=sub)
        acc[k] = S.sub(u, w, hint="acc") if sub else S.add(u, w, hint="acc")

    def product(self, x: list[Value], y: list[Value], yq: list[Value]) -> list[Value]:
        """The full product (2n - 1 coefficients, times beta^-1) of two n-coefficient
        polynomials x and y (``yq``: :meth:`times_qinv` of y): Karatsuba halving down to
        ``KARATSUBA_LEAF`` coefficients, then schoolbook."""
        S, red, accumulate = self.S, self.red, self.accumulate
        n = len(x)
        out: list[Value | None] = [None] * (2 * n - 1)
        if n <= KARATSUBA_LEAF or n % 2:
            for i in range(n):
                for j in range(n):
                    accumulate(out, i + j, S.montmul(x[i], y[j], yq[j], hint="p"))
            return out  # type: ignore[return-value]
        h = n // 2

        def halves_sum(v: list[Value]) -> list[Value]:
            res = []
            for lo, hi in zip(v[:h], v[h:], strict=True):
                lo, hi = red.make_room(lo, hi, need_diff=False)
                res.append(S.add(lo, hi, hint="ks"))
            return res

        z0 = self.product(x[:h], y[:h], yq[:h])
        z2 = self.product(x[h:], y[h:], yq[h:])
        ys = halves_sum(y)
        z1 = self.product(halves_sum(x), ys, self.times_qinv(ys))
        for k, val in enumerate(z0):
            accumulate(out, k, val)
        for k, val in enumerate(z2):
            accumulate(out, k + 2 * h, val)
        for k, val in enumerate(z1):
            accumulate(out, k + h, val)
        for k, val in enumerate(z0):
            accumulate(out, k + h, val, sub=True)
        for k, val in enumerate(z2):
            accumulate(out, k + h, val, sub=True)
        return out  # type: ignore[return-value]


def twisted_product(
    S: Builder, red: Reducer
) -> Callable[[list[Value], list[Value], tuple[Value, Value]], list[Value]]:
    """The product of pieces modulo x^n - t with per-lane t (the pair that multiplies by t):
    c_k = sum_i x_i y'_(k-i) times beta^-1, where y'_j = y_j for j >= 0 and t * y_(j+n) below
    (x^n = t), so each coefficient is one exact sum of n products in double-width lanes
    (``madd`` of two products at a time, ``addw``) and one Montgomery reduction (``mredw``):
    n^2 products but n reductions and no reduction between the additions; against
    Karatsuba's 3 multiplications per product and a reduction every few additions it needs
    about half the multiplications (x86 ``vpmaddwd`` forms 2 products per lane). Returns the
    function (x, y, t) -> the n coefficient vectors."""

    def product(x: list[Value], y: list[Value], t: tuple[Value, Value]) -> list[Value]:
        n = len(x)
        y = [red.within(v, S.arith.q) for v in y]
        ext = {j: y[j] for j in range(n)}
        for j in range(1, n):
            ext[j - n] = S.mulconst(y[j], t[0], t[1], hint="yt")
        worst = max(S.bound(v).magnitude for v in ext.values())
        x = red.for_sums(x, n, worst)
        out: list[Value] = []
        for k in range(n):
            acc: Value | None = None
            for i in range(0, n, 2):
                if i + 1 < n:
                    w = S.madd(x[i], ext[k - i], x[i + 1], ext[k - i - 1], hint="w")
                else:  # an odd n: the last product alone
                    zero = S.const(0, hint="zero")
                    w = S.madd(x[i], ext[k - i], zero, zero, hint="w")
                acc = w if acc is None else S.addw(acc, w, hint="acc")
            assert acc is not None
            out.append(S.mredw(acc, hint="c"))
        return out

    return product


def karatsuba_product(
    S: Builder, red: Reducer
) -> Callable[[list[Value], list[Value], tuple[Value, Value]], list[Value]]:
    """The product of pieces modulo x^n - t with per-lane t, as :func:`twisted_product`
    computes it, from lane arithmetic only: the full product by :class:`Products`
    (Karatsuba, Montgomery products by b's coefficients pre-multiplied by q^-1), then the
    upper half wrapped onto the lower times t."""
    prod = Products(S, red)

    def product(x: list[Value], y: list[Value], t: tuple[Value, Value]) -> list[Value]:
        full = prod.product(x, y, prod.times_qinv(y))
        n = len(x)
        res: list[Value] = []
        for k in range(n):
            if k + n >= len(full):
                res.append(full[k])
                continue
            wrapped = S.mulconst(full[k + n], t[0], t[1], hint="tw")
            u, w = red.make_room(full[k], wrapped, need_diff=False)
            res.append(S.add(u, w, hint="c"))
        return res

    return product


# --------------------------------------------------------------------------- stages
def _transpose_moves(regs: int, zip_group: int | None, elem_bits: int = 0) -> list[tuple[str, int]]:
    """The moves of a transpose of ``regs`` registers of ``regs`` elements (of 2^elem_bits
    lanes each), one per register bit: ("zip", b) interleaves elements inside groups of
    2^zip_group lanes (x86 ``vpunpck{l,h}{wd,dq}``: one instruction per output), for as many
    register bits as a group has element bits; ("shuffle", b) swaps register bit b with
    element bit b (the ``shuffle`` op) for the rest."""
    bits = regs.bit_length() - 1
    zips = max(0, min((zip_group or 0) - elem_bits, bits))
    return [("zip", b) for b in range(zips)] + [("shuffle", b) for b in range(zips, bits)]


def _run_moves(
    moves: list[tuple[str, int]],
    regs: list,
    zip_group: int | None,
    shuffle: Callable,
    zip_: Callable,
    elem_bits: int = 0,
) -> list:
    """Apply ``moves`` to the registers ``regs`` (in place, and returned) with the given
    two-register primitives, on elements of 2^elem_bits lanes."""
    for kind, bit in moves:
        d = 1 << bit
        for r in range(len(regs)):
            if r & d:
                continue
            if kind == "zip":
                regs[r], regs[r + d] = zip_(regs[r], regs[r + d], elem_bits, zip_group, 0)
            else:
                regs[r], regs[r + d] = shuffle(regs[r], regs[r + d], d << elem_bits)
    return regs


def transpose(
    S: Builder, rows: list[Value], zip_group: int | None = None, elem_bits: int = 0
) -> list[Value]:
    """The transpose of R vectors of R elements of E = 2^elem_bits lanes (R * E = L):
    out[c] element e = rows[e] element c. One move per register bit
    (:func:`_transpose_moves`): zips where the ISA has them (``zip_group``), else the
    ``shuffle`` op. A network of zips is a transpose up to a relabelling of rows and columns,
    so the rows go into registers in the order that puts row e at element e, and the
    registers come out in column order; both orders are found by running the network on lane
    tags."""
    R, L, E = len(rows), S.lanes, 1 << elem_bits
    if R * E != L:
        raise ValueError(f"a transpose of {R} rows of {E}-lane elements needs {R * E} lanes")
    moves = _transpose_moves(R, zip_group, elem_bits)
    tags = [np.arange(r * L, (r + 1) * L, dtype=np.int64) for r in range(R)]
    out_tags = _run_moves(
        moves,
        tags,
        zip_group,
        lambda a, b, d: semantics.shuffle(d, a, b),
        lambda a, b, w, g, inv: semantics.zip_lanes(w, g, inv, a, b),
        elem_bits,
    )
    # what register i holds ends at element elem_of[i]; register j ends holding column col[j]
    elem_of = {int(t[lane]) // L: lane // E for t in out_tags for lane in range(L)}
    col = [(int(t[0]) % L) // E for t in out_tags]
    for t, c in zip(out_tags, col, strict=True):
        for lane, x in enumerate(int(v) for v in t):
            if (x % L) // E != c or x % E != lane % E or elem_of[x // L] != lane // E:
                raise AssertionError("not a relabelled transpose")  # pragma: no cover
    regs = _run_moves(
        moves,
        [rows[elem_of[i]] for i in range(R)],
        zip_group,
        lambda a, b, d: S.shuffle(a, b, d, hints=("tr", "tr")),
        lambda a, b, w, g, inv: S.zip(a, b, w, g, inv, hints=("tr", "tr")),
        elem_bits,
    )
    out: list[Value] = list(regs)
    for j, c in enumerate(col):
        out[c] = regs[j]
    return out


def load_rows(
    S: Builder,
    src: Buffer,
    k0: Affine,
    stride: int,
    length: int,
    zip_group: int | None,
    red: Reducer | None = None,
) -> list[Value]:
    """Coefficients 0 .. length-1 of pieces k0 .. k0+L-1 (piece k at ``src[k*stride]``), one
    vector per coefficient (pieces in lanes): L x L tiles, transposed. With ``red``, each
    vector is reduced to within q where it could lie outside."""
    L = S.lanes
    out: list[Value] = []
    for h in range(0, length, L):
        tile = [S.load(src, k0 * stride + rr * stride + h, hint=src.name) for rr in range(L)]
        out += transpose(S, tile, zip_group) if L > 1 else tile
    if red is not None:
        q = S.arith.q
        out = [red.within(v, q) for v in out]
    return out


def columns(S: Builder, shape: GoodRaderShape, body: Callable[[Affine], None]) -> None:
    """Run ``body(c0)`` for every chunk of L coefficient positions c0 .. c0 + L - 1 of a
    block (a loop over m / L chunks)."""
    L = shape.lanes
    S.loop(shape.m // L, lambda v: body(Affine.of(v) * L), hint="col")


def program_forward(S: Builder, shape: GoodRaderShape, contract: tuple[int, int]) -> None:
    """forward(r, a): r[k*m + i] = coefficient i of a mod (x^m - t_k) up to the sign of piece
    k (the trace's, see the module docstring), for the n pieces; rows n .. rows-1 are zero."""
    p, m = shape.p, shape.m
    L = shape.lanes
    r = S.output("r", shape.rows * m, doc="pieces, row k = a mod (x^m - t_k) up to sign")
    a = S.input("a", p, contract, doc="coefficients")
    padded = S.local("a_pad", shape.blocks_in * m)
    red = Reducer(S)
    zero = S.const(0, hint="zero")
    # the last block, zero above p, then the input over it (the last chunk may overlap)
    for i in range(0, m, L):
        S.store(padded, (shape.blocks_in - 1) * m + i, zero)
    starts = list(range(0, p - L + 1, L))
    if p % L:
        starts.append(p - L)
    for s in starts:
        S.store(padded, s, S.load(a, s, hint="a"))
    for k in range(len(shape.pieces), shape.rows):
        for i in range(0, m, L):
            S.store(r, k * m + i, zero)
    trace, outs = shape.forward_trace
    lower = TraceLowering(S, red)

    def chunk(c0: Affine) -> None:
        got = lower.run(trace, lambda j: (S.load(padded, c0 + j * m, hint="a"), 1), outs)
        for k, x in enumerate(got):
            S.store(r, c0 + k * m, zero if x is None else x[0])

    columns(S, shape, chunk)


def forward_signs(shape: GoodRaderShape) -> list[int]:
    """The sign each piece of :func:`program_forward` carries (+1 or -1; +1 for zero)."""
    trace, outs = shape.forward_trace
    sign: dict[int, int] = {}
    for node in trace.nodes:
        if node.op == "neg":
            sign[node.id] = -sign[node.args[0].id]  # type: ignore[union-attr]
        elif node.op in ("in", "mulc"):
            sign[node.id] = 1
        elif node.op in ("add", "sub"):
            a, b = node.args
            sa, sb = sign[a.id], sign[b.id]  # type: ignore[union-attr]
            sb = -sb if node.op == "sub" else sb
            sign[node.id] = sa if sa == sb else 1
    return [1 if isinstance(o, int) else sign[o.id] for o in outs]


def twisted_tables(
    S: Builder, name: str, values: list[int], doc: str, repeat: int = 1, in_frame: bool = False
) -> Callable[[Affine], tuple[Value, Value]]:
    """Tables ``name`` and ``name``q of the twisted pairs of ``values`` (the multipliers and
    their quotients, each value ``repeat`` times in a row, both copied into the frame if
    ``in_frame``); returns their loader: entry k0 onwards of both, one vector each."""
    pairs = [S.arith.twisted(x) for x in values for _ in range(repeat)]
    z = S.table(name, [z for z, _ in pairs], doc=f"{doc} (multiplier)", in_frame=in_frame)
    zq = S.table(name + "q", [zq for _, zq in pairs], doc=f"{doc} (quotient)", in_frame=in_frame)
    return lambda k0: (S.load(z, k0, hint=name), S.load(zq, k0, hint=name + "q"))


def program_base(
    S: Builder,
    shape: GoodRaderShape,
    contract_a: tuple[int, int],
    contract_b: tuple[int, int],
    zip_group: int | None = None,
    products: BaseProducts = "karatsuba",
) -> None:
    """base(r, a, b): row k of r = (row k of a) * (row k of b) * beta^-1 mod (x^m - t_k), for
    every row (the padding rows have t = 0 and zero inputs). ``zip_group``: the ISA's
    interleave group in lane bits, for the transposes (None: ``shuffle`` only);
    ``products``: "wide", by :func:`twisted_product` (double-width sums); "karatsuba", by
    :func:`karatsuba_product`; "pairs", by :func:`program_base_pairs` where its shape allows
    (:func:`pairs_fit`), else as "karatsuba"."""
    if products not in BASE_PRODUCTS:
        raise ValueError(f"base products {products!r}: choose one of {', '.join(BASE_PRODUCTS)}")
    if products == "pairs" and pairs_fit(shape):
        program_base_pairs(S, shape, contract_a, contract_b, zip_group)
        return
    m, L, rows = shape.m, shape.lanes, shape.rows
    r = S.output("r", rows * m, doc="piecewise products (times beta^-1)")
    a = S.input("a", rows * m, contract_a, doc="pieces")
    b = S.input("b", rows * m, contract_b, doc="pieces")
    red = Reducer(S)
    q = S.arith.q

    if shape.split_roots is None:
        piece_t = twisted_tables(
            S, "t", shape.points + [0] * (rows - len(shape.points)), "t_k of x^m - t_k, per piece"
        )

    def load_piece(src: Buffer, k0: Affine) -> list[Value]:
        """Coefficient i of pieces k0 .. k0+L-1, for i < m, within q."""
        return load_rows(S, src, k0, m, m, zip_group, red)

    product = twisted_product(S, red) if products == "wide" else karatsuba_product(S, red)

    roots = shape.split_roots
    if roots is not None:
        pad = [0] * (rows - len(roots))
        half = m // 2
        root = twisted_tables(
            S, "s", roots + pad, f"s_k, s_k^2 = t_k: x^{m} - t_k = (x^{half} - s_k)(x^{half} + s_k)"
        )
        root_inv = twisted_tables(S, "si", [pow(x, -1, q) for x in roots] + pad, "1 / s_k")
        # the wrap constants of the two halves of group g: s_k (x^h = s_k), then -s_k
        signed = [
            u * sign
            for g in range(0, rows, L)
            for sign in (1, -1)
            for u in (roots + pad)[g : g + L]
        ]
        half_root = twisted_tables(S, "sw", signed, "s_k, then -s_k, for each group of pieces")

    def split(v: list[Value], s: tuple[Value, Value]) -> tuple[list[Value], list[Value]]:
        """v mod (x^h - s) and v mod (x^h + s), h = len(v) / 2: lo + s*hi and lo - s*hi."""
        h = len(v) // 2
        plus, minus = [], []
        for lo, hi in zip(v[:h], v[h:], strict=True):
            lo, t = red.make_room(lo, S.mulconst(hi, s[0], s[1], hint="sh"))
            plus.append(S.add(lo, t, hint="sp"))
            minus.append(S.sub(lo, t, hint="sm"))
        return plus, minus

    def store_rows(k0: Affine, res: list[Value]) -> None:
        """Coefficient vectors of pieces k0 .. k0+L-1 back to rows."""
        for h in range(0, m, L):
            tile = res[h : h + L]
            back = transpose(S, tile, zip_group) if L > 1 else tile
            for rr, val in enumerate(back):
                S.store(r, k0 * m + rr * m + h, val)

    groups = rows // L
    if roots is None:

        def group(v: LoopVar) -> None:
            k0 = Affine.of(v) * L
            x, y = load_piece(a, k0), load_piece(b, k0)
            t = piece_t(k0)
            store_rows(k0, product(x, y, t))

        # a loop, not unrolled: the body is some 2,500 instructions on AVX2, and the 7 copies
        # overflowed the instruction cache (sntrup761 polymul 8,832 unrolled, 7,943 looped)
        S.loop(groups, group, hint="grp", unroll=False)
        return

    # Cooley–Tukey, in three loops that pass the halves through memory: split each group's
    # pieces, multiply the 2 * groups halves in one loop, then 2c = (c+ + c-) + x^h (c+ - c-)/s.
    # With both halves' products inline, their values spilled (AVX-512, sntrup761: the base
    # took 3,400 of 6,500 ticks).
    half = m // 2
    xs, ys, cs = (S.local(name, rows * m) for name in ("xs", "ys", "cs"))

    def split_group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        s = root(k0)
        for src, dst in ((a, xs), (b, ys)):
            plus, minus = split(load_piece(src, k0), s)
            for i, val in enumerate(plus + minus):
                S.store(dst, k0 * m + i * L, val)

    def half_product(v: LoopVar) -> None:
        at = Affine.of(v) * (half * L)
        xh = [S.load(xs, at + i * L, hint="x") for i in range(half)]
        yh = [S.load(ys, at + i * L, hint="y") for i in range(half)]
        t = half_root(Affine.of(v) * L)
        for i, val in enumerate(product(xh, yh, t)):
            S.store(cs, at + i * L, val)

    def join_group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        si = root_inv(k0)
        lo, hi = [], []
        for i in range(half):
            u = S.load(cs, k0 * m + i * L, hint="cp")
            w = S.load(cs, k0 * m + (half + i) * L, hint="cm")
            u, w = red.make_room(u, w)
            lo.append(S.add(u, w, hint="c"))
            hi.append(S.mulconst(S.sub(u, w, hint="d"), si[0], si[1], hint="c"))
        store_rows(k0, lo + hi)

    S.loop(groups, split_group, hint="grp", unroll=False)
    S.loop(2 * groups, half_product, hint="half", unroll=False)
    S.loop(groups, join_group, hint="grp", unroll=False)


def pairs_fit(shape: GoodRaderShape) -> bool:
    """Whether :func:`program_base_pairs` applies: a piece fills one register (m = L, even)
    and the pieces are not split."""
    return shape.m == shape.lanes and shape.m % 2 == 0 and shape.split_roots is None


def program_base_pairs(
    S: Builder,
    shape: GoodRaderShape,
    contract_a: tuple[int, int],
    contract_b: tuple[int, int],
    zip_group: int | None = None,
) -> None:
    """:func:`program_base` with the coefficients of each piece kept in pairs: lanes 2i and
    2i+1 of a vector hold coefficients 2j and 2j+1 of piece i, so a vector holds one pair of
    each of L/2 pieces, and the L/2 rows of a group turn into that form by a transpose of
    2-lane elements (one fewer interleave step than lanes of one coefficient).

    With x^m = t and y'_j = y_j (j >= 0), t*y_(j+m) (j < 0), coefficient k of the product is
    sum_u x_2u y'_(k-2u) + x_(2u+1) y'_(k-2u-1): for k = 2s a pair sum of x's pair u with
    (y'_2(s-u), y'_2(s-u)-1), one blend of y's pairs s-u and s-u-1; for k = 2s+1 with
    (y'_2(s-u)+1, y'_2(s-u)), y's pair s-u swapped. So each coefficient is m/2 pair sums,
    added exactly in double-width lanes and reduced once, and the m/2 pair-layout vectors of
    the results transpose back to rows. Needs m = L (a row is one vector) and an even m."""
    m, L, rows = shape.m, shape.lanes, shape.rows
    if not pairs_fit(shape):
        raise ValueError(
            f"pair sums need one piece per register and unsplit pieces (m = {m}, L = {L})"
        )
    half = m // 2  # pairs per piece, and pieces per vector
    r = S.output("r", rows * m, doc="piecewise products (times beta^-1)")
    a = S.input("a", rows * m, contract_a, doc="pieces")
    b = S.input("b", rows * m, contract_b, doc="pieces")
    red = Reducer(S)
    q = S.arith.q
    # t_k in both lanes of piece k's pair: a vector of the group's half pieces. The tables are
    # read from a copy in the frame: read from static data, between the loop's many stack
    # stores, they made this stage 1.0-1.6x slower depending on where the caller's stack lay
    # (likely 4K aliasing, by the 4 KiB period; no counter here confirms it. AVX2, Zen 3:
    # 1,652-2,701 ticks over 8 KiB of placements, 1,534-1,552 with the copy; docs/design.md).
    pad = shape.points + [0] * (rows - len(shape.points))
    t_of = twisted_tables(S, "t", pad, "t_k of x^m - t_k, twice per piece", repeat=2, in_frame=True)

    def pairs_of(src: Buffer, k0: Affine) -> list[Value]:
        """Vector u: coefficients 2u, 2u+1 of pieces k0 .. k0 + L/2 - 1."""
        tile = [S.load(src, (k0 + i) * m, hint=src.name) for i in range(half)]
        return transpose(S, tile, zip_group, elem_bits=1)

    def group(v: LoopVar) -> None:
        k0 = Affine.of(v) * half
        y = [red.within(w, q) for w in pairs_of(b, k0)]
        t = t_of(k0 * 2)
        wrapped = [S.mulconst(w, t[0], t[1], hint="yt") for w in y]

        def ext(j: int) -> Value:
            """y's pair j (pairs -half .. -1 wrapped: times t)."""
            return y[j] if j >= 0 else wrapped[j + half]

        even = {j: S.pair_blend(ext(j), ext(j - 1), hint="ye") for j in range(1 - half, half)}
        odd = {j: S.pair_swap(ext(j), hint="yo") for j in range(1 - half, half)}
        worst = max(S.bound(w).magnitude for w in (*even.values(), *odd.values()))
        x = red.for_sums(pairs_of(a, k0), m, worst)
        sums: list[Value] = []
        for k in range(m):
            s, other = divmod(k, 2)
            acc: Value | None = None
            for u in range(half):
                w = S.pair_madd(x[u], (odd if other else even)[s - u], hint="w")
                acc = w if acc is None else S.pair_add(acc, w, hint="acc")
            assert acc is not None
            sums.append(acc)
        res = [S.pair_mred(sums[2 * j], sums[2 * j + 1], hint="c") for j in range(half)]
        for i, row in enumerate(transpose(S, res, zip_group, elem_bits=1)):
            S.store(r, (k0 + i) * m, row)

    # a loop, not unrolled, as in program_base
    S.loop(rows // half, group, hint="grp", unroll=False)


def program_inverse(
    S: Builder,
    shape: GoodRaderShape,
    contract: tuple[int, int],
    signs: Sequence[int],
    threshold: int | None = None,
    out_bound: int | None = None,
) -> None:
    """inverse(r, c): r = n * c mod the ring's modulus (:attr:`GoodRaderShape.modulus`) for
    the blocks the fold reads, where row k of c is piece k (:attr:`GoodRaderShape.pieces`)
    times ``signs[k]``; ``threshold``: the reducer's (None: the lazy policy alone);
    ``out_bound``: every output within [-out_bound, out_bound] (reduced where its range is
    wider; None: whatever range the lazy policy leaves)."""
    m = shape.m
    r = S.output("r", shape.blocks_out * m, doc="n times the product, low blocks")
    c = S.input("c", shape.rows * m, contract, doc="piecewise products")
    red = Reducer(S, threshold)
    trace, outs = shape.inverse_trace
    lower = TraceLowering(S, red)

    def chunk(c0: Affine) -> None:
        got = lower.run(trace, lambda k: (S.load(c, c0 + k * m, hint="c"), signs[k]), outs)
        for j, x in enumerate(got):
            if x is None:
                val = S.const(0, hint="zero")
            else:
                val = negate(S, red, x)
                if out_bound is not None:
                    val = red.fit_to(val, (-out_bound, out_bound))
            S.store(r, c0 + j * m, val)

    columns(S, shape, chunk)


def centre(S: Builder, x: Value) -> Value:
    """The representative of x (in [-q, q)) in [-(q-1)/2, (q-1)/2]: x + q where negative
    gives [0, q); minus (q+1)/2, + q where negative, minus (q-1)/2 maps [0, (q-1)/2] to
    itself and [(q+1)/2, q) to [-(q-1)/2, 0)."""
    q = S.arith.q
    s = S.cond_add_q(x, hint="r")
    s = S.sub(s, S.const((q + 1) // 2, hint="h1"), hint="r")
    s = S.cond_add_q(s, hint="r")
    return S.sub(s, S.const((q - 1) // 2, hint="h0"), hint="r")


def program_fold(
    S: Builder, shape: FoldShape, contract: tuple[int, int], as_loop: bool = False
) -> None:
    """fold(r, c): r = K * c mod (x^p - x - 1), centred, for c of degree < 2p (2p entries
    read), K = beta / ``shape.fold_scale`` mod q. ``as_loop``: the whole vectors after the
    first in a loop even where the builder unrolls loops by default (less code)."""
    p, q, L = shape.p, shape.q, shape.lanes
    r = S.output("r", p, doc="product, centred")
    c = S.input("c", shape.product_length, contract, doc="scaled product")
    red = Reducer(S)
    k_const = S.arith.beta * pow(shape.fold_scale, -1, q) % q
    kz, kzq = S.arith.twisted(k_const)
    kpair = (S.const(kz, hint="k"), S.const(kzq, hint="kq"))

    def total(at: Affine | int, masked: bool) -> Value:
        x, y = red.make_room(S.load(c, at, hint="c"), S.load(c, at + p, hint="c"), need_diff=False)
        s = S.add(x, y, hint="s")
        if not masked:
            z = S.load(c, at + (p - 1), hint="c")
            u, w = red.make_room(s, z, need_diff=False)
            return S.mulconst(S.add(u, w, hint="s"), *kpair, hint="k")
        out = S.mulconst(s, *kpair, hint="k")
        if L == 1:
            return out  # r_0 has no c_(p-1) term
        # lanes 1 .. L-1 take c_(j+p-1) times K, lane 0 times 0
        pairs = [S.arith.twisted(0)] + [S.arith.twisted(k_const)] * (L - 1)
        mz = S.table("mask", [z for z, _ in pairs], doc="K, but 0 in lane 0 (r_0 has no c_(p-1))")
        mzq = S.table("maskq", [zq for _, zq in pairs], doc="quotients of mask")
        third = S.mulconst(
            S.load(c, p - 1, hint="c"), S.load(mz, 0, hint="m"), S.load(mzq, 0, hint="mq")
        )
        u, w = red.make_room(out, third, need_diff=False)
        return S.add(u, w, hint="s")

    def finish(at: Affine | int, val: Value) -> None:
        val = red.fit_to(val, (-q, q - 1))
        S.store(r, at, centre(S, val))

    if L == 1:
        # r_0 in a loop of one iteration, so that strip-mined code (which vectorises loops,
        # not straight-line code) has a loop to run it in
        S.loop(1, lambda v: finish(Affine.of(v), total(Affine.of(v), True)), hint="j0")
    else:
        finish(0, total(0, True))
    count = (p - L) // L  # whole chunks after the first
    S.loop(count, lambda v: finish(Affine.of(v) * L + L, total(Affine.of(v) * L + L, False)),
           hint="j", unroll=False if as_loop else None)  # fmt: skip
    if p % L:
        finish(p - L, total(p - L, False))


# --------------------------------------------------------------------------- functions
@dataclass
class NtruFunctions:
    """The functions of one NTRU Prime ring at one lane count, entry points last."""

    shape: GoodRaderShape
    functions: dict[str, Function]


def build_good_rader(
    p: int,
    q: int,
    arith: Arith,
    lanes: int,
    zip_group: int | None = None,
    config: NtruConfig | None = None,
) -> NtruFunctions:
    """Build ``polymul`` (a, b in [-(q-1)/2, (q-1)/2]) and ``polymul_small`` (s in [-1, 1])
    with their internal stages, for the Good–Rader pipeline at ``lanes`` lanes, with the
    program variants of ``config`` (:class:`~.ntru_config.NtruConfig`; None: its defaults;
    ``zip_group``: see :func:`program_base`)."""
    c = config or NtruConfig()
    shape = good_rader_shape(p, q, lanes, c.paired_leaves, c.cyclotomic)
    half = (q - 1) // 2
    m, rows = shape.m, shape.rows
    f: dict[str, Function] = {}
    # imported here: ntru_lines builds on this module's lowering
    from .ntru_lines import program_forward_lines, program_inverse_lines
    from .ntru_ternary import program_forward_rotated, program_forward_ternary

    t = c.inverse_threshold
    line_thresholds = c.line_thresholds or LineThresholds(inverse=(t, t, t))

    def builder(name: str, doc: str) -> Builder:
        S = Builder(name, arith, lanes, doc)
        S.unroll_default = lanes > 1
        S.coarse_reductions = c.coarse_reductions
        return S

    def stage(S: Builder, require: dict[str, tuple[int, int]] | None = None) -> Function:
        """Finish an internal stage: called only by the entry points, with distinct buffers
        (its parameters are ``restrict``)."""
        fn = S.finish(require=require)
        fn.internal = True
        fn.distinct_buffers = True
        return fn

    # the small operand's transform: a DFT of its own, or the shared one
    small_name = "forward_small" if c.small_forward else "forward"
    contracts = {"forward": (-half, half), "forward_small": (-1, 1)}
    for name in dict.fromkeys(("forward", small_name)):
        contract = contracts[name]
        S = builder(name, f"Good–Thomas/Rader DFT over blocks of {m}, inputs in {contract}")
        if c.ternary_forward and name == "forward_small":
            program_forward_ternary(S, shape, contract, line_thresholds.forward)
        elif c.dft_lines and c.rotated_forward:
            program_forward_rotated(S, shape, contract, line_thresholds.forward)
        elif c.dft_lines:
            program_forward_lines(S, shape, contract, line_thresholds.forward)
        else:
            program_forward(S, shape, contract)
        f[name] = stage(S)
    big = f["forward"].contract.outputs["r"]
    small = f[small_name].contract.outputs["r"]
    S = builder("base", f"products modulo x^{m} - t_k, pieces in lanes")
    b_range = (min(big[0], small[0]), max(big[1], small[1]))
    program_base(S, shape, big, b_range, zip_group, c.base_products)
    f["base"] = stage(S)
    S = builder("inverse", "unnormalised inverse DFT over blocks")
    base_out = f["base"].contract.outputs["r"]
    # The fold adds three of the inverse's outputs before its product by K: within a third
    # of the lane, the sum needs no reduction. The inverse's last subtraction (Phi_r) leaves
    # most outputs wider, and reducing each there once takes fewer reductions than the fold
    # would (it reads the upper half twice). Measured (sntrup761, AVX2, stage harness): fold
    # 343 -> 170 ticks, inverse 1,440 -> 1,499, polymul 6,931 -> 6,736.
    out_bound = arith.lane.max // 3 if c.narrow_inverse else None
    if c.dft_lines:
        program_inverse_lines(
            S, shape, base_out, line_thresholds.inverse, out_bound, c.indexed_outputs
        )
    else:
        program_inverse(
            S, shape, base_out, forward_signs(shape), c.inverse_threshold, out_bound=out_bound
        )
    f["inverse"] = stage(S)
    S = builder("fold", f"fold modulo x^{p} - x - 1, scale and centre")
    # as a loop where the DFTs are (the same measurement: less code, decoded once; AVX2,
    # clang-19, Zen 3: 46 unrolled copies took 3.9 KiB against 0.4, polymul 4,808 -> 4,770
    # ticks as a loop and polymul_small 4,906 -> 4,797; NEON, under QEMU, 41,695 -> 42,086
    # guest instructions, so it keeps the copies)
    program_fold(S, shape, f["inverse"].contract.outputs["r"], as_loop=c.dft_lines)
    f["fold"] = stage(S, require={"r": (-half, half)})

    for name, fwd_b, b_range in (
        ("polymul", "forward", (-half, half)),
        ("polymul_small", small_name, (-1, 1)),
    ):
        S = builder(name, f"r = a*b mod (q, x^{p} - x - 1), centred")
        r = S.output("r", p, doc=f"product, centred in [{-half}, {half}]")
        a = S.input("a", p, (-half, half), doc="coefficients")
        b = S.input("b", p, b_range, doc="coefficients" if b_range[1] > 1 else "small")
        ta, tb = S.local("a_hat", rows * m), S.local("b_hat", rows * m)
        tc = S.local("c_hat", rows * m)
        prod = S.local("c", shape.blocks_out * m)
        S.call(f["forward"], r=ta, a=a)
        S.call(f[fwd_b], r=tb, a=b)
        S.call(f["base"], r=tc, a=ta, b=tb)
        S.call(f["inverse"], r=prod, c=tc)
        S.call(f["fold"], r=r, c=prod)
        f[name] = S.finish(require={"r": (-half, half)})
    return NtruFunctions(shape, f)
