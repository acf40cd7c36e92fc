"""Generation of the x^n + 1 family: ring + ISA -> build configuration -> kernel set -> generated
files (the family-wide entry points are :mod:`nttgen.families` and :mod:`nttgen.outputs`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import TypeVar

from .build import cache_dir
from .build_cache import GENERATION_CACHE, stored
from .dsl.ir import Call, Function, walk
from .emit.files import FileWriter, GeneratedFiles
from .emit.isa import isa_class
from .emit.names import Names, default_names
from .errors import IsaUnavailableError
from .plan.constants import Arith
from .plan.layout import simd_plan
from .programs.build_config import BuildConfig
from .programs.entry_points import OP_INFO
from .programs.kernels import KernelSet, RingContract, build_kernels
from .rings import PRESETS, Ring
from .tuning import ISA_DEFAULTS, PRODUCT_GROUPS, TUNED


def default_config(ring: Ring, isa: str) -> BuildConfig:
    """The build configuration an ISA uses for a ring: :func:`heuristic_config` with the
    measured choices recorded in :mod:`nttgen.tuning` for a preset of the same shape (n, NTT
    depth, lane width: the pass plan depends on nothing else), or for a ring of no preset's
    shape the ISA's measured defaults there. Rings with more than :data:`UNROLL_MAX_N`
    coefficients keep their loops."""
    base = heuristic_config(ring, isa)
    shape = _same_shape_preset(ring)
    tuned = TUNED.get((shape, isa)) if shape else ISA_DEFAULTS.get(isa)
    config = replace(base, **tuned) if tuned else base
    if ring.n > UNROLL_MAX_N:
        config = replace(config, unroll=False, unroll_products=False)
    if config.move_costs is not None and config.shuffles != base.shuffles:
        # the moves an ISA offers, and their costs, depend on its shuffle style
        config = replace(config, move_costs=isa_class(isa).move_costs(ring.lane, config.shuffles))
    if config.shuffles == "indexed":
        config = replace(config, gathers=True)
        if not (tuned and "merge" in tuned):
            cls = isa_class(isa)
            lane_bits = config.lanes.bit_length() - 1
            merge, extra = simd_plan(
                ring.log_n, ring.depth, lane_bits, cls.registers, len(config.park_bits)
            )
            config = replace(config, merge=merge, extra_slots=extra)
    return config


UNROLL_MAX_N = 1024
"""The largest n whose kernels may be straight-line code. Above it every ISA keeps the
transforms' loops over chunks and the base multiplications' loops, whatever the tuning says:
unrolled, n = 4096 on AVX2 made an 8.6 MB C file that clang-19 -O3 had not compiled after an
hour; as loops it is about 5,000 lines (mostly the twiddle table) and compiles in 1-3 s with
gcc 12 or clang-19, at either lane width, on AVX2 or AVX-512."""


def _same_shape_preset(ring: Ring) -> str | None:
    """The name of the first preset with the ring's n, NTT depth and lane width, if any."""
    if ring.preset:
        return ring.name
    for p in PRESETS.values():
        if (p.n, p.depth, p.lane.bits) == (ring.n, ring.depth, ring.lane.bits):
            return p.name
    return None


# Registers the statement schedule leaves free of live data vectors (for constants, twiddles
# and the compiler's temporaries). Measured on AVX2 (16 registers), one harness: limits of
# 8 to 12 live vectors gave the same times, 16 and more lost part of the gain (ML-KEM polymul
# 379.6 recorded order, 351.5 at 12, 356 at 16, 388 without a limit; see nttgen.dsl.schedule).
LIVE_MARGIN = 4


def heuristic_config(ring: Ring, isa: str) -> BuildConfig:
    """The build configuration derived from the ISA's shape alone: scalar loops for portable
    C (compilers vectorise them), and for SIMD ISAs fully unrolled register-blocked passes
    (:func:`nttgen.plan.layout.simd_plan`) and base multiplications, sums accumulated in
    registers, and the two coefficients of each degree-2 factor left in different registers.
    (The conversions are loops on every ISA; the presets' measured choices in
    :mod:`nttgen.tuning` keep most transforms as loops too.)

    The inverse NTT may use the ``dit`` network only with 16-bit SIMD lanes. Measured on the
    development machine: with 16-bit lanes it wins by 10-20 % (its twist costs one Montgomery
    product per coefficient, but it needs fewer reductions and skips its first layer's
    multiplications); with 32-bit lanes a Montgomery product by a lane-varying vector costs two
    more shuffles than by a broadcast, which eats the gain (ML-DSA: 460 vs 425 ticks); in
    portable C compilers vectorise the ``gs`` loops (consecutive positions share a twiddle)
    but not the ``dit`` ones (ML-KEM: 1,174 vs 827 ticks).

    SIMD ISAs may reduce coarsely (``coarse_reductions``) with 16-bit lanes, and with 32-bit
    lanes where q lies near a power of two (ML-DSA's): each function is built both ways and
    the cheaper kept (docs/reductions.md); the portable C, which publishes the ring's
    contract, keeps Barrett's exact reductions."""
    cls = isa_class(isa)
    why = cls.unsupported(ring.n, ring.lane)
    if why:
        raise IsaUnavailableError(why)
    lanes = cls.lanes_for(ring.lane)
    if cls.strip_mined:
        merge = strip_merge(ring.depth, ring.log_n, cls.registers)
        # its own in-place forward body: shared with polymul's, the strip-mined ntt executed
        # 3-6 % more instructions (QEMU, ML-KEM at VLEN 128: 1,081 -> 1,144)
        return BuildConfig(lanes=1, merge=merge, intt_networks=("gs",), shared_forward=False)
    if lanes == 1:
        # Compilers vectorise the portable C's loops themselves, and the shared forward body
        # gives the in-place call two pointers to one array: the vectorised loop's run-time
        # overlap check then sends it to the scalar one (measured: ML-KEM ntt 894 -> 1,384
        # ticks), so portable C keeps an in-place body of its own.
        return BuildConfig(lanes=1, intt_networks=("gs",), shared_forward=False)
    lane_bits = lanes.bit_length() - 1
    merge, extra = simd_plan(ring.log_n, ring.depth, lane_bits, cls.registers)
    return BuildConfig(
        lanes=lanes,
        merge=merge,
        extra_slots=extra,
        unroll=True,
        unroll_products=True,
        products_outer=False,
        park_bits=(0,) if ring.base_degree == 2 else (),
        intt_networks=("gs", "dit") if ring.lane.bits == 16 else ("gs",),
        const_mul=cls.const_mul_for(ring.lane, ring.q),
        move_costs=cls.move_costs(ring.lane, "default"),
        schedule=cls.schedule,
        live_limit=cls.registers - LIVE_MARGIN,
        twist_products=cls.twist_products,
        product_chunks=cls.chunks_for(ring.base_degree, ring.lane),
        wide_sums=cls.has_wide_values(ring.lane),
        coarse_reductions=Arith(ring.q, ring.lane).coarse_usable,
    )


def strip_merge(depth: int, log_n: int, registers: int) -> tuple[int, ...]:
    """Layers per pass for strip-mined code (one-lane program, every value a register group):
    as few passes as keep a chunk in half the registers (2^4 values of 32), the larger first,
    leaving loops of at least 8 iterations to strip-mine (small rings: fewer layers per pass).
    Measured under QEMU at VLEN 128 (instructions per NTT, ML-KEM / ML-DSA): one layer per pass
    1,983 / 4,556, (4, 3) / (4, 4) 1,077 / 2,462; the ``gs`` inverse beats ``dit`` there."""
    most = max(1, min(registers.bit_length() - 2, log_n - 3))
    passes = -(-depth // most)
    base, extra = divmod(depth, passes)
    return tuple(base + (1 if i < extra else 0) for i in range(passes))


def canonical_command(ring: Ring, isa: str) -> str:
    """The command line that regenerates a ring's files for an ISA (output location aside)."""
    if ring.preset:
        what = f"--ring {ring.name}"
    else:
        what = f"--n {ring.n} --q {ring.q}"
        if ring.lane.bits == 32 and ring.q < 1 << 15:
            what += " --lane-bits 32"
    return f"nttgen generate {what} --isa {isa}"


T = TypeVar("T")


def _stored(what: str, ring: Ring, isa: str, make: Callable[[], T], *more: object) -> T:
    """``make()``, shared through the build cache where storing is on (the test suite)."""
    return stored(cache_dir() / "generated", what, (ring, isa, *more), make)


@lru_cache(maxsize=GENERATION_CACHE)
def kernel_set(ring: Ring, isa: str) -> KernelSet:
    """The (cached) kernel set of a ring built with an ISA's default configuration. The
    portable C's publishes the ring's contract and every other ISA's meets it
    (:class:`~nttgen.programs.kernels.RingContract`), so that every ISA of the ring accepts
    and leaves the same ranges."""
    if isa == "c":
        return _stored("kernel_set", ring, isa, lambda: build_kernel_set(ring, isa))
    contract = kernel_set(ring, "c").published
    return _stored("kernel_set", ring, isa, lambda: build_kernel_set(ring, isa, contract))


def build_kernel_set(ring: Ring, isa: str, contract: RingContract | None = None) -> KernelSet:
    """The kernel set of ``ring`` on ``isa`` built afresh (:func:`kernel_set` caches it): the
    portable C's publishes the ring's contract; any other ISA's meets ``contract`` (the
    portable C's published one) and may run its products on another backend's register
    groups (:func:`_with_guest_products`)."""
    config = default_config(ring, isa)
    if isa == "c":
        return build_kernels(ring, config, reference=True)
    return _with_guest_products(ring, isa, build_kernels(ring, config, contract))


GUEST_PRODUCTS = ("basemul", "basemul_acc", "basemul_cache", "basemul_acc_cached")
"""The entry points of a complete NTT that :data:`nttgen.tuning.PRODUCT_GROUPS` may build for
another backend: element-wise products, the same in every memory order."""


def _with_guest_products(ring: Ring, isa: str, ks: KernelSet) -> KernelSet:
    """``ks`` with the base multiplications of a complete NTT built for the backend
    :data:`~nttgen.tuning.PRODUCT_GROUPS` names for ``isa`` (where it holds the ring), which
    then emits them into ``isa``'s file. They meet the same ring contract as every other
    ISA's, so the set's transforms feed them and take their results as before. A function of
    the set that calls one of them (a polymul that is not fused) keeps calling its own, which
    stays in the file as a static helper (``<name>_inner``)."""
    guest = PRODUCT_GROUPS.get(isa)
    if guest is None or ring.base_degree != 1 or isa_class(guest[0]).unsupported(ring.n, ring.lane):
        return ks
    other, changes = guest
    config = replace(default_config(ring, other), **changes)
    products = build_kernels(ring, config, ks.contract)
    callees = {
        s.callee.name for f in ks.functions.values() for s in walk(f.body) if isinstance(s, Call)
    }
    functions: dict[str, Function] = {}
    for name, fn in ks.functions.items():
        if name in GUEST_PRODUCTS:
            if name in callees:  # defined before its callers, as every C function must be
                assert f"{name}_inner" in OP_INFO, f"{name} is called: document {name}_inner"
                fn.name, fn.internal = f"{name}_inner", True
                functions[fn.name] = fn
            fn = products.functions[name]
            ks.guests[name] = other
        functions[name] = fn
    ks.functions = functions
    return ks


def file_writer(ring: Ring, isa: str, names: Names | None = None) -> FileWriter:
    """The file writer of ``ring`` on ``isa`` (over the cached kernel set), in the namespace
    ``names`` (default: nttgen's)."""
    names = names or default_names(ring)
    command = canonical_command(ring, isa) + names.option
    return FileWriter(kernel_set(ring, isa), isa_class(isa), command, names=names)


@lru_cache(maxsize=GENERATION_CACHE)
def generate(ring: Ring, isa: str = "c", names: Names | None = None) -> GeneratedFiles:
    """Generate the .h/.c/.json texts of ``ring`` for ``isa`` in the namespace ``names``
    (default: nttgen's; cached)."""
    if names is None:
        return _stored("generate", ring, isa, lambda: file_writer(ring, isa).files())
    return _stored("generate", ring, isa, lambda: file_writer(ring, isa, names).files(), names)
