"""What every architecture model of the constant-time checker shares: the instruction and
its relocation, the taint state at a program point, where control goes, the model interface."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..byte_ranges import ByteRanges


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


_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")

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


def split_operands(text: str) -> tuple[str, ...]:
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
