"""The RV64GC + vector 1.0 model of the constant-time checker."""

from __future__ import annotations

import re
from itertools import pairwise

from ..byte_ranges import ByteRanges
from .loadstore import REALIGN, VLENB, LoadStoreModel, Pointer, parse_int, sext32
from .model import Flow, Instr, State

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


class RiscV64Model(LoadStoreModel):
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

    def _pointer(self, ins: Instr, st: State) -> Pointer | None:
        """Pointer arithmetic: ``auipc``/``lui`` of a symbol, ``mv``, ``addi``, ``add``, ``sub``."""
        mn, ops = ins.mnemonic, ins.operands
        if mn in ("auipc", "lui"):
            r = ins.reloc
            value = sext32(parse_int(ops[1]) << 12) if mn == "lui" and r is None else None
            return Pointer(None, r is not None and (r.readonly or r.type == _RV_GOT), value)
        if mn == "li" and len(ops) == 2:
            return Pointer(None, False, parse_int(ops[1]))
        srcs = [self.regs(op) if self.is_reg(op) else None for op in ops[1:]]
        if mn == "mul" and len(srcs) == 2 and srcs[0] and srcs[1]:  # vlenb * spilled groups
            x, y = st.values.get(srcs[0][0]), st.values.get(srcs[1][0])
            return Pointer(None, False, None if x is None or y is None else x * y)
        if mn == "slli" and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            x = st.values.get(srcs[0][0])
            return Pointer(None, False, None if x is None else x << parse_int(ops[2]))
        if mn in ("addiw", "addw") and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            value = st.values.get(srcs[0][0])  # lui a1, 0x13; addiw a1, a1, 0x6c0
            return Pointer(
                None, False, None if value is None else sext32(value + parse_int(ops[2]))
            )
        if mn == "mv" and len(srcs) == 1 and srcs[0]:
            return self.pointer(st, srcs[0][0], [], 0)
        if mn in ("andi", "and") and len(srcs) == 2 and srcs[0] and srcs[1] is None:
            # andi sp, sp, -0x40: realignment
            return self.pointer(st, srcs[0][0], [], REALIGN) if parse_int(ops[2]) < 0 else None
        if mn not in ("addi", "add", "sub") or len(srcs) != 2 or not srcs[0]:
            return None
        if srcs[1] is None:  # addi, or GNU's add with an immediate
            return self.pointer(st, srcs[0][0], [], parse_int(ops[2]) * (-1 if mn == "sub" else 1))
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
                self.set_pointer(st, self.regs(ops[0])[0], Pointer(None, False, VLENB))
        return True

    def _memory(self, ins: Instr, st: State, report: list[tuple[Instr, str]]) -> None:
        """Scalar loads, stores and atomics: ``lh a0, 0x10(a1)``, ``amoadd.w a0, a1, (a2)``."""
        mn, ops = ins.mnemonic, ins.operands
        k = next(i for i, op in enumerate(ops) if _RV_MEM.fullmatch(op))
        m = _RV_MEM.fullmatch(ops[k])
        assert m is not None
        base, disp = (self.regs(m.group(2)) or [""])[0], parse_int(m.group(1) or "0")
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
        extent = hi * VLENB if whole else None
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
