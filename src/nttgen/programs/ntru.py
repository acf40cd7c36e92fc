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

Stages of ``polymul(r, a, b)`` (in this order; the modules are listed below):

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

The pipeline's modules, each one job, this one last (it assembles the functions, and its
names include theirs): :mod:`.ntru_config` (the program variants), :mod:`.ntru_shape` (the
sizes and the traced maps), :mod:`.ntru_lowering` (traces onto the builder, signs, constants),
:mod:`.ntru_dft` (``forward`` and ``inverse`` as straight-line traces), :mod:`.ntru_lines` and
:mod:`.ntru_ternary` (the same as loops over lines), :mod:`.ntru_transpose` and
:mod:`.ntru_base` (``base``), :mod:`.ntru_fold` (``fold``).
"""

from __future__ import annotations

from ..dsl.builder import Builder
from ..dsl.ir import Function
from ..plan.constants import Arith
from .ntru_base import (
    KARATSUBA_LEAF,
    Products,
    karatsuba_product,
    packs_last_group,
    pairs_fit,
    program_base,
    program_base_pairs,
    twisted_product,
)
from .ntru_config import LineThresholds, NtruConfig
from .ntru_dft import forward_signs, program_forward, program_inverse
from .ntru_fold import FoldShape, centre, program_fold
from .ntru_lines import program_forward_lines, program_inverse_lines
from .ntru_lowering import Signed, TraceLowering, negate, signed_sum, twisted_tables
from .ntru_shape import GoodRaderShape, NtruFunctions, columns, good_rader_shape
from .ntru_ternary import program_forward_rotated, program_forward_ternary
from .ntru_transpose import load_rows, transpose

__all__ = [
    "KARATSUBA_LEAF",
    "FoldShape",
    "GoodRaderShape",
    "NtruFunctions",
    "Products",
    "Signed",
    "TraceLowering",
    "build_good_rader",
    "centre",
    "columns",
    "forward_signs",
    "good_rader_shape",
    "karatsuba_product",
    "load_rows",
    "negate",
    "packs_last_group",
    "pairs_fit",
    "program_base",
    "program_base_pairs",
    "program_fold",
    "program_forward",
    "program_inverse",
    "signed_sum",
    "transpose",
    "twisted_product",
    "twisted_tables",
]


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
    program_base(S, shape, big, b_range, zip_group, c.base_products, c.looped_products)
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
    return NtruFunctions(shape, f, c.gcc_options)
