"""The contract every ISA backend fulfils."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...dsl.schedule import Schedule
from ...lanes import LaneType
from ...plan.constants import Arith, ConstMul
from ...plan.layout import MoveCosts
from .. import c_ast as C

if TYPE_CHECKING:
    from ...programs.ntru import BaseProducts


@dataclass(frozen=True)
class EmitContext:
    """What a backend needs to know about the file it emits into."""

    arith: Arith
    prefix: str
    shuffles: str = "default"  # the shuffle style, for ISAs that offer several

    @property
    def lane(self) -> LaneType:
        """The lane type of every value."""
        return self.arith.lane


class Isa(ABC):
    """One instruction set: lane counts, the vector C type, and a C template per vocabulary op.

    Op methods take C expressions of the operands (and attributes as keywords) and return the C
    expression of the result; ``shuffle`` returns two. Their exact semantics are the functions
    of :mod:`nttgen.dsl.semantics`, which the tests compare every backend against."""

    name: str = ""
    title: str = ""
    cflags: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    registers: int = 16  # vector registers the layout planner may use
    # the architecture the code needs (``uname -m`` spelling; None: any, as portable C); code
    # for another architecture than the host's runs under QEMU (:mod:`nttgen.cross`)
    arch: str | None = None
    # C compilers to build this backend with, best first (measured on the development machine:
    # gcc vectorises the portable loops better, clang schedules the SIMD intrinsics better)
    compilers: tuple[str, ...] = ("clang-19", "clang", "gcc", "cc")

    # x86 runtime detection for the dispatcher: CPUID leaf 7 (subleaf 0) EBX bits the ISA
    # needs, and the XCR0 bits the OS must set (it saves those registers on context switches);
    # zero for ISAs that need nothing
    cpuid7_ebx: int = 0
    xcr0: int = 0
    # shuffle styles this ISA can emit, the first being its default
    shuffle_styles: tuple[str, ...] = ("default",)
    # statement order of its SIMD kernels (:mod:`nttgen.dsl.schedule`): "critical_path" where
    # measured faster (x86), else the recorded order. Under QEMU only instruction counts can be
    # measured, and the list schedule changed NEON's by -3 % to +6 % (ML-KEM NTT 835 -> 810,
    # inverse 1,052 -> 1,120): no evidence for it there, so Arm and RISC-V keep the recorded order
    schedule: Schedule = "recorded"
    # how the NTRU Prime base multiplies its pieces (:data:`nttgen.programs.ntru.BaseProducts`):
    # "karatsuba" over Montgomery products, "wide" exact sums in double-width lanes
    # (``madd``/``addw``/``mredw``), or "pairs", coefficient pairs in adjacent lanes summed by
    # ``pair_madd`` (only ISAs that implement the ``pair_*`` ops); set where measured faster
    base_products: BaseProducts = "karatsuba"
    # whether the NTRU Prime DFTs multiply Rader's quadratic leaves by a constant with three
    # multiplications and one more addition (ConstMul's paired form) rather than four; set
    # where measured faster. sntrup761 polymul, 2026-11-24 (Zen 3; NEON and RVV in guest
    # instructions under QEMU): portable C 29,789 -> 28,609 ticks, NEON 46,685 -> 45,654,
    # RVV (VLEN 128) 73,955 -> 72,994; AVX2 7,312 -> 7,347 (the one more addition and the
    # reductions it brings cost more there), so x86 keeps four
    paired_leaves: bool = True
    # whether the NTRU Prime inverse DFT leaves its outputs within a third of the lane (a
    # reduction on each wider one), so that the fold adds its three terms without reducing
    # them; set where measured faster. sntrup761 polymul, 2026-11-24 (Zen 3; guest
    # instructions under QEMU): portable C 24,459 -> 24,145 ticks, AVX2 7,064 -> 6,981, NEON
    # 43,662 -> 43,537; RVV (VLEN 128) 69,450 -> 76,124 and (VLEN 256) 35,094 -> 38,423, so
    # RVV keeps the fold's reductions
    narrow_inverse_outputs: bool = True
    # whether the NTRU Prime DFTs run as loops over lines, one axis kernel per loop body
    # (:mod:`nttgen.programs.ntru_lines`), rather than as one straight-line trace, and the
    # Good–Rader fold as a loop over its vectors (see ``program_fold``); set where measured
    # faster. sntrup761 polymul, 2026-11-24 (Zen 3; guest instructions under QEMU):
    # AVX2 6,980 -> 6,197 ticks (stage harness: forward 1,121 -> 987, inverse 1,499 -> 1,193;
    # a few thousand instructions run once per call were decoded afresh each time), RVV
    # (VLEN 128) 69,454 -> 61,557 and (VLEN 256) 35,098 -> 31,086; NEON 43,537 -> 46,222 and
    # portable C (gcc vectorises the straight-line column loop, stage harness) 24,154 ->
    # 110,223 keep the trace. AVX-512 keeps it until measured on a CPU that has it
    dft_lines: bool = False
    # whether the NTRU Prime programs' lazy reductions use ``barrett_coarse`` (one rounding
    # high product, t = round(a*v/2^15)) wherever its wider range (within 0.63q for q = 4591)
    # serves, rather than ``barrett``; set where measured faster. sntrup761 polymul,
    # 2026-11-25 (guest instructions under QEMU): NEON 43,537 -> 41,691, RVV (VLEN 128)
    # 61,553 -> 58,722 and (VLEN 256) 31,082 -> 29,655; AVX2 see there. The portable C keeps
    # barrett: gcc -O3 vectorises barrett's high product but not the rounding one (polymul
    # 23,852 -> 32,336 ticks, Zen 3). AVX-512 keeps it until measured on a CPU that has it
    coarse_reductions: bool = False
    # whether the NTRU Prime Good–Rader polymul_small transforms its small operand by a DFT of
    # its own (``forward_small``, fewer reductions for inputs in [-1, 1]) rather than by the
    # same ``forward`` as the other operand; cleared where one shared transform measured
    # faster. AVX2 cleared it on 2026-11-25 (Zen 3, sntrup761, the benchmark's shared
    # libraries loaded side by side, batches of 100 calls alternated, medians of 3 runs:
    # polymul_small 5,137 -> 5,043, 5,163 -> 5,069, 5,129 -> 5,047 ticks): its own transform
    # was then Rader's straight-line trace on [-1, 1], 4.5 KiB of code whose few saved
    # reductions did not pay for decoding it (docs/design.md, "Code size"). With the ternary
    # forward below it sets it again.
    small_forward: bool = True
    # whether that ``forward_small`` is the ternary forward (:mod:`nttgen.programs.ntru_ternary`:
    # Rader's axis by its defining sum over the nonzero blocks, each product an exact
    # ``mullo`` of an input in [-1, 1], a loop over the lines with twiddles in the next pass)
    # rather than the other operand's DFT run on [-1, 1]. sntrup761 polymul_small, 2026-11-26
    # (Zen 3, clang-19; guest instructions under QEMU): AVX2, its stage alone 853 -> 554
    # ticks, the whole call 4,590 -> 4,535 (shared libraries alternated in batches; the
    # stage's gain mostly goes to running one more distinct function, see docs/design.md,
    # "The small operand's transform"); NEON 40,451 -> 37,898; RVV (VLEN 128) 57,459 ->
    # 54,596 and (VLEN 256) 29,022 -> 27,575. The portable C keeps its straight-line trace:
    # gcc does not vectorise the sums loop as it does the trace (polymul_small 24,300 ->
    # 49,652 ticks). AVX-512 keeps it until measured on a CPU that has it
    ternary_forward: bool = False
    # whether the Good–Rader forward DFT as lines (``dft_lines``) takes the ternary forward's
    # two loops with Rader's algorithm on each line's nonzero blocks in place of its sums:
    # the blocks read straight from the input, no grid pass, the lines' rotations as
    # twiddles in the frequencies pass (where they replace reductions). sntrup761, 2026-11-26
    # (Zen 3, clang-19, shared libraries alternated in batches, both orders): AVX2 polymul
    # 4,535 -> 4,381 and 4,544 -> 4,393 ticks, polymul_small 4,532 -> 4,388 and 4,546 ->
    # 4,408; RVV, guest instructions under QEMU, polymul 57,810 -> 55,354 (VLEN 128) and
    # 29,196 -> 27,952 (VLEN 256), polymul_small 54,592 -> 53,364 and 27,571 -> 26,949
    rotated_forward: bool = False
    # whether the Good–Rader inverse DFT as lines (``dft_lines``) runs its last pass (each
    # output block from its Good–Thomas position, less its top block) as a loop that reads
    # the positions from tables of offsets, not as one straight-line copy per block: less
    # code to decode per call. sntrup761, 2026-11-26 (Zen 3, clang-19, shared libraries
    # alternated in batches, both orders): AVX2 polymul 4,380 -> 4,336, polymul_small
    # 4,400 -> 4,234 ticks (the inverse's code 7.0 -> 4.0 KiB)
    indexed_outputs: bool = False

    def __init__(self, ctx: EmitContext) -> None:
        if ctx.shuffles != "default" and ctx.shuffles not in self.shuffle_styles:
            raise ValueError(
                f"{self.name} has no shuffle style {ctx.shuffles!r}: "
                f"it has {', '.join(self.shuffle_styles)}"
            )
        self.ctx = ctx
        self.style = self.shuffle_styles[0] if ctx.shuffles == "default" else ctx.shuffles
        self.lane = ctx.lane
        self.arith = ctx.arith

    @classmethod
    @abstractmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """How many lanes of this type one vector holds."""

    @classmethod
    def const_mul_for(cls, lane: LaneType, q: int) -> ConstMul:
        """How products by constants are formed for modulus q in these lanes (see
        :mod:`nttgen.plan.constants`): Montgomery unless the ISA says Shoup is cheaper."""
        del lane, q
        return "montgomery"

    @classmethod
    def move_costs(cls, lane: LaneType, style: str = "default") -> MoveCosts | None:
        """What bringing a lane bit into a register slot costs in these lanes with this shuffle
        style (see :class:`nttgen.plan.layout.MoveCosts`); None: the planner swaps every lane
        bit in, the one move every SIMD ISA has."""
        del lane, style
        return None

    @classmethod
    def unsupported(cls, n: int, lane: LaneType) -> str | None:
        """Why this ISA cannot run a ring of dimension n with these lanes (None if it can): the
        layouts need at least two vectors per polynomial."""
        lanes = cls.lanes_for(lane)
        if n < 2 * lanes:
            return (
                f"{cls.name} holds {lanes} lanes of {lane.bits} bits per vector and needs "
                f"n >= {2 * lanes}; n = {n} is too small (use isa='c')"
            )
        return None

    @abstractmethod
    def vec_type(self) -> str:
        """The C type of one vector value."""

    def wide_type(self) -> str:
        """The C type of one double-width value (``madd``, ``addw``; the same lanes as a
        vector, each twice as wide: on most ISAs two registers)."""
        raise ValueError(f"{self.name} has no double-width values for {self.lane.name} lanes")

    # ----------------------------------------------------------------- pair sums
    # Backends without an adjacent-lane multiply-add refuse these; the programs use them only
    # where ``base_products`` is "pairs".
    def _no_pairs(self, op: str) -> ValueError:
        return ValueError(
            f"{self.name} has no {op}: pair sums (adjacent-lane multiply-adds) are emitted "
            f"for x86 only; programs for {self.name} must not use the pair_* ops"
        )

    def pair_madd(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Pair sums a[2i]*b[2i] + a[2i+1]*b[2i+1] (refused unless overridden)."""
        del a, b
        raise self._no_pairs("pair_madd")

    def pair_add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a + b of pair sums (refused unless overridden)."""
        del a, b
        raise self._no_pairs("pair_add")

    def pair_mred(self, even: C.Expr, odd: C.Expr) -> C.Expr:
        """Two pair sums reduced and interleaved (refused unless overridden)."""
        del even, odd
        raise self._no_pairs("pair_mred")

    def pair_swap(self, a: C.Expr) -> C.Expr:
        """Lanes 2i and 2i+1 exchanged (refused unless overridden)."""
        del a
        raise self._no_pairs("pair_swap")

    def pair_blend(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Even lanes from a, odd from b (refused unless overridden)."""
        del a, b
        raise self._no_pairs("pair_blend")

    def shoupmul(self, a: C.Expr, z: C.Expr, zs: C.Expr) -> C.Expr:
        """Product by a constant with its Shoup quotient, from the ISA's own products:
        lo(a*z) - lo(hi(a*zs)*q), where both low products and the subtraction wrap, which is
        exact whenever the result fits the lane (the analysis proves it does)."""
        if self.arith.shoup_shift:
            raise ValueError(f"{self.name} forms Shoup quotients with an exact high product")
        vocab: Any = self  # an Isa implements the vocabulary's mullo, mulhi, sub and const
        q = vocab.const(value=self.arith.q)
        return vocab.sub(vocab.mullo(a, z), vocab.mullo(vocab.mulhi(a, zs), q))

    def helper(self, name: str) -> str:
        """The file-scope name of a helper function of this backend."""
        return f"{self.ctx.prefix}_{name}"

    @abstractmethod
    def helpers(self) -> list[C.Top]:
        """Static inline helper functions the op templates call."""

    @abstractmethod
    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """Load one vector from ``base[index]``."""

    @abstractmethod
    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """Load ``base[index]`` into every lane."""

    @abstractmethod
    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """Store one vector to ``base[index]``."""

    # ISAs whose loads and stores may take each lane from its own address (plans may then move
    # lane bits at load time, see :class:`nttgen.plan.layout.PassPlan`)
    gathers: bool = False

    def lane_offsets(self, name: str, lanes_at: tuple[int, ...]) -> C.Stmt:
        """The declaration of ``name``, the vector of a gather's lane offsets (in the units
        :meth:`load_gather` takes) for element offsets ``lanes_at``."""
        del name, lanes_at
        raise ValueError(f"{self.name} has no gathers")

    def load_gather(self, base: C.Expr, index: C.Expr, offsets: C.Expr) -> C.Expr:
        """Lane k from ``base[index]`` plus lane k of ``offsets`` (:meth:`lane_offsets`)."""
        del base, index, offsets
        raise ValueError(f"{self.name} has no gathers")

    def store_scatter(self, base: C.Expr, index: C.Expr, value: C.Expr, offsets: C.Expr) -> C.Stmt:
        """Lane k of ``value`` to ``base[index]`` plus lane k of ``offsets``."""
        del base, index, value, offsets
        raise ValueError(f"{self.name} has no scatters")


class HelperCalls:
    """The vocabulary ops that SIMD backends implement as calls of their static inline helpers
    (each backend writes the helpers; the calls are the same everywhere)."""

    helper: Callable[[str], str]

    def montmul(self, a: C.Expr, z: C.Expr, zq: C.Expr) -> C.Expr:
        """Montgomery product by a twisted constant."""
        return C.Call(self.helper("montmul"), (a, z, zq))

    def montmul_var(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Montgomery product of two variables."""
        return C.Call(self.helper("montmul_var"), (a, b))

    def barrett(self, a: C.Expr) -> C.Expr:
        """Barrett reduction."""
        return C.Call(self.helper("barrett"), (a,))

    def barrett_coarse(self, a: C.Expr) -> C.Expr:
        """Barrett reduction by one rounding high product."""
        return C.Call(self.helper("barrett_coarse"), (a,))

    def cond_add_q(self, a: C.Expr) -> C.Expr:
        """a + (q AND the sign mask of a)."""
        return C.Call(self.helper("cond_add_q"), (a,))

    def madd(self, a0: C.Expr, b0: C.Expr, a1: C.Expr, b1: C.Expr) -> tuple[C.Expr, ...]:
        """a0*b0 + a1*b1 as a double-width value held in two registers: the backend's
        helpers ``madd_lo`` and ``madd_hi`` (x86: the lanes ``vpunpck{l,h}wd`` take; NEON:
        lanes 0-3 and 4-7). ISAs with one register per wide value override this."""
        return tuple(C.Call(self.helper(f"madd_{h}"), (a0, b0, a1, b1)) for h in ("lo", "hi"))

    def addw(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a + b of double-width values."""
        return C.Call(self.helper("addw"), (a, b))

    def mredw(self, a: C.Expr | tuple[C.Expr, ...]) -> C.Expr:
        """Montgomery reduction of a double-width value (one expression, or its registers)."""
        return C.Call(self.helper("mredw"), a if isinstance(a, tuple) else (a,))

    def _helper_pair(self, stem: str, a: C.Expr, b: C.Expr) -> tuple[C.Expr, C.Expr]:
        """Calls of the helpers ``<stem>_lo`` and ``<stem>_hi`` (a shuffle's two outputs)."""
        return (
            C.Call(self.helper(f"{stem}_lo"), (a, b)),
            C.Call(self.helper(f"{stem}_hi"), (a, b)),
        )
