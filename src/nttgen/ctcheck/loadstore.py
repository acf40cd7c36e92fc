"""What the AArch64 and RISC-V models of the constant-time checker share: one load/store
discipline, so one tracking of stack slots, of pointers into read-only data and of calls."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, cast

from ..byte_ranges import ByteRanges
from .model import Decoded, Flow, Instr, Model, State, split_operands

BIG = 1 << 16  # bytes a vector access of unknown length may cover (VLEN <= 65536 bits x 8)
# RVV's vlenb (VLEN in bytes) is public but unknown: register-spill areas of vector functions
# are allocated in multiples of it. It stands as one symbolic constant, larger than BIG, so
# slots vlenb apart never overlap.
VLENB = 1 << 20
# A stack pointer realigned by masking (over-aligned locals) sits at an unknown distance below
# the old one: its slots are given a region of their own, this far below the entry frame.
REALIGN = -(1 << 40)
_TOKEN = re.compile(r"(?<![\w.])[a-z][a-z0-9]*")  # a register-like word, not "x10" in "#0x10"
_SYMBOLIC = re.compile(r"\s*<[^>]*>")  # " <f+0x18>"
_ANNOTATION = re.compile(r"(?<![\w.])(?:0x)?([0-9a-f]+)\s+<[^>]*>")  # "18 <f+0x18>"
NUMBER = re.compile(r"#?-?(?:0x[0-9a-f]+|\d+)")


def parse_int(text: str) -> int:
    """An immediate as objdump prints it: ``#0x10``, ``#-32``, ``16``, ``-0x2``."""
    return int(text.strip().lstrip("#"), 0)


def sext32(v: int) -> int:
    """The 64-bit value of a 32-bit result (RV64 ``lui``, ``addiw``)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def secret_bytes(st: State) -> ByteRanges:
    """The secret stack bytes of a load/store machine's state (offsets from the entry stack
    pointer): the only kind of slot those models store."""
    return cast(ByteRanges, st.slots)


@dataclass(frozen=True)
class Pointer:
    """What a register written by pointer arithmetic is known to hold (before the write)."""

    frame: int | None  # entry stack pointer + this, when known
    const: bool  # an address into read-only data
    value: int | None = None  # a known constant (not an address)


class LoadStoreModel(Model):
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
        return self.mnemonic(words[0]), split_operands(rest), body, target

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
                commutative: bool = True) -> Pointer:  # fmt: skip
        """What ``base + sign * (imm or others)`` is: read before the destination is written,
        since it may be one of the sources (``sub sp, sp, #32``)."""
        consts = [r for r in [base, *others] if r in st.consts]
        const = len(consts) == 1 and (commutative or consts[0] == base)
        if commutative and len(others) == 1 and base in st.values and others[0] in st.frame:
            base, others = others[0], [base]  # add a5, a5, s0: constant + frame address
        if imm is None and len(others) == 1 and others[0] in st.values:
            imm, others = st.values[others[0]], []  # sub sp, sp, x12 with x12 known
        if imm is None or others:
            return Pointer(None, const)
        frame = st.frame[base] + sign * imm if base in st.frame else None
        value = st.values[base] + sign * imm if base in st.values else None
        return Pointer(frame, const, value)

    @staticmethod
    def set_pointer(st: State, dst: str, p: Pointer) -> None:
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
            lo, n = st.frame[base] + offset, size or BIG
            return secret_bytes(st).overlaps(lo, lo + n)
        # read-only data at a public address is a constant of the program; anything else is
        # the caller's memory
        return base not in st.consts or any(r in st.regs for r in index)

    @staticmethod
    def spilled(st: State, base: str, index: list[str], offset: int, size: int | None
                ) -> Pointer | None:  # fmt: skip
        """The pointer a load from ``base + offset`` reloads, if its stack slot holds one
        (read before the destination is written: it may be the base)."""
        if base not in st.frame or index or size != 8:
            return None
        key = f"@slot{st.frame[base] + offset}"
        return Pointer(st.frame.get(key), key in st.consts)

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
            overlapped = [k for k in overlapped if lo - 8 < int(k[5:]) < lo + (size or BIG)]
        for key in overlapped:
            st.frame.pop(key, None)
            st.consts.discard(key)

        if size == 8 and reg and reg not in st.regs:
            if reg in st.frame:
                st.frame[f"@slot{lo}"] = st.frame[reg]
            if reg in st.consts:
                st.consts.add(f"@slot{lo}")
        if taint:
            secret_bytes(st).add(lo, lo + (size or BIG))
        elif size is not None:  # unknown extent: keep whatever it may not have overwritten
            secret_bytes(st).remove(lo, lo + size)
