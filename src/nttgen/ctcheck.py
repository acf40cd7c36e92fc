"""Static constant-time check of compiled kernels: a taint analysis over the disassembly.

What it proves about each function of an object file, for all inputs: no conditional branch
depends on data loaded from the caller's arrays, no memory address is computed from such data,
and no division instruction appears at all. What the compiler did is what is checked, at every
optimisation level, so a compiler that turned a sign mask into a branch would be caught.

Three architectures are modelled (:data:`ARCHES`): x86-64 (``objdump -M intel``), AArch64 with
Advanced SIMD (``aarch64-linux-gnu-objdump`` or ``llvm-objdump-19``) and RV64GC with the vector
extension 1.0 (``llvm-objdump-19 --mattr=+v``). The model, common to all three:

* On entry every register is public (pointers, sizes, garbage); a value loaded from memory is
  secret unless it comes from a PC-relative constant, from read-only data addressed through a
  PC-relative pointer (``lea``/``adrp``/``auipc`` of a read-only section, plus public
  offsets; kept across spills), or from a stack slot that holds a public value (spills are
  tracked per slot).
* An instruction's destination becomes secret when any source is (the destination counts as a
  source when the instruction also reads it: x86 two-operand forms, multiply-accumulate, lane
  inserts, RVV tail/mask-undisturbed policies); zeroing idioms clear it; flags are secret when
  the flag-setting instruction read anything secret.
* Violations: a conditional branch on secret flags or a secret register; an indirect branch
  through a secret register (AArch64/RISC-V); a memory operand whose base, index, stride,
  index vector or mask is secret; any division instruction. Conditional selects (``cmov``,
  ``csel``) on secret flags are fine: they do not branch.
* Calls make caller-saved registers public (results of calls are not tracked). Each function
  is checked on its own, from a public entry: the tests check every function of an object, so
  that the stages a kernel keeps out of line and the helpers of unoptimised code are checked
  too; a value a caller passes in a register (a helper's argument at -O0, or an array element
  a compiler passes by value to a static function that read it) is taken as public there.
* Control flow is asked of the model (:meth:`Model.flow`). Branch targets of relocatable objects
  come from their relocations; an indirect jump (a jump table) may reach any instruction the
  object's data points to (RISC-V tables carry relocations) or else any instruction past the
  function's entry block.

Stores through anything but a tracked stack slot are not followed (the caller's arrays are
secret anyway); the stack is assumed not to be accessed both through a constant offset and a
run-time computed address for the same object. The analysis runs to a fixpoint over the
function's control-flow graph, so loops are covered.
"""

from __future__ import annotations

import heapq
import re
import shutil
import struct
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import ClassVar, cast

from .byte_ranges import ByteRanges

# ------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Violation:
    """One finding: where, what, why."""

    function: str
    address: int
    instruction: str
    reason: str

    def __str__(self) -> str:
        return f"{self.function}+{self.address:#x}: {self.instruction}  [{self.reason}]"


@dataclass(frozen=True)
class Reloc:
    """The relocation applied at an instruction, from the object file's ELF tables."""

    type: int
    symbol: str
    local: bool  # the symbol is defined in the section of the instruction
    readonly: bool  # the symbol is defined in an allocated, non-writable section
    value: int  # symbol value + addend: an offset into the symbol's section


@dataclass
class Instr:
    """One disassembled instruction."""

    address: int
    mnemonic: str
    operands: list[str]
    text: str
    target: int | None = None
    reloc: Reloc | None = None
    taken: bool = False  # data of the object holds its address (a jump-table entry)


# x86: (base register, displacement); AArch64/RISC-V: (offset from the entry stack pointer, size)
Slot = tuple[str | int, int]


@dataclass
class State:
    """Taint of registers, stack slots and flags at one program point.

    ``regs`` and ``slots`` may be secret (joined by union); ``frame`` (registers known to hold
    the entry stack pointer plus a constant) and ``consts`` (registers known to point into
    read-only data) and ``values`` (registers known to hold a constant: large frames are
    allocated by ``sub sp, sp, x12``) must hold on every path (joined by intersection). Names
    starting with ``@``
    are model-specific: RVV ``vl`` and ``vtype`` in ``regs``, spilled pointers (``@slot-24``:
    the 8 bytes at entry sp - 24) in ``frame`` and ``consts``.
    """

    regs: set[str] = field(default_factory=set)
    slots: set[Slot] | ByteRanges = field(default_factory=set)
    flags: bool = False
    frame: dict[str, int] = field(default_factory=dict)
    consts: set[str] = field(default_factory=set)
    values: dict[str, int] = field(default_factory=dict)

    def copy(self) -> State:
        return State(set(self.regs), self.slots.copy(), self.flags, dict(self.frame),
                     set(self.consts), dict(self.values))  # fmt: skip

    def join(self, other: State) -> bool:
        """Merge ``other`` in place; return whether anything changed."""

        def size() -> tuple[int, ...]:
            return (len(self.regs), len(self.slots), self.flags, len(self.frame),
                    len(self.consts), len(self.values))  # fmt: skip

        before = size()
        self.regs |= other.regs
        self.slots |= other.slots  # type: ignore[operator]  # both sets or both ranges
        self.flags = self.flags or other.flags
        self.frame = {r: o for r, o in self.frame.items() if other.frame.get(r) == o}
        self.consts &= other.consts
        self.values = {r: v for r, v in self.values.items() if other.values.get(r) == v}
        return before != size()  # unions only grow and intersections only shrink


class Flow(Enum):
    """Where control goes after an instruction."""

    FALL = "fall"  # to the next instruction only (calls included)
    COND = "cond"  # to the target and to the next instruction
    JUMP = "jump"  # to the target only; nowhere in this function when it has none (tail call)
    INDIRECT = "indirect"  # anywhere in the function (a jump table)
    STOP = "stop"  # nowhere (return, trap)


Decoded = tuple[str, tuple[str, ...], str, int | None]


class Model:
    """What the driver asks of an architecture: which objdump to run, how to parse its lines,
    where control goes, and how one instruction changes the taint :class:`State`."""

    arch = ""
    objdumps: tuple[str, ...] = ("objdump",)  # candidates, preferred first
    gnu_args: tuple[str, ...] = ()  # extra arguments for GNU objdump
    llvm_args: tuple[str, ...] = ()  # extra arguments for llvm-objdump

    def objdump_command(self, objdump: str | None = None) -> list[str]:
        """The disassembler command line (without the object file): ``objdump`` if given, else
        the first of :attr:`objdumps` on the PATH."""
        tool = objdump or next((t for t in self.objdumps if shutil.which(t)), None)
        if tool is None:
            raise FileNotFoundError(f"no disassembler for {self.arch}: install one of "
                                    + ", ".join(self.objdumps))  # fmt: skip
        args = self.llvm_args if "llvm" in Path(tool).name else self.gnu_args
        return [tool, "-d", "--no-show-raw-insn", *args]

    def __init__(self) -> None:
        self._decoded: dict[str, Decoded | None] = {}  # instruction text -> its parse

    def parse(self, line: str) -> Instr | None:
        """One line of objdump output as an instruction, or None for anything else."""
        m = _LINE.match(line)
        if not m:
            return None
        text = m.group(2)
        if text in self._decoded:
            decoded = self._decoded[text]
        else:
            decoded = self._decoded[text] = self.decode(text)
        if decoded is None:
            return None
        mnemonic, operands, body, target = decoded
        return Instr(int(m.group(1), 16), mnemonic, list(operands), body, target)

    def decode(self, text: str) -> Decoded | None:
        """(mnemonic, operands, instruction text, branch target) of what follows the address
        on an objdump line; None for anything but an instruction. The same text always reads
        the same (an unrolled kernel repeats most of its instructions), so it is parsed once."""
        raise NotImplementedError

    def finish(self, code: list[Instr]) -> None:
        """Resolve what needs the whole function (branch targets from relocations)."""

    def flow(self, ins: Instr) -> Flow:
        """Where control goes after ``ins``."""
        raise NotImplementedError

    def entry(self) -> State:
        """The state on function entry: everything public."""
        return State()

    def step(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Apply one instruction to ``st`` (in place), appending (instruction, reason) for each
        violation to ``report``."""
        raise NotImplementedError


# ------------------------------------------------------------------------- x86-64 model

_GPR = {
    "rax": ("rax", "eax", "ax", "al", "ah"),
    "rbx": ("rbx", "ebx", "bx", "bl", "bh"),
    "rcx": ("rcx", "ecx", "cx", "cl", "ch"),
    "rdx": ("rdx", "edx", "dx", "dl", "dh"),
    "rsi": ("rsi", "esi", "si", "sil"),
    "rdi": ("rdi", "edi", "di", "dil"),
    "rbp": ("rbp", "ebp", "bp", "bpl"),
    "rsp": ("rsp", "esp", "sp", "spl"),
    **{f"r{i}": (f"r{i}", f"r{i}d", f"r{i}w", f"r{i}b") for i in range(8, 16)},
}
_REG = {alias: full for full, aliases in _GPR.items() for alias in aliases}
for _i in range(32):
    for _p in ("xmm", "ymm", "zmm"):
        _REG[f"{_p}{_i}"] = f"v{_i}"
for _i in range(8):
    _REG[f"k{_i}"] = f"k{_i}"

_CALLER_SAVED = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"} | {
    f"v{i}" for i in range(32)
}
_PREFIXES = {
    "rep",
    "repz",
    "repe",
    "repnz",
    "repne",
    "lock",
    "data16",
    "cs",
    "ds",
    "notrack",
    "bnd",
}
_NO_EFFECT = {"nop", "endbr64", "ret", "leave", "int3", "ud2", "vzeroupper", "vzeroall", "push",
              "prefetcht0", "prefetcht1", "prefetcht2", "prefetchnta", "lfence", "sfence",
              "mfence", "pause", "xchg_nop"}  # fmt: skip
_WRITE_ONLY_PREFIXES = ("mov", "vmov", "lea", "cvt", "vcvt", "vbroadcast", "vpbroadcast",
                        "pmovsx", "pmovzx", "vpmovsx", "vpmovzx", "set", "vpmov", "kmov",
                        "vextract", "vpextr", "pextr")  # fmt: skip
_FLAG_SETTERS = ("add", "sub", "and", "or", "xor", "inc", "dec", "neg", "shl", "shr", "sar",
                 "sal", "rol", "ror", "rcl", "rcr", "imul", "mul", "adc", "sbb", "bt", "bsf",
                 "bsr", "lzcnt", "tzcnt", "popcnt", "cmp", "test", "ptest", "vptest", "comis",
                 "ucomis", "vcomis", "vucomis", "kortest", "ktest", "andn", "blsi", "blsr",
                 "shld", "shrd")  # fmt: skip
_MEM = re.compile(r"(?:[A-Z]+ PTR )?(?:[a-z]s:)?\[([^\]]*)\]")
_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_TARGET = re.compile(r"^([0-9a-f]+) <")


def _operands(text: str) -> tuple[str, ...]:
    """The comma-separated operands of an instruction (commas inside ``[]``/``{}`` kept)."""
    if "[" not in text and "{" not in text:  # the common case: no comma can be nested
        parts = [part.strip() for part in text.split(",")]
        return tuple(parts if parts[-1] else parts[:-1])
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return tuple(out)


# Register names and memory operands repeat across the hundreds of thousands of instructions
# of an unrolled kernel: their parses are cached (pure functions of the operand's text).
_CACHE = 1 << 16
_WORD = re.compile(r"[a-z][a-z0-9]*")
_MASK_SUFFIX = re.compile(r"\{[^}]*\}")  # {k1}{z}: AVX-512 masking, read apart


@lru_cache(maxsize=_CACHE)
def _regs_in(text: str) -> frozenset[str]:
    """The canonical x86 registers named in ``text``."""
    return frozenset(_REG[t] for t in _WORD.findall(text) if t in _REG)


@lru_cache(maxsize=_CACHE)
def _value_regs(op: str) -> frozenset[str]:
    """The registers of a register operand, its write mask left out."""
    return _regs_in(_MASK_SUFFIX.sub("", op))


_STACK_SLOT = re.compile(r"(rsp|rbp)(?:([+-])0x([0-9a-f]+))?")


@lru_cache(maxsize=_CACHE)
def _x86_memory(op: str) -> tuple[frozenset[str], tuple[str, int] | None, bool] | None:
    """(address registers, stack slot or None, RIP-relative) of a memory operand."""
    m = _MEM.search(op)
    if not m:
        return None
    inner = m.group(1).replace(" ", "")
    regs = _regs_in(inner.replace("*", " "))
    if "rip" in inner:
        return frozenset(), None, True
    slot = None
    base = _STACK_SLOT.fullmatch(inner)
    if base:
        disp = int(base.group(3), 16) if base.group(3) else 0
        slot = (base.group(1), -disp if base.group(2) == "-" else disp)
    return regs - {"rsp", "rbp"} if slot else regs, slot, False


class X86Model(Model):
    """Taint transfer of x86-64 instructions (Intel syntax, as ``objdump -M intel`` prints)."""

    arch = "x86_64"
    objdump_args = ("-M", "intel")
    gnu_args = objdump_args
    llvm_args = ("--x86-asm-syntax=intel",)

    def flow(self, ins: Instr) -> Flow:
        """Jumps start with ``j``; ``jmp`` is the only unconditional one."""
        mn = ins.mnemonic
        if mn.startswith("j"):
            return Flow.JUMP if mn == "jmp" else Flow.COND
        if mn == "ret" or mn.startswith("ud2"):
            return Flow.STOP
        return Flow.FALL

    def decode(self, text: str) -> Decoded | None:
        body = text.split("#")[0].strip()
        if not body or body.startswith("(bad)"):
            return None
        words = body.split(None, 1)
        while words and words[0] in _PREFIXES:
            body = words[1] if len(words) > 1 else ""
            words = body.split(None, 1)
        if not words:
            return None
        mnemonic = words[0]
        ops = _operands(words[1]) if len(words) > 1 else ()
        target = None
        if mnemonic.startswith("j") and ops:
            t = _TARGET.match(ops[0])
            if t:
                target = int(t.group(1), 16)
        return mnemonic, ops, body, target

    # ----------------------------------------------------------------- operands
    _memory = staticmethod(_x86_memory)

    def _read(self, op: str, st: State) -> bool:
        mem = self._memory(op)
        if mem is None:
            return not _value_regs(op).isdisjoint(st.regs)
        regs, slot, rip = mem
        if rip:
            return False
        if slot is not None:
            return slot in st.slots
        # a table of the program's read-only data at a public index holds a constant;
        # anything else is the caller's memory
        return not (len(regs & st.consts) == 1 and not regs & st.regs)

    @staticmethod
    def _into_readonly(mem: tuple[frozenset[str], Slot | None, bool] | None, st: State) -> bool:
        """Whether an address (of ``lea``) points into the program's read-only data: relative
        to the instruction pointer, or one such pointer plus public registers."""
        if mem is None:
            return False
        regs, slot, rip = mem
        return rip or (slot is None and len(regs & st.consts) == 1 and not regs & st.regs)

    def _pointer_key(self, op: str) -> str:
        """Where a pointer into read-only data is kept: a register's name, or ``@base+disp`` for
        a stack slot (unoptimised code spills the pointers it uses and reloads them)."""
        mem = self._memory(op)
        if mem is not None and mem[1] is not None:
            return f"@{mem[1][0]}{mem[1][1]:+d}"
        regs = _regs_in(op)
        return next(iter(regs)) if len(regs) == 1 else ""

    def _keeps_readonly_pointer(self, mn: str, dst: str, srcs: list[str], st: State) -> bool:
        """Whether ``dst`` holds a pointer into read-only data after ``mn dst, srcs``: a copy of
        one (register or stack slot), or one moved by a public amount (``add rax, rdx``)."""
        if len(srcs) != 1 or ("PTR" in dst and "PTR" in srcs[0]):
            return False
        src = srcs[0]
        if mn == "mov":
            return self._pointer_key(src) in st.consts
        if mn in ("add", "sub") and self._pointer_key(dst) in st.consts and "PTR" not in dst:
            moved_by = _regs_in(src)
            return not moved_by & (st.regs | st.consts) and "PTR" not in src
        return False

    def _write(self, op: str, taint: bool, st: State) -> None:
        mem = self._memory(op)
        if mem is not None:
            _, slot, _ = mem
            if slot is not None:
                (st.slots.add if taint else st.slots.discard)(slot)
                st.consts.discard(self._pointer_key(op))
            return
        for r in _value_regs(op):
            (st.regs.add if taint else st.regs.discard)(r)
            st.consts.discard(r)  # whatever it pointed to, it no longer does

    # ----------------------------------------------------------------- transfer
    def step(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Apply one instruction to ``st`` (in place), reporting violations."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in _NO_EFFECT or mn.startswith("nop"):
            return  # includes multi-byte nops, whose memory operand is never accessed
        if mn == "lea" and len(ops) == 2:
            # address arithmetic, no memory access: the result is as secret as its registers
            mem = self._memory(ops[1])
            regs = mem[0] if mem is not None else frozenset()
            readonly = self._into_readonly(mem, st)
            self._write(ops[0], bool(regs & st.regs), st)
            if readonly:
                st.consts |= _regs_in(ops[0])
            return
        for op in ops:
            mem = self._memory(op)
            if mem is not None and mem[0] & st.regs:
                report.append((ins, "memory address depends on secret data"))
        if mn.startswith("div") or mn.startswith("idiv") or mn.startswith("vdiv"):
            report.append((ins, "division instruction"))
        if mn.startswith("j"):
            if mn != "jmp" and st.flags:
                report.append((ins, "conditional branch on secret data"))
            return
        if mn == "call":
            st.regs -= _CALLER_SAVED
            st.consts -= _CALLER_SAVED
            st.flags = False
            return
        if mn == "pop":
            if ops:
                self._write(ops[0], False, st)
            return
        if mn in ("cwde", "cdqe", "cbw"):
            return  # sign-extends within rax
        if mn in ("cwd", "cdq", "cqo"):
            (st.regs.add if "rax" in st.regs else st.regs.discard)("rdx")
            st.consts.discard("rdx")
            return
        if mn == "xchg" and len(ops) == 2:
            a, b = self._read(ops[0], st), self._read(ops[1], st)
            self._write(ops[0], b, st)
            self._write(ops[1], a, st)
            return
        if mn in ("mul", "imul") and len(ops) == 1:
            t = self._read(ops[0], st) or "rax" in st.regs
            for r in ("rax", "rdx"):
                (st.regs.add if t else st.regs.discard)(r)
                st.consts.discard(r)
            st.flags = t
            return
        if (mn.startswith(("stos", "movs")) and not ops) or mn in ("stos", "movs"):
            # string stores to memory we do not track: be conservative with every stack slot
            if "rax" in st.regs or mn.startswith("movs"):
                st.slots |= {("rsp", d) for d in range(-4096, 4096, 8)}
            return
        if mn in ("cmp", "test") or mn.startswith(
            ("ptest", "vptest", "comis", "ucomis", "vcomis", "vucomis", "kortest", "ktest")
        ):
            st.flags = any(self._read(op, st) for op in ops)
            return
        if not ops:
            return
        dst, srcs = ops[0], ops[1:]
        zeroing = (
            mn in ("xor", "sub", "pxor", "xorps", "xorpd", "psubb", "psubw", "psubd", "psubq")
            and len(ops) == 2
            and ops[0] == ops[1]
        ) or (
            mn.startswith(("vpxor", "vxorp", "vpsub"))
            and len(ops) == 3
            and ops[1] == ops[2]
            and "{" not in ops[0]
        )
        if zeroing:
            self._write(dst, False, st)
            if mn in ("xor", "sub"):
                st.flags = False
            return
        write_only = mn.startswith(_WRITE_ONLY_PREFIXES) or (mn == "imul" and len(ops) == 3)
        if (
            mn.startswith("v")
            and len(ops) >= 3
            and not mn.startswith(
                (
                    "vpermt2",
                    "vpermi2",
                    "vfmadd",
                    "vfmsub",
                    "vfnmadd",
                    "vfnmsub",
                    "vpdp",
                    "vpternlog",
                )
            )
        ):
            write_only = True  # VEX/EVEX three-operand forms do not read the destination
        if "{k" in dst and "{z}" not in dst:
            write_only = False  # merge masking keeps the destination's other lanes
        readonly = self._keeps_readonly_pointer(mn, dst, srcs, st)
        taint = any(self._read(s, st) for s in srcs)
        if mn.startswith("cmov"):
            taint = taint or st.flags or self._read(dst, st)
        elif mn.startswith("set"):
            taint = st.flags
        elif not write_only:
            taint = taint or self._read(dst, st)
        self._write(dst, taint, st)
        if readonly and not taint:
            st.consts.add(self._pointer_key(dst))
        if mn.startswith(_FLAG_SETTERS) and not mn.startswith(("v", "p")):
            st.flags = taint


# ------------------------------------------------------------------------- load/store machines

_BIG = 1 << 16  # bytes a vector access of unknown length may cover (VLEN <= 65536 bits x 8)
# RVV's vlenb (VLEN in bytes) is public but unknown: register-spill areas of vector functions
# are allocated in multiples of it. It stands as one symbolic constant, larger than _BIG, so
# slots vlenb apart never overlap.
_VLENB = 1 << 20
# A stack pointer realigned by masking (over-aligned locals) sits at an unknown distance below
# the old one: its slots are given a region of their own, this far below the entry frame.
_REALIGN = -(1 << 40)
_TOKEN = re.compile(r"(?<![\w.])[a-z][a-z0-9]*")  # a register-like word, not "x10" in "#0x10"
_SYMBOLIC = re.compile(r"\s*<[^>]*>")  # " <f+0x18>"
_ANNOTATION = re.compile(r"(?<![\w.])(?:0x)?([0-9a-f]+)\s+<[^>]*>")  # "18 <f+0x18>"
_NUMBER = re.compile(r"#?-?(?:0x[0-9a-f]+|\d+)")


def _int(text: str) -> int:
    """An immediate as objdump prints it: ``#0x10``, ``#-32``, ``16``, ``-0x2``."""
    return int(text.strip().lstrip("#"), 0)


def _sext32(v: int) -> int:
    """The 64-bit value of a 32-bit result (RV64 ``lui``, ``addiw``)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _secret_bytes(st: State) -> ByteRanges:
    """The secret stack bytes of a load/store machine's state (offsets from the entry stack
    pointer): the only kind of slot those models store."""
    return cast(ByteRanges, st.slots)


@dataclass(frozen=True)
class _Pointer:
    """What a register written by pointer arithmetic is known to hold (before the write)."""

    frame: int | None  # entry stack pointer + this, when known
    const: bool  # an address into read-only data
    value: int | None = None  # a known constant (not an address)


class _LoadStoreModel(Model):
    """Shared machinery of AArch64 and RISC-V: the same load/store discipline, so the same
    tracking of stack slots (keyed by their offset from the stack pointer at entry, so spills
    through ``sp``, a frame pointer or a copy of either all meet), of pointers into read-only
    data, and of calls. Subclasses parse their syntax and step their instructions."""

    regnames: ClassVar[dict[str, str]] = {}  # spelling -> canonical name; zero register -> ""
    caller_saved: frozenset[str] = frozenset()
    comment = "#"  # what starts a comment in objdump's output

    def __init__(self) -> None:
        super().__init__()
        self._regs: dict[str, tuple[str, ...]] = {}  # operand text -> its registers

    def entry(self) -> State:
        return State(slots=ByteRanges(), frame={"sp": 0})

    def mnemonic(self, word: str) -> str:
        """The canonical spelling of a mnemonic."""
        return word.lower()

    def decode(self, text: str) -> Decoded | None:
        body = text.split(self.comment)[0].strip()
        if not body:
            return None
        words = body.split(None, 1)
        rest = words[1] if len(words) > 1 else ""
        t = _ANNOTATION.search(rest)
        target = int(t.group(1), 16) if t else None
        if "<" in rest:
            rest = _SYMBOLIC.sub("", rest)  # symbolic annotations, which may look like regs
        return self.mnemonic(words[0]), _operands(rest), body, target

    def finish(self, code: list[Instr]) -> None:
        # In a relocatable object a branch may carry a relocation instead of its offset (RISC-V
        # always does, for linker relaxation): the relocation names the real target.
        for ins in code:
            if ins.reloc is not None and self.flow(ins) in (Flow.COND, Flow.JUMP):
                ins.target = ins.reloc.value if ins.reloc.local else None

    # ----------------------------------------------------------------- registers
    def regs(self, text: str) -> tuple[str, ...]:
        """Canonical names of the registers named in an operand (the zero register left out)."""
        out = self._regs.get(text)
        if out is None:
            names = self.regnames
            out = tuple(r for t in _TOKEN.findall(text) if (r := names.get(t)))
            self._regs[text] = out
        return out

    def is_reg(self, text: str) -> bool:
        """Whether an operand is exactly one register (the zero register included)."""
        return text in self.regnames

    @staticmethod
    def secret(st: State, regs: Iterable[str]) -> bool:
        """Whether any of ``regs`` is secret in ``st``."""
        return any(r in st.regs for r in regs)

    @staticmethod
    def write(st: State, regs: Iterable[str], taint: bool) -> None:
        """Registers get a new value: secret or not, and no longer a known pointer."""
        for r in regs:
            if r:
                (st.regs.add if taint else st.regs.discard)(r)
                st.frame.pop(r, None)
                st.consts.discard(r)
                st.values.pop(r, None)

    def call(self, st: State) -> None:
        """A call: caller-saved registers hold results and garbage, taken as public."""
        self.write(st, self.caller_saved, False)
        st.flags = False

    # ----------------------------------------------------------------- pointers
    @staticmethod
    def pointer(st: State, base: str, others: list[str], imm: int | None, sign: int = 1,
                commutative: bool = True) -> _Pointer:  # fmt: skip
        """What ``base + sign * (imm or others)`` is: read before the destination is written,
        since it may be one of the sources (``sub sp, sp, #32``)."""
        consts = [r for r in [base, *others] if r in st.consts]
        const = len(consts) == 1 and (commutative or consts[0] == base)
        if commutative and len(others) == 1 and base in st.values and others[0] in st.frame:
            base, others = others[0], [base]  # add a5, a5, s0: constant + frame address
        if imm is None and len(others) == 1 and others[0] in st.values:
            imm, others = st.values[others[0]], []  # sub sp, sp, x12 with x12 known
        if imm is None or others:
            return _Pointer(None, const)
        frame = st.frame[base] + sign * imm if base in st.frame else None
        value = st.values[base] + sign * imm if base in st.values else None
        return _Pointer(frame, const, value)

    @staticmethod
    def set_pointer(st: State, dst: str, p: _Pointer) -> None:
        """Record what the freshly written ``dst`` points to."""
        if not dst or dst in st.regs:
            return  # a secret value is no pointer we follow
        if p.frame is not None:
            st.frame[dst] = p.frame
        if p.const:
            st.consts.add(dst)
        if p.value is not None:
            st.values[dst] = p.value

    # ----------------------------------------------------------------- memory
    @staticmethod
    def loaded(st: State, base: str, index: list[str], offset: int, size: int | None) -> bool:
        """Whether a value loaded from ``base + offset`` (plus ``index`` registers) is secret.
        ``size`` None: unknown extent (a vector of ``vl`` elements)."""
        if base in st.frame and not index:
            lo, n = st.frame[base] + offset, size or _BIG
            return _secret_bytes(st).overlaps(lo, lo + n)
        # read-only data at a public address is a constant of the program; anything else is
        # the caller's memory
        return base not in st.consts or any(r in st.regs for r in index)

    @staticmethod
    def spilled(st: State, base: str, index: list[str], offset: int, size: int | None
                ) -> _Pointer | None:  # fmt: skip
        """The pointer a load from ``base + offset`` reloads, if its stack slot holds one
        (read before the destination is written: it may be the base)."""
        if base not in st.frame or index or size != 8:
            return None
        key = f"@slot{st.frame[base] + offset}"
        return _Pointer(st.frame.get(key), key in st.consts)

    @staticmethod
    def stored(st: State, base: str, index: list[str], offset: int, size: int | None,
               taint: bool, reg: str = "") -> None:  # fmt: skip
        """A store of ``reg`` (secret or not: ``taint``) to ``base + offset``: tracked when it
        is a stack slot at a known offset. A spilled pointer (to the stack or to read-only
        data) is remembered with its slot, since -O0 code reloads the pointers it uses."""
        if base not in st.frame or index:
            return
        lo = st.frame[base] + offset
        if size is not None and size <= 64:  # the slots it may overlap, by their offsets
            overlapped = [f"@slot{at}" for at in range(lo - 7, lo + size)]
        else:
            overlapped = [k for k in (*st.frame, *st.consts) if k.startswith("@slot")]
            overlapped = [k for k in overlapped if lo - 8 < int(k[5:]) < lo + (size or _BIG)]
        for key in overlapped:
            st.frame.pop(key, None)
            st.consts.discard(key)

        if size == 8 and reg and reg not in st.regs:
            if reg in st.frame:
                st.frame[f"@slot{lo}"] = st.frame[reg]
            if reg in st.consts:
                st.consts.add(f"@slot{lo}")
        if taint:
            _secret_bytes(st).add(lo, lo + (size or _BIG))
        elif size is not None:  # unknown extent: keep whatever it may not have overwritten
            _secret_bytes(st).remove(lo, lo + size)


# ------------------------------------------------------------------------- AArch64 model

_A64_REGS: dict[str, str] = {"sp": "sp", "wsp": "sp", "xzr": "", "wzr": "", "lr": "x30",
                             "fp": "x29"}  # fmt: skip
for _i in range(31):
    _A64_REGS[f"x{_i}"] = _A64_REGS[f"w{_i}"] = f"x{_i}"
for _i in range(32):
    for _p in "vqdshb":
        _A64_REGS[f"{_p}{_i}"] = f"v{_i}"
_A64_CALLER_SAVED = frozenset({f"x{i}" for i in range(19)} | {"x30"}
                              | {f"v{i}" for i in (*range(8), *range(16, 32))})  # fmt: skip
_A64_VIEW = {"x": 8, "w": 4, "q": 16, "d": 8, "s": 4, "h": 2, "b": 1}
_A64_ELEM = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}
_A64_NO_EFFECT = {"nop", "hint", "yield", "dmb", "dsb", "isb", "bti", "paciasp", "pacibsp",
                  "autiasp", "autibsp", "paciaz", "pacibz", "autiaz", "autibz", "xpaclri",
                  "clrex", "sev", "sevl", "wfe", "wfi", "csdb", "ssbb", "pssbb", "sb", "esb",
                  "b", "ret", "retaa", "retab", "eret", "brk", "hlt", "udf"}  # fmt: skip
_A64_COND_REG = {"cbz", "cbnz", "tbz", "tbnz"}
_A64_INDIRECT = {"br", "braa", "brab", "braaz", "brabz"}
_A64_CALLS = {"bl", "blr", "blraa", "blrab", "blraaz", "blrabz"}
_A64_DIV = {"sdiv", "udiv", "fdiv"}
_A64_CMP = {"cmp", "cmn", "tst", "fcmp", "fcmpe"}  # only set the flags
_A64_CCMP = {"ccmp", "ccmn", "fccmp", "fccmpe"}  # set the flags from the flags and operands
_A64_SETS_FLAGS = {"adds", "subs", "ands", "bics", "adcs", "sbcs", "negs", "ngcs"}
_A64_READS_FLAGS = {"csel", "csinc", "csinv", "csneg", "cset", "csetm", "cinc", "cinv", "cneg",
                    "fcsel", "adc", "adcs", "sbc", "sbcs", "ngc", "ngcs"}  # fmt: skip
# Instructions that also read their destination (accumulate, insert, keep the other half).
# Narrowing "...n2" forms (xtn2, shrn2, addhn2, fcvtn2...) keep the low half: matched apart.
_A64_RMW = {"mla", "mls", "fmla", "fmls", "fmlal", "fmlal2", "fmlsl", "fmlsl2", "bfmlalb",
            "bfmlalt", "smlal", "smlal2", "umlal", "umlal2", "smlsl", "smlsl2", "umlsl",
            "umlsl2", "sqdmlal", "sqdmlal2", "sqdmlsl", "sqdmlsl2", "sqrdmlah", "sqrdmlsh",
            "saba", "uaba", "sabal", "sabal2", "uabal", "uabal2", "sadalp", "uadalp", "ssra",
            "usra", "srsra", "ursra", "sli", "sri", "bsl", "bit", "bif", "ins", "movk", "tbx",
            "sdot", "udot", "usdot", "sudot", "bfdot", "bfmmla", "smmla", "ummla", "usmmla",
            "fcmla", "bfi", "bfxil", "bfm", "bfc", "aese", "aesd", "sha1c", "sha1p", "sha1m",
            "sha1su0", "sha1su1", "sha256h", "sha256h2", "sha256su0", "sha256su1", "sha512h",
            "sha512h2", "sha512su0", "sha512su1", "sm3partw1", "sm3partw2", "sm4e",
            "sm3tt1a", "sm3tt1b", "sm3tt2a", "sm3tt2b"}  # fmt: skip
_A64_ZEROING = {"eor", "sub", "bic", "subs"}  # op d, a, a is 0 whatever a is
_A64_ELEMENT = re.compile(r"^v\d+\.[bhsd]\[\d+\]$")  # one lane of a vector register
_A64_VREG = re.compile(r"v(\d+)\.(\d*)([bhsdq])")
_LSL = re.compile(r"lsl\s+#(\w+)")
_A64_LIST = re.compile(r"\{\s*(.*?)\s*\}(\[\d+\])?")  # {v0.8h, v1.8h} / {v0.h}[1]
_A64_SPREAD = re.compile(r"(ld|st)[1-4]r$|(ld|st)[234]$")


@dataclass(frozen=True)
class _A64Access:
    """The static part of an AArch64 load or store: its address and data registers."""

    base: str
    index: tuple[str, ...]
    flag: tuple[str, ...]  # the status register of a store-exclusive
    data: tuple[str, ...]
    lane: bool  # a single-lane access, which keeps the other lanes
    spread: bool  # each register covers the whole span (ld2-4, ldNr)
    offset: int  # of the first byte, from the base before the access
    total: int  # bytes of all data registers
    spans: tuple[tuple[str, int, int], ...]  # (register, offset, bytes)
    post_regs: tuple[str, ...] | None  # a post-index register, if any
    writeback: bool  # the base register is updated
    step: int  # by this immediate (when no post-index register)


_A64_GOT = {311, 312}  # R_AARCH64_ADR_GOT_PAGE, R_AARCH64_LD64_GOT_LO12_NC


class AArch64Model(_LoadStoreModel):
    """Taint transfer of AArch64 instructions with Advanced SIMD, in the syntax of GNU objdump
    or llvm-objdump (which differ only in immediates: ``#16`` against ``#0x10``)."""

    arch = "aarch64"
    objdumps = ("aarch64-linux-gnu-objdump", "llvm-objdump-19", "llvm-objdump")
    regnames = _A64_REGS
    caller_saved = _A64_CALLER_SAVED  # AAPCS64: x0-x18, lr, v0-v7, v16-v31
    comment = "//"

    def __init__(self) -> None:
        super().__init__()
        self._accesses: dict[tuple[str, str], _A64Access | None] = {}

    def flow(self, ins: Instr) -> Flow:
        mn = ins.mnemonic
        if mn == "b":
            return Flow.JUMP
        if mn.startswith(("b.", "bc.")) or mn in _A64_COND_REG:
            return Flow.COND
        if mn in _A64_INDIRECT:
            return Flow.INDIRECT
        if mn in ("ret", "retaa", "retab", "eret", "brk", "hlt", "udf"):
            return Flow.STOP
        return Flow.FALL

    def step(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        mn, ops = ins.mnemonic, ins.operands
        if mn.startswith(("b.", "bc.")):
            if st.flags:
                report.append((ins, "conditional branch on secret data"))
            return
        if mn in _A64_NO_EFFECT:
            return
        if mn.startswith((".", "<")):  # .inst, .word, <unknown>: reached, so code we can't read
            report.append((ins, "undecodable instruction"))
            return
        if mn in _A64_DIV:
            report.append((ins, "division instruction"))
        if mn in _A64_COND_REG:
            if ops and self.secret(st, self.regs(ops[0])):
                report.append((ins, "conditional branch on secret data"))
            return
        if mn in _A64_INDIRECT or mn in _A64_CALLS:
            if mn not in ("bl",) and ops and self.secret(st, self.regs(ops[0])):
                report.append((ins, "indirect branch on secret data"))
            if mn in _A64_CALLS:
                self.call(st)
            return
        if ("[" in ins.text and any(op.startswith("[") for op in ops)) or mn.startswith(
            ("ld", "prf")
        ):
            self._memory(ins, st, report)
            return
        if mn == "mrs" and len(ops) == 2:
            # NZCV and FPSR (its sticky saturation bit QC) may depend on data; others don't
            taint = st.flags if ops[1] == "nzcv" else ops[1] == "fpsr"
            self.write(st, self.regs(ops[0]), taint)
            return
        if mn == "msr":
            if ops and ops[0] == "nzcv":
                st.flags = self.secret(st, self.regs(ops[-1]))
            return
        if mn in _A64_CMP or mn in _A64_CCMP:
            every = self.secret(st, [r for op in ops for r in self.regs(op)])
            st.flags = every or (mn in _A64_CCMP and st.flags)
            return
        if not ops:
            return
        dst, srcs = ops[0], ops[1:]
        dregs = self.regs(dst)
        taint = self.secret(st, [r for op in srcs for r in self.regs(op)])
        if mn in _A64_READS_FLAGS:
            taint = taint or st.flags
        if mn in _A64_RMW or (mn.endswith("n2") and mn != "trn2") or _A64_ELEMENT.match(dst):
            taint = taint or self.secret(st, dregs)
        elif mn in _A64_ZEROING and len(srcs) == 2 and srcs[0] == srcs[1]:
            taint = False
        p = self._pointer(ins, st)
        self.write(st, dregs, taint)
        if mn in _A64_SETS_FLAGS:
            st.flags = taint
        if p is not None and dregs:
            self.set_pointer(st, dregs[0], p)

    def _pointer(self, ins: Instr, st: State) -> _Pointer | None:
        """Pointer arithmetic of ``adrp``/``adr``/``mov``/``add``/``sub`` on 64-bit registers."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in ("adrp", "adr"):
            r = ins.reloc  # none: a label of this (read-only) code section
            return _Pointer(None, r is None or r.readonly or r.type in _A64_GOT)
        if mn in ("mov", "movk") and len(ops) >= 2 and ops[1].startswith("#"):
            imm = _int(ops[1])  # mov x12, #0x52f0 / movk x12, #0x1, lsl #16
            shift = _int(m.group(1)) if len(ops) > 2 and (m := _LSL.fullmatch(ops[2])) else 0
            dst = (self.regs(ops[0]) or [""])[0]
            if mn == "mov":
                value: int | None = imm & (0xFFFFFFFF if ops[0].startswith("w") else -1)
            elif dst in st.values:
                value = st.values[dst] & ~(0xFFFF << shift) | imm << shift
            else:
                value = None
            return _Pointer(None, False, value)
        if mn not in ("mov", "add", "sub", "and") or not ops or not ops[0].startswith(("x", "sp")):
            return None
        srcs = [self.regs(op) for op in ops[1:]]
        if not srcs or not srcs[0] or not ops[1].startswith(("x", "sp")):
            return None
        if mn == "and":  # and sp, x9, #0xffffffffffffffc0: realignment
            aligning = len(ops) == 3 and ops[2].startswith("#") and _int(ops[2]) >= 1 << 63
            return self.pointer(st, srcs[0][0], [], _REALIGN) if aligning else None
        if mn == "mov":
            return self.pointer(st, srcs[0][0], [], 0) if len(ops) == 2 else None
        if len(ops) < 3:
            return None
        if ops[2].startswith("#"):  # add x0, x1, #0x1, lsl #12
            imm = _int(ops[2])
            if len(ops) > 3 and (m := _LSL.fullmatch(ops[3])):
                imm <<= _int(m.group(1))
            return self.pointer(st, srcs[0][0], [], imm, -1 if mn == "sub" else 1)
        return self.pointer(st, srcs[0][0], srcs[1], None, commutative=mn == "add")

    # ----------------------------------------------------------------- memory
    def _data(self, mn: str, ops: list[str]) -> tuple[list[tuple[str, int]], bool]:
        """(register, bytes) of each data register of a load/store, and whether it is a
        single-lane access (``ld1 {v0.h}[1], [x0]``, which keeps the other lanes)."""
        out: list[tuple[str, int]] = []
        lane = False
        suffix = {"b": 1, "h": 2, "sw": 4}
        fixed = next((n for s, n in suffix.items() if mn.endswith(s)), None)
        for op in ops:
            m = _A64_LIST.fullmatch(op)
            if m:
                lane = lane or m.group(2) is not None
                items = [x.strip() for x in m.group(1).split(",")]
                if len(items) == 1 and "-" in items[0]:  # GNU's {v0.8h-v3.8h}
                    a, b = (_A64_VREG.match(x.strip()) for x in items[0].split("-"))
                    if a is None or b is None:
                        continue
                    count = (int(b.group(1)) - int(a.group(1))) % 32 + 1
                    items = [f"v{(int(a.group(1)) + k) % 32}.{a.group(2)}{a.group(3)}"
                             for k in range(count)]  # fmt: skip
                for item in items:
                    v = _A64_VREG.fullmatch(item)
                    if v:
                        lanes = 1 if lane or not v.group(2) else int(v.group(2))
                        out.append((f"v{v.group(1)}", lanes * _A64_ELEM[v.group(3)]))
            elif self.is_reg(op):
                size = fixed if fixed and mn[2:3] and not mn[2].isdigit() else None
                if size is None:
                    size = 8 if op in ("sp", "xzr") else 4 if op in ("wsp", "wzr") else (
                        _A64_VIEW.get(op[0], 8))  # fmt: skip
                out.append((self.regnames[op], size))
        return out, lane

    def _access(self, ins: Instr) -> _A64Access | None:
        """What a load or store accesses, decoded once per instruction text; None for a
        PC-relative literal load."""
        key = (ins.mnemonic, ins.text)
        if key in self._accesses:
            return self._accesses[key]
        mn, ops = ins.mnemonic, ins.operands
        k = next((i for i, op in enumerate(ops) if op.startswith("[")), None)
        if k is None:
            self._accesses[key] = None
            return None
        parts = [p.strip() for p in ops[k].rstrip("!").strip("[] ").split(",")]
        base = (self.regs(parts[0]) or [""])[0]
        disp, index = 0, []
        for part in parts[1:]:
            if _NUMBER.fullmatch(part):
                disp = _int(part)
            else:
                index += self.regs(part)  # x2 / w2, sxtw #1 / lsl #3
        pre = ops[k].endswith("!")
        post = ops[k + 1] if len(ops) > k + 1 else None
        data = ops[:k]
        flag: tuple[str, ...] = ()
        if mn.startswith(("stxr", "stlxr", "stxp", "stlxp")) and data:
            flag, data = self.regs(data[0]), data[1:]  # a success flag, not data
        regs, lane = self._data(mn, data)
        offset = disp if pre or post is None else 0
        # ld2/ld3/ld4 interleave and ldNr replicates: each register covers the whole span
        spread = _A64_SPREAD.match(mn) is not None
        total = sum(n for _, n in regs)
        spans, lo = [], offset
        for r, n in regs:
            spans.append((r, offset, total) if spread else (r, lo, n))
            lo += n
        post_regs = None if post is None or _NUMBER.fullmatch(post) else self.regs(post)
        step = disp if pre else _int(post) if post is not None and post_regs is None else 0
        access = _A64Access(base, tuple(index), flag, tuple(r for r, _ in regs), lane, spread,
                            offset, total, tuple(spans), post_regs, pre or post is not None,
                            step)  # fmt: skip
        self._accesses[key] = access
        return access

    def _memory(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        mn = ins.mnemonic
        a = self._access(ins)
        if a is None:  # PC-relative literal: a constant of the program
            if mn.startswith("ld") and ins.operands:
                self.write(st, self.regs(ins.operands[0]), False)
            return
        base, index = a.base, a.index
        if base in st.regs or any(r in st.regs for r in index):
            report.append((ins, "memory address depends on secret data"))
        if a.flag:
            self.write(st, a.flag, False)
        if mn.startswith(("ld", "cas", "swp")):
            values = [self.loaded(st, base, index, o, n) for _, o, n in a.spans]
            pointers = [self.spilled(st, base, index, o, n) for _, o, n in a.spans]
            for (r, _, _), t in zip(a.spans, values, strict=True):
                self.write(st, (r,), t or (a.lane and r in st.regs))
            for (r, _, _), p in zip(a.spans, pointers, strict=True):
                if p is not None:
                    self.set_pointer(st, r, p)
        elif mn.startswith("st") and a.spread:  # interleaved: any secret lane taints it all
            self.stored(st, base, index, a.offset, a.total, self.secret(st, a.data))
        elif mn.startswith("st"):
            for r, o, n in a.spans:
                self.stored(st, base, index, o, n, r in st.regs, r)
        if a.post_regs is not None:  # [x0], x2: base += x2
            if self.secret(st, a.post_regs):
                st.regs.add(base)
            st.frame.pop(base, None)
        elif a.writeback and base in st.frame:
            st.frame[base] += a.step


# ------------------------------------------------------------------------- RISC-V model

_RV_X = ["", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", *(f"a{i}" for i in range(8)),
         *(f"s{i}" for i in range(2, 12)), "t3", "t4", "t5", "t6"]  # fmt: skip
_RV_F = [*(f"ft{i}" for i in range(8)), "fs0", "fs1", *(f"fa{i}" for i in range(8)),
         *(f"fs{i}" for i in range(2, 12)), *(f"ft{i}" for i in range(8, 12))]  # fmt: skip
_RV_REGS: dict[str, str] = {"zero": "", "fp": "s0"}
for _i in range(32):
    _RV_REGS[f"x{_i}"] = _RV_X[_i]
    _RV_REGS[f"f{_i}"] = _RV_F[_i]
    _RV_REGS[f"v{_i}"] = f"v{_i}"
_RV_REGS.update({r: r for r in _RV_X[1:] + _RV_F})
_RV_CALLER_SAVED = frozenset(
    {"ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "@vl"}
    | {f"a{i}" for i in range(8)}
    | {f"v{i}" for i in range(32)}
    | {f"ft{i}" for i in range(12)}
    | {f"fa{i}" for i in range(8)}
)
_RV_BRANCH = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez",
              "bltz", "bgtz", "bgt", "ble", "bgtu", "bleu"}  # fmt: skip
_RV_STOP = {"ret", "mret", "sret", "unimp", "ebreak"}
_RV_NO_EFFECT = {"nop", "fence", "fence.i", "fence.tso", "pause", "wfi", "j", "tail", *_RV_STOP}
_RV_DIV = {"div", "divu", "divw", "divuw", "rem", "remu", "remw", "remuw", "fdiv.s", "fdiv.d",
           "fdiv.h", "fdiv.q", "vdiv", "vdivu", "vrem", "vremu", "vfdiv", "vfrdiv"}  # fmt: skip
_RV_LOADS = {"lb": 1, "lbu": 1, "lh": 2, "lhu": 2, "lw": 4, "lwu": 4, "ld": 8, "flh": 2,
             "flw": 4, "fld": 8, "flq": 16}  # fmt: skip
_RV_STORES = {"sb": 1, "sh": 2, "sw": 4, "sd": 8, "fsh": 2, "fsw": 4, "fsd": 8, "fsq": 16}
_RV_MEM = re.compile(r"(-?(?:0x[0-9a-f]+|\d+))?\((\w+)\)")  # 0x10(a0), -8(s0), (a0)
# vle16.v vlse16.v vluxei16.v vloxei16.v vle16ff.v vlseg2e16.v vlsseg2e16.v vluxseg2ei16.v...
_RV_VMEM = re.compile(r"v([ls])(s|ux|ox)?(?:seg(\d))?e(i)?(\d+)(ff)?\.v")
_RV_VWHOLE = re.compile(r"v([ls])(\d)r(?:e\d+)?\.v")  # vl2re16.v, vs2r.v: whole registers
_RV_VMASK = re.compile(r"v([ls])m\.v")  # vlm.v, vsm.v: one mask register
_RV_CSR_SECRET = {"fflags", "fcsr", "vxsat", "vcsr"}  # accrued flags of data-dependent events
_RV_CALL_RELOCS = {18, 19}  # R_RISCV_CALL, R_RISCV_CALL_PLT: auipc + jalr
_RV_GOT = 20  # R_RISCV_GOT_HI20
# vtype as pseudo registers "may be": SEW, LMUL, tail/mask undisturbed
_LMULS = {"mf8": 0.125, "mf4": 0.25, "mf2": 0.5, "m1": 1.0, "m2": 2.0, "m4": 4.0, "m8": 8.0}
_SEWS = (8, 16, 32, 64)
_VTYPE_ANY = frozenset({"@tu", "@mu"} | {f"@e{s}" for s in _SEWS} | {f"@{m}" for m in _LMULS})
# vector instructions that also read their destination whatever the policy
_RV_RMW = ("vmacc", "vnmsac", "vmadd", "vnmsub", "vwmacc", "vfmacc", "vfnmacc", "vfmsac",
           "vfnmsac", "vfmadd", "vfnmadd", "vfmsub", "vfnmsub", "vfwmacc", "vfwnmacc",
           "vfwmsac", "vfwnmsac", "vslideup", "vcompress", "vqmacc", "vaes", "vsha2", "vsm3",
           "vsm4", "vghsh", "vgmul")  # fmt: skip
_RV_MASK_DST = {"vmseq", "vmsne", "vmslt", "vmsltu", "vmsle", "vmsleu", "vmsgt", "vmsgtu",
                "vmsge", "vmsgeu", "vmfeq", "vmfne", "vmflt", "vmfle", "vmfgt", "vmfge",
                "vmadc", "vmsbc", "vmand", "vmnand", "vmandn", "vmandnot", "vmxor", "vmor",
                "vmnor", "vmorn", "vmornot", "vmxnor", "vmsbf", "vmsif", "vmsof", "vmclr",
                "vmset", "vmmv", "vmnot"}  # fmt: skip
_RV_SCALAR_DST = {"vmv.x.s", "vfmv.f.s", "vcpop.m", "vpopc.m", "vfirst.m"}


class RiscV64Model(_LoadStoreModel):
    """Taint transfer of RV64GC instructions with the vector extension 1.0, in the syntax of
    llvm-objdump (GNU objdump's aliases, ``add a0,a1,-8``, are understood too).

    RVV register groups follow ``vtype``: SEW, LMUL and the tail/mask policies set by the last
    ``vsetvli`` are tracked as pseudo registers (each a "may be"), so a group write taints every
    register it may cover and clears only those it surely covers; under a tail- or
    mask-undisturbed policy an instruction also reads its destination. ``vl`` is secret when
    its AVL was; a vector memory access of secret length is a violation.
    """

    arch = "riscv64"
    objdumps = ("llvm-objdump-19", "llvm-objdump", "riscv64-linux-gnu-objdump")
    llvm_args = ("--mattr=+v",)
    regnames = _RV_REGS
    caller_saved = _RV_CALLER_SAVED  # LP64D: ra, t*, a*, ft*, fa*, every vector register

    def entry(self) -> State:
        return State(regs=set(_VTYPE_ANY), slots=ByteRanges(), frame={"sp": 0})

    def mnemonic(self, word: str) -> str:
        return word.lower().removeprefix("c.")

    def call(self, st: State) -> None:
        super().call(st)
        st.regs |= _VTYPE_ANY  # the callee may leave any vtype

    def _jalr(self, ins: Instr) -> tuple[str, str]:
        """(link register, target register) of ``jalr``/``jr``; "" is the zero register."""
        ops = ins.operands
        if ins.mnemonic == "jr" or len(ops) == 1:
            return ("" if ins.mnemonic == "jr" else "ra"), (self.regs(ops[0]) or [""])[0]
        return (self.regs(ops[0]) or [""])[0], (self.regs(ops[1]) or [""])[0]

    def finish(self, code: list[Instr]) -> None:
        super().finish(code)
        # auipc rX + jalr rX carrying a call relocation: a call, or with no link a tail call
        for a, b in pairwise(code):
            r = a.reloc
            if a.mnemonic != "auipc" or r is None or r.type not in _RV_CALL_RELOCS:
                continue
            rd = self.regs(a.operands[0]) if a.operands else []
            if rd and b.mnemonic in ("jr", "jalr") and self._jalr(b)[1] == rd[0]:
                if self._jalr(b)[0]:
                    b.mnemonic = "call"
                else:
                    b.mnemonic, b.target = "tail", (r.value if r.local else None)

    def flow(self, ins: Instr) -> Flow:
        mn = ins.mnemonic
        if mn in _RV_BRANCH:
            return Flow.COND
        if mn in ("j", "tail"):
            return Flow.JUMP
        if mn == "jal":  # jal target (link ra), jal rd, target
            link = self.regs(ins.operands[0]) if len(ins.operands) > 1 else ["ra"]
            return Flow.FALL if link else Flow.JUMP
        if mn in ("jr", "jalr"):
            return Flow.INDIRECT if not self._jalr(ins)[0] else Flow.FALL
        if mn in _RV_STOP:
            return Flow.STOP
        return Flow.FALL

    # ----------------------------------------------------------------- vtype
    @staticmethod
    def _group(st: State, eew: int | None = None, widen: int = 1) -> tuple[int, int]:
        """(fewest, most) registers in a group of EMUL = (EEW/SEW or 1) x LMUL x widen over
        every vtype the state allows."""
        sews = [s for s in _SEWS if f"@e{s}" in st.regs] or list(_SEWS)
        lmuls = [v for m, v in _LMULS.items() if f"@{m}" in st.regs] or list(_LMULS.values())
        counts = [max(1, int((eew / s if eew else 1) * lm * widen)) for s in sews for lm in lmuls]
        return min(counts), min(8, max(counts))

    @staticmethod
    def _vregs(reg: str, n: int) -> list[str]:
        """The registers of a group of ``n`` starting at ``reg``."""
        if not reg.startswith("v"):
            return [reg]
        k = int(reg[1:])
        return [f"v{j}" for j in range(k, min(32, k + n))]

    def _vset(self, ins: Instr, st: State) -> None:
        mn, ops = ins.mnemonic, ins.operands
        rd = self.regs(ops[0]) if ops else []
        if mn == "vsetivli":
            vl = False
        elif len(ops) > 1 and not self.regs(ops[1]):  # AVL x0: VLMAX, or keep vl if rd is x0
            vl = "@vl" in st.regs and not rd
        else:
            vl = self.secret(st, self.regs(ops[1]) if len(ops) > 1 else [])
        st.regs -= _VTYPE_ANY
        if mn == "vsetvl":  # vtype from a register: anything
            vl = vl or self.secret(st, self.regs(ops[2]) if len(ops) > 2 else [])
            st.regs |= _VTYPE_ANY
        else:
            fields = set(ops[2:])
            st.regs |= {f"@{f}" for f in fields if f in _LMULS or re.fullmatch(r"e\d+", f)}
            st.regs |= {"@tu"} if "ta" not in fields else set()  # default: undisturbed
            st.regs |= {"@mu"} if "ma" not in fields else set()
        (st.regs.add if vl else st.regs.discard)("@vl")
        self.write(st, rd, vl)

    # ----------------------------------------------------------------- transfer
    def step(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        mn, ops = ins.mnemonic, ins.operands
        if mn in _RV_NO_EFFECT:
            return
        if mn.startswith((".", "<")):  # .insn, <unknown>: reached, so code we can't read
            report.append((ins, "undecodable instruction"))
            return
        if mn in _RV_DIV or mn.split(".")[0] in _RV_DIV:
            report.append((ins, "division instruction"))
        if mn in _RV_BRANCH:
            if self.secret(st, [r for op in ops[:-1] for r in self.regs(op)]):
                report.append((ins, "conditional branch on secret data"))
            return
        if mn in ("jal", "call"):
            if mn == "call" or self.flow(ins) is Flow.FALL:
                self.call(st)
            return
        if mn in ("jr", "jalr"):
            link, target = self._jalr(ins)
            if target in st.regs:
                report.append((ins, "indirect branch on secret data"))
            if link:
                self.call(st)
            return
        if mn in ("vsetvli", "vsetivli", "vsetvl"):
            self._vset(ins, st)
            return
        if _RV_VMEM.fullmatch(mn) or _RV_VWHOLE.fullmatch(mn) or _RV_VMASK.fullmatch(mn):
            self._vmemory(ins, st, report)
            return
        if any(_RV_MEM.fullmatch(op) for op in ops):
            self._memory(ins, st, report)
            return
        if mn.startswith(("csr", "fr", "fs", "rd")) and self._csr(ins, st):
            return
        if mn.startswith("v"):
            self._vector(ins, st)
            return
        if not ops:
            return
        dst, srcs = ops[0], ops[1:]
        taint = self.secret(st, [r for op in srcs for r in self.regs(op)])
        if mn in ("xor", "sub", "subw") and len(srcs) == 2 and srcs[0] == srcs[1]:
            taint = False
        p = self._pointer(ins, st)
        dregs = self.regs(dst)
        self.write(st, dregs, taint)
        if p is not None and dregs:
            self.set_pointer(st, dregs[0], p)

    def _pointer(self, ins: Instr, st: State) -> _Pointer | None:
        """Pointer arithmetic: ``auipc``/``lui`` of a symbol, ``mv``, ``addi``, ``add``, ``sub``."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in ("auipc", "lui"):
            r = ins.reloc
            value = _sext32(_int(ops[1]) << 12) if mn == "lui" and r is None else None
            return _Pointer(None, r is not None and (r.readonly or r.type == _RV_GOT), value)
        if mn == "li" and len(ops) == 2:
            return _Pointer(None, False, _int(ops[1]))
        srcs = [self.regs(op) if self.is_reg(op) else None for op in ops[1:]]
        if mn == "mul" and len(srcs) == 2 and srcs[0] and srcs[1]:  # vlenb * spilled groups
            x, y = st.values.get(srcs[0][0]), st.values.get(srcs[1][0])
            return _Pointer(None, False, None if x is None or y is None else x * y)
        if mn == "slli" and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            x = st.values.get(srcs[0][0])
            return _Pointer(None, False, None if x is None else x << _int(ops[2]))
        if mn in ("addiw", "addw") and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            value = st.values.get(srcs[0][0])  # lui a1, 0x13; addiw a1, a1, 0x6c0
            return _Pointer(None, False, None if value is None else _sext32(value + _int(ops[2])))
        if mn == "mv" and len(srcs) == 1 and srcs[0]:
            return self.pointer(st, srcs[0][0], [], 0)
        if mn in ("andi", "and") and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            # andi sp, sp, -0x40: realignment
            return self.pointer(st, srcs[0][0], [], _REALIGN) if _int(ops[2]) < 0 else None
        if mn not in ("addi", "add", "sub") or len(srcs) != 2 or not srcs[0]:
            return None
        if srcs[1] is None:  # addi, or GNU's add with an immediate
            return self.pointer(st, srcs[0][0], [], _int(ops[2]) * (-1 if mn == "sub" else 1))
        return self.pointer(st, srcs[0][0], srcs[1], None, commutative=mn == "add")

    def _csr(self, ins: Instr, st: State) -> bool:
        """Reads of control and status registers; False when ``ins`` is no such read."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in ("frflags", "frcsr", "fsflags", "fscsr"):
            csr = "fflags"
        elif mn in ("frrm", "fsrm", "rdcycle", "rdtime", "rdinstret"):
            csr = "frm"
        elif mn in ("csrr", "csrrw", "csrrs", "csrrc", "csrrwi", "csrrsi", "csrrci"):
            csr = ops[1] if len(ops) > 1 else ""
        else:  # a write of a CSR only (nothing to do), or no CSR access
            return mn in ("csrw", "csrs", "csrc", "csrwi", "csrsi", "csrci")
        taint = "@vl" in st.regs if csr == "vl" else csr in _RV_CSR_SECRET
        if ops:
            self.write(st, self.regs(ops[0]), taint)
            if csr == "vlenb" and self.regs(ops[0]):
                self.set_pointer(st, self.regs(ops[0])[0], _Pointer(None, False, _VLENB))
        return True

    def _memory(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Scalar loads, stores and atomics: ``lh a0, 0x10(a1)``, ``amoadd.w a0, a1, (a2)``."""
        mn, ops = ins.mnemonic, ins.operands
        k = next(i for i, op in enumerate(ops) if _RV_MEM.fullmatch(op))
        m = _RV_MEM.fullmatch(ops[k])
        assert m is not None
        base, disp = (self.regs(m.group(2)) or [""])[0], _int(m.group(1) or "0")
        if base in st.regs:
            report.append((ins, "memory address depends on secret data"))
        width = mn.split(".")[1] if "." in mn else ""
        size = {"b": 1, "h": 2, "w": 4, "d": 8}.get(width)
        if mn in _RV_LOADS or mn.startswith("lr."):
            n = _RV_LOADS.get(mn, size)
            taint, p = self.loaded(st, base, [], disp, n), self.spilled(st, base, [], disp, n)
            dst = self.regs(ops[0])
            self.write(st, dst, taint)
            if p is not None and dst:
                self.set_pointer(st, dst[0], p)
        elif mn in _RV_STORES:
            src = self.regs(ops[0])
            self.stored(st, base, [], disp, _RV_STORES[mn], self.secret(st, src), *src[:1])
        elif mn.startswith("sc."):  # sc.w rd, rs2, (rs1): rd is a success flag
            self.stored(st, base, [], disp, size, self.secret(st, self.regs(ops[1])))
            self.write(st, self.regs(ops[0]), False)
        elif mn.startswith("amo"):  # rd <- old memory; memory <- f(old, rs2)
            old = self.loaded(st, base, [], disp, size)
            self.stored(st, base, [], disp, size, old or self.secret(st, self.regs(ops[1])))
            self.write(st, self.regs(ops[0]), old)
        elif k > 0 and not mn.startswith("prefetch"):  # anything else: a load into ops[0]
            self.write(st, self.regs(ops[0]), True)

    def _vmemory(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Vector loads and stores: unit-stride, strided (a stride register), indexed (an index
        vector), segment, whole-register and mask forms; ``v0.t`` masks which are accessed."""
        mn = ins.mnemonic
        masked = "v0.t" in ins.operands
        ops = [op for op in ins.operands if op != "v0.t"]
        m = _RV_MEM.fullmatch(ops[1]) if len(ops) > 1 else None
        base = (self.regs(m.group(2)) or [""])[0] if m else ""
        unit = _RV_VMEM.fullmatch(mn)
        whole = _RV_VWHOLE.fullmatch(mn)
        index: list[str] = []
        if whole:  # whole registers: no vtype, no vl
            load, lo, hi = whole.group(1) == "l", int(whole.group(2)), int(whole.group(2))
        elif unit is None:  # vlm.v / vsm.v
            load, lo, hi = mn.startswith("vl"), 1, 1
        else:
            load, nf = unit.group(1) == "l", int(unit.group(3) or 1)
            eew = int(unit.group(5))
            indexed = unit.group(2) in ("ux", "ox")
            lo, hi = self._group(st, None if indexed else eew)
            lo, hi = lo * nf, min(8, hi * nf)
            extra = self.regs(ops[2]) if len(ops) > 2 else []  # stride or index vector
            index = self._vregs(extra[0], self._group(st, eew)[1]) if indexed and extra else extra
        data = self.regs(ops[0])[0] if ops and self.regs(ops[0]) else "v0"
        address = [base, *index] + (["v0"] if masked else [])
        if self.secret(st, address) or ("@vl" in st.regs and not whole):
            report.append((ins, "memory address depends on secret data"))
        extent = hi * _VLENB if whole else None
        if load:
            taint = self.loaded(st, base, index, 0, extent)
            if not whole and ("@tu" in st.regs or (masked and "@mu" in st.regs)):
                taint = taint or self.secret(st, self._vregs(data, hi))
            if taint:
                self.write(st, self._vregs(data, hi), True)
            else:
                self.write(st, self._vregs(data, lo), False)
        else:
            self.stored(st, base, index, 0, extent, self.secret(st, self._vregs(data, hi)))

    def _vector(self, ins: Instr, st: State) -> None:
        """Vector arithmetic, moves, compares, reductions, permutations."""
        mn = ins.mnemonic
        masked = "v0.t" in ins.operands
        ops = [op for op in ins.operands if op != "v0.t"]
        if not ops:
            return
        base, _, suffix = mn.partition(".")
        dst, srcs = ops[0], ops[1:]
        # masks (.mm, .m) and vmv.x.s's element 0 are one register whatever LMUL is
        single = suffix in ("mm", "m") or mn in ("vmv.x.s", "vfmv.f.s")
        lo, hi = self._group(st)
        wide_lo, wide_hi = self._group(st, None, 2)
        reads: list[str] = []
        for i, op in enumerate(srcs):
            for r in self.regs(op):
                if not r.startswith("v"):
                    reads.append(r)
                elif single or (suffix.endswith("m") and i == len(srcs) - 1 and r == "v0"):
                    reads.append(r)  # a mask: one register
                elif "red" in base and i == len(srcs) - 1:
                    reads.append(r)  # reduction's scalar operand vs1[0]
                elif base == "vrgatherei16" and i == len(srcs) - 1:
                    reads += self._vregs(r, self._group(st, 16)[1])
                elif i == 0 and (suffix.startswith("w") or suffix.endswith(".w")):
                    reads += self._vregs(r, wide_hi)  # a double-width source
                else:
                    reads += self._vregs(r, hi)
        taint = self.secret(st, reads) or (masked and "v0" in st.regs)
        if mn in _RV_SCALAR_DST:
            self.write(st, self.regs(dst), taint)
            return
        whole = re.fullmatch(r"vmv(\d)r", base)
        if whole:  # vmv2r.v v8, v10: register by register
            n = int(whole.group(1))
            pairs = zip(self._vregs(dst, n), self._vregs(srcs[0], n), strict=False)
            for d, s in list(pairs):
                self.write(st, [d], s in st.regs)
            return
        if base in _RV_MASK_DST or "red" in base:
            lo = hi = 1  # a mask, or the single element a reduction writes
        elif base.startswith(("vw", "vfw")):
            lo, hi = wide_lo, wide_hi  # widening
        d = self.regs(dst)
        if not d:
            return
        tail = "@tu" in st.regs and base not in _RV_MASK_DST  # mask tails are always agnostic
        if base.startswith(_RV_RMW) or tail or (masked and "@mu" in st.regs):
            taint = taint or self.secret(st, self._vregs(d[0], hi))
        elif base in ("vxor", "vsub") and len(srcs) == 2 and srcs[0] == srcs[1]:
            taint = False
        if taint:
            self.write(st, self._vregs(d[0], hi), True)
        else:
            self.write(st, self._vregs(d[0], lo), False)


ARCHES: dict[str, type[Model]] = {
    "x86_64": X86Model,
    "aarch64": AArch64Model,
    "riscv64": RiscV64Model,
}


# ------------------------------------------------------------------------- ELF relocations

_SHT_RELA = 4
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 1, 2, 4

Relocations = dict[tuple[str, int], Reloc]  # (section name, offset) -> relocation there
CodeRefs = set[tuple[str, int]]  # (section name, offset) of code that data points to


def relocations(obj: Path) -> tuple[Relocations, CodeRefs]:
    """The first relocation at each (section name, offset) of a 64-bit ELF relocatable object,
    and the code addresses its loaded data refers to (jump tables); empty for anything else.

    objdump prints an unrelocated branch of a RISC-V object as a branch to itself, and the
    local symbols it relocates against all read ``.L0``: only the symbol table says where they
    point. RISC-V jump tables hold label differences left to the linker, so their targets show
    up here too."""
    try:
        data = obj.read_bytes()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return {}, set()
        e = "<" if data[5] == 1 else ">"
        shoff = struct.unpack_from(e + "Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3A)
        # sh_name sh_type sh_flags sh_addr sh_offset sh_size sh_link sh_info ...
        secs = [struct.unpack_from(e + "IIQQQQII", data, shoff + i * shentsize)
                for i in range(shnum)]  # fmt: skip

        def cstr(at: int) -> str:
            return data[at : data.index(b"\0", at)].decode(errors="replace")

        names = [cstr(secs[shstrndx][4] + s[0]) for s in secs]
        out: Relocations = {}
        refs: CodeRefs = set()
        for sec in secs:
            if sec[1] != _SHT_RELA or not 0 < sec[7] < shnum:
                continue
            symtab = secs[sec[6]]
            strtab = secs[symtab[6]]
            for k in range(sec[5] // 24):
                offset, info, addend = struct.unpack_from(e + "QQq", data, sec[4] + 24 * k)
                key = (names[sec[7]], offset)
                if key in out:  # R_RISCV_RELAX and friends follow the relocation proper
                    continue
                st_name, _, _, shndx, value = struct.unpack_from(
                    e + "IBBHQ", data, symtab[4] + 24 * (info >> 32)
                )
                defined = 0 < shndx < shnum
                flags = secs[shndx][2] if defined else 0
                symbol = cstr(strtab[4] + st_name) or (names[shndx] if defined else "")
                readonly = bool(flags & _SHF_ALLOC) and not flags & _SHF_WRITE
                out[key] = Reloc(info & 0xFFFFFFFF, symbol, defined and shndx == sec[7],
                                 readonly, value + addend)  # fmt: skip
                applied = secs[sec[7]][2]
                if (
                    flags & _SHF_EXECINSTR
                    and applied & _SHF_ALLOC
                    and not (applied & _SHF_EXECINSTR)
                ):
                    refs.add((names[shndx], value + addend))  # code address held in data
        return out, refs
    except (OSError, struct.error, ValueError, IndexError):
        return {}, set()


# ------------------------------------------------------------------------- driver

_SECTION = re.compile(r"^Disassembly of section (\S+?):?$")


def disassemble(obj: Path, model: Model, objdump: str | None = None) -> dict[str, list[Instr]]:
    """Instructions of every function in an object file, by function name. ``objdump`` picks
    the disassembler (default: the model's preferred one that is installed)."""
    out = subprocess.run(
        [*model.objdump_command(objdump), str(obj)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    relocs, refs = relocations(obj)
    funcs: dict[str, list[Instr]] = {}
    cur: list[Instr] | None = None
    section = ""
    for line in out.splitlines():
        if not line[:1].isspace():  # headers and labels start in column 0, instructions not
            s = _SECTION.match(line.strip())
            if s:
                section, cur = s.group(1), None
                continue
            f = _FUNC.match(line.strip())
            if f:
                if f.group(1).startswith(".L") and cur is not None:
                    continue  # a local label inside the function (kept for RISC-V relaxation)
                cur = funcs.setdefault(f.group(1), [])
                continue
        if cur is not None:
            ins = model.parse(line)
            if ins is not None:
                ins.reloc = relocs.get((section, ins.address))
                ins.taken = (section, ins.address) in refs
                cur.append(ins)
    for code in funcs.values():
        model.finish(code)
    return funcs


def _indirect_targets(code: list[Instr], model: Model, index: dict[int, int]) -> list[int]:
    """Where an indirect jump (a jump table) may lead: the instructions of the function whose
    address the object's data holds (RISC-V tables carry relocations), or, when there are none
    (AArch64 tables are resolved by the assembler), anywhere but the function's entry block: a
    case label is never in the straight-line code that runs before the dispatch, and sending the
    state there would run the prologue again and lose the frame."""
    taken = [j for j, ins in enumerate(code) if ins.taken and j > 0]
    if taken:
        return taken
    targets = {index[ins.target] for ins in code if ins.target in index}
    start = 0
    while start < len(code) and (start == 0 or start not in targets):
        start += 1
        if model.flow(code[start - 1]) is not Flow.FALL:
            break
    return list(range(start, len(code)))


def _successors(code: list[Instr], model: Model, index: dict[int, int], flows: list[Flow]
                ) -> list[list[int]]:  # fmt: skip
    """Where control may go after each instruction (whose :class:`Flow` is ``flows``), as
    instruction indices."""
    out: list[list[int]] = []
    indirect: list[int] | None = None
    for i, ins in enumerate(code):
        kind = flows[i]
        succ: list[int] = []
        if kind in (Flow.COND, Flow.JUMP) and ins.target is not None and ins.target in index:
            succ.append(index[ins.target])
        if kind in (Flow.FALL, Flow.COND) and i + 1 < len(code):
            succ.append(i + 1)
        if kind is Flow.INDIRECT:
            if indirect is None:
                indirect = _indirect_targets(code, model, index)
            succ = indirect
        out.append(succ)
    return out


def _blocks(code: list[Instr], flows: list[Flow], successors: list[list[int]]) -> dict[int, int]:
    """The basic blocks: first instruction -> one past the last. A block starts at the entry,
    at every branch target and after every instruction that does not simply fall through."""
    leaders = {0}
    for i, flow in enumerate(flows):
        if flow is not Flow.FALL:
            leaders.update(successors[i])
            leaders.add(i + 1)
    starts = sorted(x for x in leaders if x < len(code))
    return dict(zip(starts, [*starts[1:], len(code)], strict=True))


def check_function(name: str, code: list[Instr], model: Model) -> list[Violation]:
    """Run the taint analysis of one function to a fixpoint; return its violations. States are
    kept at the entries of basic blocks only: inside a block each instruction's state follows
    from the one before it, so stepping through the block from its entry state is the same
    analysis at a fraction of the copies."""
    if not code:
        return []
    index = {ins.address: i for i, ins in enumerate(code)}
    flows = [model.flow(ins) for ins in code]
    successors = _successors(code, model, index, flows)
    blocks = _blocks(code, flows, successors)
    states: dict[int, State] = {0: model.entry()}
    # pending blocks, lowest address first: a loop's body is walked once per change of its
    # header's state instead of once per path that reaches it
    work = [0]
    pending = {0}
    found: dict[tuple[int, str], Violation] = {}
    while work:
        first = heapq.heappop(work)
        pending.discard(first)
        cur = states[first].copy()
        last = blocks[first] - 1
        for ins in code[first : last + 1]:
            report: list[tuple[Instr, str]] = []
            model.step(ins, cur, report)
            for bad, why in report:
                found[(bad.address, why)] = Violation(name, bad.address, bad.text, why)
        for j in successors[last]:
            sj = states.get(j)
            if sj is None:
                states[j] = cur.copy()
            elif not sj.join(cur):
                continue
            if j not in pending:
                pending.add(j)
                heapq.heappush(work, j)
    return sorted(found.values(), key=lambda v: v.address)


def check_object(
    obj: Path,
    arch: str = "x86_64",
    functions: Iterable[str] | None = None,
    objdump: str | None = None,
) -> list[Violation]:
    """Check every function (or the named ones) of a compiled object file for ``arch`` (a key
    of :data:`ARCHES`); ``objdump`` overrides the disassembler. Returns the violations found,
    by function and address."""
    model = ARCHES[arch]()
    funcs = disassemble(obj, model, objdump)
    names = list(functions) if functions is not None else list(funcs)
    out: list[Violation] = []
    for name in names:
        if name not in funcs:
            raise KeyError(f"{obj} has no function {name}")
        out += check_function(name, funcs[name], model)
    return out
