"""The contract every ISA backend fulfils."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...dsl.schedule import Schedule
from ...dsl.vocab import OP_GROUPS, VOCABULARY
from ...errors import IsaUnavailableError
from ...lanes import LaneType
from ...plan.constants import Arith, ConstMul
from ...plan.layout import MoveCosts
from .. import c_ast as C


@dataclass(frozen=True)
class EmitContext:
    """What a backend needs to know about the file it emits into."""

    arith: Arith
    prefix: str
    shuffles: str = "default"  # the shuffle style, for ISAs that offer several
    macros: str = "NTTGEN"  # what starts every macro of the file (see nttgen.emit.names)
    # what starts the names of the backend's helpers (default: ``prefix``); a second backend
    # emitting some functions of the same file (its register groups of another size) has its
    # own, so that its helpers of other vector types stand beside the file's
    helpers: str = ""

    def macro(self, name: str) -> str:
        """The file's macro ``name`` (``DEBUG`` -> ``NTTGEN_DEBUG``)."""
        return f"{self.macros}_{name}"

    @property
    def range_check(self) -> str:
        """The name of the file's range assertion of debug builds (one per file, whichever
        backend emits a function)."""
        return f"{self.prefix}_assert_range"

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
    # (macro, what turns it on): the predefined macros a compiler sets when this ISA's
    # instructions are enabled; a generated file stops with one #error naming the first
    # missing one's flag, instead of a page of "inlining failed" errors from the intrinsics
    compile_checks: tuple[tuple[str, str], ...] = ()
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
    # whether the cached inner product of a complete NTT reads b's twist from the cache (a
    # Montgomery product by a twist: 3 multiplies and a load) rather than multiplying two
    # variables (4 multiplies): true where the multiplier ports bound it (x86: Kyber-r1 AVX2
    # k = 3, 62 against 72 ticks); NEON and RVV execute more instructions with it (ML-DSA NEON
    # k = 3: 3,493 against 2,986 under QEMU)
    twist_products: bool = False
    # chunks of base multiplication one step of the inner products sums at once, for a complete
    # NTT (a chunk: one vector of each operand) and for degree-2 factors (a chunk: two): the
    # loop over the k products then costs its counter, pointers and branch once per that many
    # chunks, but needs that many more registers (measured per ISA, see the subclasses)
    product_chunks: tuple[int, int] = (1, 1)

    @classmethod
    def chunks_for(cls, base_degree: int, lane: LaneType) -> int:
        """Chunks per step of the inner products of a ring whose base multiplications have
        degree ``base_degree`` (1: complete NTT, 2: degree-2 factors), in ``lane`` lanes:
        ``product_chunks`` by degree, whatever the lanes."""
        del lane
        return cls.product_chunks[base_degree - 1]

    # C headers the source includes for the intrinsics
    includes: tuple[str, ...] = ()
    # whether every table pointer is made opaque to the compiler (``NTTGEN_OPAQUE``), so that
    # the lanes of a loaded table vector are not folded into immediates
    opaque_tables: bool = False
    # the same for gcc alone (``NTTGEN_GCC_OPAQUE``) and the tables read by broadcasts only,
    # where clang builds the constants better
    gcc_opaque_tables: bool = False
    # whether a function with more broadcast constants than registers reads each where it is
    # used, from a table (instructions that take a memory operand; see emit.const_loads)
    constants_in_memory: bool = False
    # whether 16-bit lanes read the table entries they broadcast at fixed indices by aligned
    # vector loads of a copy that holds each entry over a whole vector (see
    # emit.vector_broadcasts)
    vector_broadcasts: bool = False
    # whether one-lane programs are strip-mined over the hardware vector length (RVV's
    # vsetvl) rather than emitted as scalar C (:mod:`nttgen.emit.strip_emit`)
    strip_mined: bool = False
    # the vector length in bits the code needs (read on RISC-V only, where the V extension
    # guarantees 128), and the one it is specialised to (None: any, read at run time)
    min_vlen: int = 128
    vlen: int | None = None
    # the optional op groups of the vocabulary (:data:`nttgen.dsl.vocab.OP_GROUPS`) this ISA
    # emits; the ops of any other group are refused by :meth:`template`
    op_groups: frozenset[str] = frozenset()

    def template(self, op: str) -> Callable[..., Any]:
        """The C template of the vocabulary op ``op``. An op of an optional group the ISA does
        not declare in :attr:`op_groups` raises :class:`IsaUnavailableError` naming the
        group, never emits something else."""
        group = VOCABULARY[op].group
        if group and group not in self.op_groups:
            raise IsaUnavailableError(
                f"{self.name} has no {op}: it does not emit the op group {group!r} "
                f"({OP_GROUPS[group]})"
            )
        return getattr(self, op)  # type: ignore[no-any-return]

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
                f"n >= {2 * lanes}; n = {n} is too small (use {cls.small_ring_isas()})"
            )
        return None

    @classmethod
    def small_ring_isas(cls) -> str:
        """What to use instead for a ring too small for this ISA's vectors, as the error
        message says it."""
        return "isa='c'"

    def uniform_form(
        self, op: str, args: tuple[C.Expr, ...], uniform: tuple[bool, ...]
    ) -> C.Expr | None:
        """Op ``op`` of ``args`` in a cheaper form for the operands marked in ``uniform``,
        which hold one value in every lane (broadcast table entries, constants); None where
        the ISA has no such form and the op's template applies."""
        del op, args, uniform
        return None

    @classmethod
    def has_wide_values(cls, lane: LaneType) -> bool:
        """Whether the ISA holds double-width values of ``lane`` (``madd``, ``mulw``,
        ``addw``, ``mredw``): every ISA does, but for RVV at LMUL 8 (a double-width group
        would need LMUL 16)."""
        del lane
        return True

    @staticmethod
    def address(base: C.Expr, index: C.Expr) -> C.Expr:
        """&base[index]; an index that is a variable part plus a constant is written
        &base[variable] + constant, so that compilers keep one pointer per variable part and
        fold the constants into the accesses' immediate offsets (clang-19 for AArch64 rebuilt
        every address of i*16 + 4 by a bit insert and a shift instead: NEON inner products
        executed 10-16 % more instructions; x86 timings did not move)."""
        if (
            isinstance(index, C.Bin)
            and index.op == "+"
            and isinstance(index.right, C.Int)
            and index.right.value > 0
        ):
            return C.Bin("+", C.Unary("&", C.Index(base, index.left)), index.right)
        return C.Unary("&", C.Index(base, index))

    @abstractmethod
    def vec_type(self) -> str:
        """The C type of one vector value."""

    def wide_type(self) -> str:
        """The C type of one double-width value (``madd``, ``addw``; the same lanes as a
        vector, each twice as wide: on most ISAs two registers)."""
        raise ValueError(f"{self.name} has no double-width values for {self.lane.name} lanes")

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
        return f"{self.ctx.helpers or self.ctx.prefix}_{name}"

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

    # whether ops take lane scalars for operands every lane shares (a broadcast table entry):
    # the ISA then implements ``splat``, ``scalar_form`` and ``montmul_vx`` (RVV's ``.vx`` forms)
    scalar_operands: bool = False

    def splat(self, x: C.Expr) -> C.Expr:
        """A lane scalar in every lane (ISAs with ``scalar_operands``)."""
        del x
        raise ValueError(f"{self.name} takes no lane scalars")

    def scalar_form(self, op: str, vec: C.Expr, scalar: C.Expr, scalar_first: bool) -> C.Expr:
        """``op`` (add, sub, mullo or mulhi) of a vector and a lane scalar, the scalar the
        first operand where ``scalar_first`` (ISAs with ``scalar_operands``)."""
        del vec, scalar, scalar_first
        raise ValueError(f"{self.name} has no {op} of a vector and a lane scalar")

    def montmul_vx(self, a: C.Expr, z: C.Expr, zq: C.Expr) -> C.Expr:
        """Montgomery product of a vector by a twisted scalar pair (ISAs with
        ``scalar_operands``)."""
        del a, z, zq
        raise ValueError(f"{self.name} has no Montgomery product by lane scalars")

    # the largest static cap of a runtime loop (the inner products' groups) emitted as its
    # trips in straight lines, each inside an ``if`` on the count, rather than as a loop
    guarded_trips: int = 0

    def barrett_sum(self, a: C.Expr, b: C.Expr) -> C.Expr | None:
        """barrett(a) + barrett(b) as one expression, where the ISA has a cheaper form of it
        than the two reductions and the addition (the emitter then writes it for a sum of two
        reductions that nothing else reads); None by default."""
        del a, b
        return None

    # operands that an op's instructions read more than once, by op name (operand positions):
    # where one is a value loaded from memory, the emitter passes it through :meth:`pin` first
    pinned_operands: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def pin(self, x: C.Expr) -> C.Expr:
        """A loaded value as one register that every instruction of the op reads (see
        ``pinned_operands``); the value itself by default."""
        return x

    # how many consecutive vectors one load instruction can move, largest first (see
    # :mod:`nttgen.emit.memory_groups`), none by default; ``grouped_kernels``: the kernels whose
    # loads are grouped (None: every one)
    memory_groups: tuple[int, ...] = ()
    grouped_kernels: frozenset[str] | None = None

    def memory_groups_in(self, kernel: str) -> tuple[int, ...]:
        """The group sizes used in kernel ``kernel`` (a program's name): ``memory_groups``, or
        none where ``grouped_kernels`` leaves the kernel out."""
        if self.grouped_kernels is not None and kernel not in self.grouped_kernels:
            return ()
        return self.memory_groups

    def group_type(self, g: int) -> str:
        """The C type of ``g`` consecutive vectors loaded by one instruction."""
        raise ValueError(f"{self.name} loads no groups of {g} vectors")

    def load_group(self, base: C.Expr, index: C.Expr, g: int) -> C.Expr:
        """``g`` consecutive vectors from ``base[index]`` on, by one instruction."""
        del base, index
        raise ValueError(f"{self.name} loads no groups of {g} vectors")

    def group_part(self, group: C.Expr, i: int, g: int) -> C.Expr:
        """Vector ``i`` of a group of ``g`` (free: a register of the group)."""
        del group, i
        raise ValueError(f"{self.name} loads no groups of {g} vectors")

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

    def montmul_twist(self, a: C.Expr, b: C.Expr, bq: C.Expr) -> C.Expr:
        """The instructions of :meth:`montmul` with b and its twist bq in place of a constant
        and its twist (only the analysis of the range differs)."""
        return self.montmul(a, b, bq)

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
