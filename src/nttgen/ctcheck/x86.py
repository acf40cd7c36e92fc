"""The x86-64 model of the constant-time checker (Intel syntax, as ``objdump -M intel`` prints)."""

from __future__ import annotations

import re
from functools import lru_cache

from .model import Decoded, Flow, Instr, Model, Slot, State, split_operands

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
_TARGET = re.compile(r"^([0-9a-f]+) <")


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
        ops = split_operands(words[1]) if len(words) > 1 else ()
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
