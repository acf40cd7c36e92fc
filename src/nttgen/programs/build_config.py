"""The build configuration of one x^n + 1 kernel set: its lane count, pass plan, loop and
schedule choices (what :mod:`nttgen.tuning` records per preset and ISA)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl.schedule import Schedule
from ..plan.constants import ConstMul
from ..plan.layout import MoveCosts
from ..plan.ntt import Network

GCC_SCHED_PRESSURE = ("schedule-insns", "sched-pressure")
"""gcc's instruction scheduling before register allocation, weighing register pressure
(``-fschedule-insns -fsched-pressure``; x86 builds run neither by default)."""

GCC_NO_PREDICTIVE_COMMONING = ("no-predictive-commoning",)
"""gcc without predictive commoning (``-fno-predictive-commoning``; on at -O3): the values a
loop trip loads and a later trip loads again are kept in registers and copied from one to the
next, which spills where the loop already holds many."""


@dataclass(frozen=True)
class BuildConfig:
    """ISA-independent build parameters: the lane count and the transform's pass plan.

    ``merge`` lists how many consecutive layers each pass runs (default: one per pass);
    ``extra_slots`` the registers each pass adds for instruction-level parallelism;
    ``unroll`` asks emitters to unroll the transforms' loops over chunks, ``unroll_products``
    those of the base multiplications (basemul, basemul_acc); the conversions (reduce, tomont,
    frommont, to_standard, from_standard) are always loops, which compilers unroll as far as it pays
    (see :func:`nttgen.generate.heuristic_config`); ``shared_forward`` makes the in-place ``ntt`` a
    call of polymul's out-of-place forward transform (one transform body in the file instead of
    two); ``products_outer`` picks the loop order of basemul_acc (see
    :func:`nttgen.programs.pointwise.program_basemul_acc`); ``intt_networks`` the inverse networks
    the inverse NTT may be built with; ``shuffles`` names the emitter's shuffle style where an ISA
    offers several (see its module), else ``"default"``; ``const_mul`` how products by constants are
    formed (``"montgomery"``, ``"shoup"`` or ``"shoup2"``, see :mod:`nttgen.plan.constants`);
    ``move_costs`` what the ISA pays for each way of moving lane bits into register slots (None:
    swaps only; see :class:`nttgen.plan.layout.MoveCosts`); ``gathers`` moves lane bits into slots
    as chunks are loaded (indexed loads, :class:`nttgen.plan.layout.PassPlan`) instead of in
    registers; ``fuse_polymul`` lets polymul run the second forward NTT, the base multiplication and
    the inverse NTT as one function where the last pass holds the whole polynomial (see
    :mod:`nttgen.programs.fused`), and ``fuse_forwards`` moves the first forward NTT into that
    function too, so that the two transforms' dependency chains overlap; ``schedule`` the statement
    order of every function (``"critical_path"``: each straight-line run list-scheduled, see
    :mod:`nttgen.dsl.schedule`; ``"recorded"``: the order the programs record) and ``live_limit``
    the number of live vectors above which the schedule stops starting new values (None: no limit);
    ``twist_products`` lets the cached inner product of a complete NTT read b's twist from the cache
    (see :mod:`nttgen.programs.inner_product`); ``product_chunks`` is how many chunks of base
    multiplication one step of the inner products sums at once (their loops over the k products
    shared); ``wide_sums`` whether the ISA holds the exact double-width sums the inner products
    prefer (else lane sums); ``gcc_options`` are optimisation options the file asks gcc for
    (:data:`GCC_SCHED_PRESSURE`, :data:`GCC_NO_PREDICTIVE_COMMONING`; see
    :func:`nttgen.emit.c_macros.gcc_options`; other compilers ignore them); ``coarse_reductions``
    lets the generator build each transform and product also with the lazy policy's coarse
    reductions (``barrett_coarse``: 16-bit lanes, and 32-bit lanes with q near a power of two)
    and keep the cheaper of the two (see
    :mod:`nttgen.programs.reduction_choice`); ``paired_transforms`` makes the transforms of k
    polynomials (``ntt_vec``, ``intt_vec``) run two polynomials per call of a paired body
    (:meth:`nttgen.programs.kernels.KernelSet._vector`) instead of one per call."""

    lanes: int = 1
    merge: tuple[int, ...] | None = None
    extra_slots: tuple[int, ...] | None = None
    unroll: bool = False
    unroll_products: bool = False
    shared_forward: bool = True
    products_outer: bool = True
    class_slots: int = 0
    park_bits: tuple[int, ...] = ()
    intt_networks: tuple[Network, ...] = ("gs", "dit")
    shuffles: str = "default"
    const_mul: ConstMul = "montgomery"
    move_costs: MoveCosts | None = None
    gathers: bool = False
    fuse_polymul: bool = True
    fuse_forwards: bool = False
    schedule: Schedule = "recorded"
    live_limit: int | None = None
    twist_products: bool = False
    product_chunks: int = 1
    wide_sums: bool = True
    gcc_options: tuple[str, ...] = ()
    coarse_reductions: bool = False
    paired_transforms: bool = False
