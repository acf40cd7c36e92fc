"""Static constant-time check of compiled kernels: a taint analysis over the disassembly.

What it proves about each function of an object file, for all inputs: no conditional branch
depends on data loaded from the caller's arrays, no memory address is computed from such data,
and no division instruction appears at all. What the compiler did is what is checked, at every
optimisation level, so a compiler that turned a sign mask into a branch would be caught.

The model (x86-64 System V; other architectures are added to :data:`ARCHES`):

* On entry every register is public (pointers, sizes, garbage); a value loaded from memory is
  secret unless it comes from a RIP-relative constant or from a stack slot that holds a public
  value (spills of counters and pointers are tracked per slot).
* An instruction's destination becomes secret when any source is (the destination counts as a
  source unless the instruction only writes it); zeroing idioms (``xor r, r``) clear it; flags
  are secret when the flag-setting instruction read anything secret.
* Violations: a conditional jump while the flags are secret; a memory operand whose base or
  index register is secret; any ``div``/``idiv``. ``cmov``/``setcc`` on secret flags are fine
  (they do not branch).

The analysis runs to a fixpoint over the function's control-flow graph, so loops are covered.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Instr:
    """One disassembled instruction."""

    address: int
    mnemonic: str
    operands: list[str]
    text: str
    target: int | None = None


@dataclass
class State:
    """Taint of registers, stack slots and flags at one program point."""

    regs: set[str] = field(default_factory=set)
    slots: set[tuple[str, int]] = field(default_factory=set)
    flags: bool = False

    def copy(self) -> State:
        return State(set(self.regs), set(self.slots), self.flags)

    def join(self, other: State) -> bool:
        """Union in place; return whether anything changed."""
        before = (len(self.regs), len(self.slots), self.flags)
        self.regs |= other.regs
        self.slots |= other.slots
        self.flags = self.flags or other.flags
        return before != (len(self.regs), len(self.slots), self.flags)


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


def _split_operands(text: str) -> list[str]:
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
    return out


def _regs_in(text: str) -> set[str]:
    return {_REG[t] for t in re.findall(r"[a-z][a-z0-9]*", text) if t in _REG}


class X86Model:
    """Taint transfer of x86-64 instructions (Intel syntax, as ``objdump -M intel`` prints)."""

    arch = "x86_64"
    objdump_args = ("-M", "intel")

    @staticmethod
    def parse(line: str) -> Instr | None:
        m = _LINE.match(line)
        if not m:
            return None
        address = int(m.group(1), 16)
        body = m.group(2).split("#")[0].strip()
        if not body or body.startswith("(bad)"):
            return None
        words = body.split(None, 1)
        while words and words[0] in _PREFIXES:
            body = words[1] if len(words) > 1 else ""
            words = body.split(None, 1)
        if not words:
            return None
        mnemonic = words[0]
        ops = _split_operands(words[1]) if len(words) > 1 else []
        target = None
        if mnemonic.startswith("j") and ops:
            t = _TARGET.match(ops[0])
            if t:
                target = int(t.group(1), 16)
        return Instr(address, mnemonic, ops, body, target)

    # ----------------------------------------------------------------- operands
    @staticmethod
    def _memory(op: str) -> tuple[set[str], tuple[str, int] | None, bool] | None:
        """(address registers, stack slot or None, RIP-relative) of a memory operand."""
        m = _MEM.search(op)
        if not m:
            return None
        inner = m.group(1).replace(" ", "")
        regs = _regs_in(inner.replace("*", " "))
        if "rip" in inner:
            return set(), None, True
        slot = None
        base = re.fullmatch(r"(rsp|rbp)(?:([+-])0x([0-9a-f]+))?", inner)
        if base:
            disp = int(base.group(3), 16) if base.group(3) else 0
            slot = (base.group(1), -disp if base.group(2) == "-" else disp)
        return regs - {"rsp", "rbp"} if slot else regs, slot, False

    def _read(self, op: str, st: State) -> bool:
        mem = self._memory(op)
        if mem is None:
            return bool(_regs_in(re.sub(r"\{[^}]*\}", "", op)) & st.regs)
        _, slot, rip = mem
        if rip:
            return False
        if slot is not None:
            return slot in st.slots
        return True  # data from the caller's memory

    def _write(self, op: str, taint: bool, st: State) -> None:
        mem = self._memory(op)
        if mem is not None:
            _, slot, _ = mem
            if slot is not None:
                (st.slots.add if taint else st.slots.discard)(slot)
            return
        for r in _regs_in(re.sub(r"\{[^}]*\}", "", op)):
            (st.regs.add if taint else st.regs.discard)(r)

    # ----------------------------------------------------------------- transfer
    def step(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Apply one instruction to ``st`` (in place), reporting violations."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in _NO_EFFECT or mn.startswith("nop"):
            return  # includes multi-byte nops, whose memory operand is never accessed
        if mn == "lea" and len(ops) == 2:
            # address arithmetic, no memory access: the result is as secret as its registers
            mem = self._memory(ops[1])
            regs = mem[0] if mem is not None else set()
            self._write(ops[0], bool(regs & st.regs), st)
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
        taint = any(self._read(s, st) for s in srcs)
        if mn.startswith("cmov"):
            taint = taint or st.flags or self._read(dst, st)
        elif mn.startswith("set"):
            taint = st.flags
        elif not write_only:
            taint = taint or self._read(dst, st)
        self._write(dst, taint, st)
        if mn.startswith(_FLAG_SETTERS) and not mn.startswith(("v", "p")):
            st.flags = taint


ARCHES: dict[str, type[X86Model]] = {"x86_64": X86Model}


# ------------------------------------------------------------------------- driver


def disassemble(obj: Path, model: X86Model, objdump: str = "objdump") -> dict[str, list[Instr]]:
    """Instructions of every function in an object file."""
    out = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", *model.objdump_args, str(obj)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    funcs: dict[str, list[Instr]] = {}
    cur: list[Instr] | None = None
    for line in out.splitlines():
        f = _FUNC.match(line.strip())
        if f:
            cur = funcs.setdefault(f.group(1), [])
            continue
        if cur is not None:
            ins = model.parse(line)
            if ins is not None:
                cur.append(ins)
    return funcs


def check_function(name: str, code: list[Instr], model: X86Model) -> list[Violation]:
    """Run the taint analysis of one function to a fixpoint; return its violations."""
    if not code:
        return []
    index = {ins.address: i for i, ins in enumerate(code)}
    states: list[State | None] = [None] * len(code)
    states[0] = State()
    work = [0]
    found: dict[tuple[int, str], Violation] = {}
    while work:
        i = work.pop()
        st = states[i]
        assert st is not None
        cur = st.copy()
        ins = code[i]
        report: list[tuple[Instr, str]] = []
        model.step(ins, cur, report)
        for bad, why in report:
            found[(bad.address, why)] = Violation(name, bad.address, bad.text, why)
        succ: list[int] = []
        if ins.mnemonic.startswith("j") and ins.target is not None and ins.target in index:
            succ.append(index[ins.target])
        if not (ins.mnemonic in ("jmp", "ret") or ins.mnemonic.startswith("ud2")) and i + 1 < len(
            code
        ):
            succ.append(i + 1)
        for j in succ:
            if states[j] is None:
                states[j] = cur.copy()
                work.append(j)
            elif states[j].join(cur):  # type: ignore[union-attr]
                work.append(j)
    return sorted(found.values(), key=lambda v: v.address)


def check_object(
    obj: Path, arch: str = "x86_64", functions: Iterable[str] | None = None
) -> list[Violation]:
    """Check every function (or the named ones) of a compiled object file."""
    model = ARCHES[arch]()
    funcs = disassemble(obj, model)
    names = list(functions) if functions is not None else list(funcs)
    out: list[Violation] = []
    for name in names:
        if name not in funcs:
            raise KeyError(f"{obj} has no function {name}")
        out += check_function(name, funcs[name], model)
    return out
