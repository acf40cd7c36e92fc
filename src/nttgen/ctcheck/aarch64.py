"""The AArch64 (Advanced SIMD) model of the constant-time checker."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .loadstore import NUMBER, REALIGN, LoadStoreModel, Pointer, parse_int
from .model import Flow, Instr, State

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


class AArch64Model(LoadStoreModel):
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

    def _pointer(self, ins: Instr, st: State) -> Pointer | None:
        """Pointer arithmetic of ``adrp``/``adr``/``mov``/``add``/``sub`` on 64-bit registers."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in ("adrp", "adr"):
            r = ins.reloc  # none: a label of this (read-only) code section
            return Pointer(None, r is None or r.readonly or r.type in _A64_GOT)
        if mn in ("mov", "movk") and len(ops) >= 2 and ops[1].startswith("#"):
            imm = parse_int(ops[1])  # mov x12, #0x52f0 / movk x12, #0x1, lsl #16
            shift = parse_int(m.group(1)) if len(ops) > 2 and (m := _LSL.fullmatch(ops[2])) else 0
            dst = (self.regs(ops[0]) or [""])[0]
            if mn == "mov":
                value: int | None = imm & (0xFFFFFFFF if ops[0].startswith("w") else -1)
            elif dst in st.values:
                value = st.values[dst] & ~(0xFFFF << shift) | imm << shift
            else:
                value = None
            return Pointer(None, False, value)
        if mn not in ("mov", "add", "sub", "and") or not ops or not ops[0].startswith(("x", "sp")):
            return None
        srcs = [self.regs(op) for op in ops[1:]]
        if not srcs or not srcs[0] or not ops[1].startswith(("x", "sp")):
            return None
        if mn == "and":  # and sp, x9, #0xffffffffffffffc0: realignment
            aligning = len(ops) == 3 and ops[2].startswith("#") and parse_int(ops[2]) >= 1 << 63
            return self.pointer(st, srcs[0][0], [], REALIGN) if aligning else None
        if mn == "mov":
            return self.pointer(st, srcs[0][0], [], 0) if len(ops) == 2 else None
        if len(ops) < 3:
            return None
        if ops[2].startswith("#"):  # add x0, x1, #0x1, lsl #12
            imm = parse_int(ops[2])
            if len(ops) > 3 and (m := _LSL.fullmatch(ops[3])):
                imm <<= parse_int(m.group(1))
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
            if NUMBER.fullmatch(part):
                disp = parse_int(part)
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
        post_regs = None if post is None or NUMBER.fullmatch(post) else self.regs(post)
        step = disp if pre else parse_int(post) if post is not None and post_regs is None else 0
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
