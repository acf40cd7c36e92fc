"""Constant time, checked statically on cross-compiled objects: AArch64 (with Advanced SIMD)
and RV64 (with the vector extension), gcc and clang at -O0/-O1/-O2/-O3/-Os. The generated
portable kernels and hand-written NEON/RVV intrinsics pass; deliberately leaky functions are
caught, each with the right reason; the taint rules that make the difference are pinned on
hand-written assembly."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conftest import require_tool
from nttgen.ctcheck import ARCHES, Violation, check_function, check_object
from nttgen.generate import generate
from nttgen.rings import PRESETS

# compiler id -> (architecture, command line)
COMPILERS = {
    "aarch64-gcc": ("aarch64", ("aarch64-linux-gnu-gcc",)),
    "aarch64-clang": ("aarch64", ("clang-19", "--target=aarch64-linux-gnu")),
    "riscv64-clang": ("riscv64", ("clang-19", "--target=riscv64-linux-gnu", "-march=rv64gcv")),
    "riscv64-gcc": ("riscv64", ("riscv64-linux-gnu-gcc", "-march=rv64gc")),
}
AARCH64 = [c for c, (arch, _) in COMPILERS.items() if arch == "aarch64"]
OBJDUMP = {"aarch64": "aarch64-linux-gnu-objdump", "riscv64": "llvm-objdump-19"}
OTHER_OBJDUMP = {"aarch64": "llvm-objdump-19", "riscv64": "riscv64-linux-gnu-objdump"}
OPTS = ("-O0", "-O1", "-O2", "-O3", "-Os")

BRANCH = "conditional branch on secret data"
INDIRECT = "indirect branch on secret data"
ADDRESS = "memory address depends on secret data"
DIVISION = "division instruction"

Build = Callable[..., Path]


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """compile(compiler, file name, C text, opt, companions=()) -> object file, each built once
    a session; companions are (name, text) files written beside the source (headers)."""
    root = tmp_path_factory.mktemp("ctcheck_arches")
    built: dict[tuple[str, str, str], Path] = {}

    def compile_(
        compiler: str, name: str, text: str, opt: str, companions: Iterable[tuple[str, str]] = ()
    ) -> Path:
        arch, cmd = COMPILERS[compiler]
        require_tool(cmd[0])
        require_tool(OBJDUMP[arch])
        key = (compiler, name, opt)
        if key not in built:
            src = root / name
            if not src.exists():
                src.parent.mkdir(parents=True, exist_ok=True)
                for other, content in companions:
                    (src.parent / other).write_text(content)
                src.write_text(text)
            obj = root / f"{src.stem}-{compiler}{opt}.o"
            subprocess.run([*cmd, "-std=c99", opt, "-c", str(src), "-o", str(obj)], check=True)
            built[key] = obj
        return built[key]

    return compile_


def _check(compiler: str, obj: Path, functions: list[str] | None = None) -> list[Violation]:
    arch = COMPILERS[compiler][0]
    return check_object(obj, arch, functions, objdump=OBJDUMP[arch])


def _show(violations: list[Violation]) -> str:
    return "\n".join(map(str, violations[:10]))


# ------------------------------------------------------------------------- generated kernels


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("preset", ["mlkem", "mldsa"])  # 16-bit and 32-bit lanes
@pytest.mark.parametrize("compiler", list(COMPILERS))
def test_generated_kernels_pass(compiler: str, preset: str, opt: str, build: Build) -> None:
    files = generate(PRESETS[preset], "c")
    obj = build(compiler, f"{preset}/{files.stem}.c", files.source, opt, files.items())
    violations = _check(compiler, obj)  # every function: helpers kept out of line too
    assert not violations, f"{compiler} {opt}:\n{_show(violations)}"


# ------------------------------------------------------------------------- portable C

PORTABLE = r"""
#include <stddef.h>
#include <stdint.h>

extern void sink(int);
extern int32_t take(int32_t);

static const int16_t tab[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

void leak_branch(int16_t *r, const int16_t *a, int16_t q) {
    for (int i = 0; i < 256; i++) {
        if (a[i] < 0) {
            r[i] += q;
        }
    }
}

void leak_branch_call(const int16_t *a) {
    for (int i = 0; i < 256; i++) {
        if (a[i] < 0) {
            sink(i);
        }
    }
}

void leak_table(int16_t *r, const int16_t *a) {
    for (int i = 0; i < 256; i++) {
        r[i] = tab[a[i] & 15];
    }
}

void leak_modulo(int16_t *r, const int16_t *a, int16_t q) {
    for (int i = 0; i < 256; i++) {
        r[i] = (int16_t)(a[i] % q);
    }
}

void leak_bound(int16_t *r, const int16_t *a) {
    for (int i = 0; i < a[0]; i++) {
        r[i] = (int16_t)i;
    }
}

int32_t leak_switch(const int32_t *a) {
    switch (a[0]) {
    case 0: return 11;
    case 1: return 27;
    case 2: return 39;
    case 3: return 41;
    case 4: return 55;
    case 5: return 63;
    case 6: return 71;
    default: return 0;
    }
}

/* A leak in a stage the entry point calls, kept out of line (reading an array: a stage that
   reads one element may get it passed by value instead, see nttgen.ctcheck). */
static __attribute__((noinline)) void stage_branch(const int16_t *a) {
    for (int i = 0; i < 256; i++) {
        if (a[i] > 5) {
            sink(i);
        }
    }
}
void leak_in_callee(const int16_t *a) {
    stage_branch(a);
    stage_branch(a + 2);
}

/* Clean: a sign mask instead of a branch. */
void clean_mask(int16_t *r, const int16_t *a, int16_t q) {
    for (int i = 0; i < 256; i++) {
        r[i] = (int16_t)(a[i] + (q & (a[i] >> 15)));
    }
}

/* Clean: a jump table (big enough for gcc on AArch64 too) on a public value; a fall-through
   case; read-only data indexed by a public value. */
int32_t clean_switch(const int32_t *a, int k) {
    int32_t x = a[0];
    switch (k) {
    case 0: x = take(x + a[1]); break;
    case 1: x = take(x * a[3]); break;
    case 2: x = take(x - a[5]); break;
    case 3: x = take(x ^ a[9]); break;
    case 4: x = take(x | a[2]); break;
    case 5: x = take(x & a[7]); break;
    case 6: x = take(x << 3); break;
    case 7: x = take(x >> 2); break;
    case 8: x = take(x + 99); break;
    case 9: x = take(x * 77); break;
    case 10: x = take(a[11]); /* fall through */
    case 11: x = take(x + a[12]); break;
    default: x = 0;
    }
    return x + tab[k & 15];
}

/* Clean: a tail call. */
int32_t clean_tail_call(const int32_t *a) { return take(a[0] + 1); }

/* Clean: a frame too big for an immediate, indexed at a public offset. */
extern void fill(int16_t *);
int16_t clean_big_frame(const int16_t *a, int k) {
    int16_t t[40000];
    fill(t);
    for (int i = 0; i < 8; i++) {
        t[i] = a[i];
    }
    return t[k & 7];
}
"""

LEAKS = {
    "leak_branch": BRANCH,  # a conditional store stays a branch at every level
    "leak_branch_call": BRANCH,
    "leak_table": ADDRESS,
    "leak_modulo": DIVISION,
    "leak_bound": BRANCH,
    "leak_switch": BRANCH,
    "leak_in_callee": BRANCH,
}
# where the leak of a function lies when it is not in the function itself (a compiler may
# rename a stage it specialises: stage_branch.constprop.0)
LEAK_IN = {"leak_in_callee": "stage_branch"}
CLEAN = ["clean_mask", "clean_switch", "clean_tail_call", "clean_big_frame"]


@pytest.mark.parametrize("leak", list(LEAKS))
@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("compiler", list(COMPILERS))
def test_portable_leaks_are_caught(compiler: str, opt: str, leak: str, build: Build) -> None:
    obj = build(compiler, "portable.c", PORTABLE, opt)
    violations = _check(compiler, obj, None if leak in LEAK_IN else [leak])
    where = LEAK_IN.get(leak, leak)
    violations = [v for v in violations if v.function.split(".")[0] == where]
    assert LEAKS[leak] in {v.reason for v in violations}, f"{compiler} {opt}: {violations}"


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("compiler", list(COMPILERS))
def test_portable_clean_code_passes(compiler: str, opt: str, build: Build) -> None:
    obj = build(compiler, "portable.c", PORTABLE, opt)
    violations = _check(compiler, obj, CLEAN)
    assert not violations, f"{compiler} {opt}:\n{_show(violations)}"


# ------------------------------------------------------------------------- NEON intrinsics

NEON = r"""
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

extern void sink(int);

/* Montgomery products r = a * b / 2^16 mod q (q = 3329), corrected into [0, q). */
void neon_montmul(int16_t *r, const int16_t *a, const int16_t *b, size_t n) {
    const int16x8_t q = vdupq_n_s16(3329);
    const int16x8_t qinv = vdupq_n_s16(-3327);
    for (size_t i = 0; i + 8 <= n; i += 8) {
        int16x8_t x = vld1q_s16(a + i);
        int16x8_t y = vld1q_s16(b + i);
        int16x8_t hi = vqdmulhq_s16(x, y);
        int16x8_t t = vmulq_s16(vmulq_s16(x, y), qinv);
        t = vqdmulhq_s16(t, q);
        int16x8_t z = vhsubq_s16(hi, t);
        z = vaddq_s16(z, vandq_s16(vshrq_n_s16(z, 15), q));
        vst1q_s16(r + i, vtrn1q_s16(z, vtrn2q_s16(z, x)));
    }
}

/* Structure loads/stores, lane loads and inserts, accumulate, select: data only. */
void neon_forms(int16_t *r, const int16_t *a, size_t n) {
    for (size_t i = 0; i + 32 <= n; i += 32) {
        int16x8x2_t p = vld2q_s16(a + i);
        int16x8x4_t w = vld1q_s16_x4(a + i);
        int16x8_t m = vmlaq_s16(p.val[0], p.val[1], w.val[0]);
        m = vld1q_lane_s16(a + i + 3, m, 5);
        uint16x8_t c = vcltq_s16(m, vdupq_n_s16(0));
        m = vbslq_s16(c, w.val[1], w.val[2]);
        m = vsetq_lane_s16(vgetq_lane_s16(w.val[3], 2), m, 0);
        p.val[0] = m;
        vst2q_s16(r + i, p);
        r[i + 31] = (int16_t)(vaddvq_s16(m) + ((uint16_t)vgetq_lane_s16(m, 1) >> 15));
    }
}

void neon_leak_lane(const int16_t *a) {
    int16x8_t v = vld1q_s16(a);
    if (vgetq_lane_s16(v, 0) < 0) {
        sink(0);
    }
}
"""


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("compiler", AARCH64)
def test_neon_intrinsics(compiler: str, opt: str, build: Build) -> None:
    obj = build(compiler, "neon.c", NEON, opt)
    clean = _check(compiler, obj, ["neon_montmul", "neon_forms"])
    assert not clean, f"{compiler} {opt}:\n{_show(clean)}"
    leak = _check(compiler, obj, ["neon_leak_lane"])
    assert BRANCH in {v.reason for v in leak}, f"{compiler} {opt}: {leak}"


# ------------------------------------------------------------------------- RVV intrinsics

RVV = r"""
#include <riscv_vector.h>
#include <stddef.h>
#include <stdint.h>

/* Montgomery products r = a * b / 2^16 mod q (q = 3329), b read with a public stride. */
void rvv_montmul(int16_t *r, const int16_t *a, const int16_t *b, size_t n, ptrdiff_t stride) {
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e16m1(n - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl);
        vint16m1_t y = __riscv_vlse16_v_i16m1(b + i, stride, vl);
        vint16m1_t lo = __riscv_vmul_vv_i16m1(x, y, vl);
        vint16m1_t hi = __riscv_vmulh_vv_i16m1(x, y, vl);
        vint16m1_t t = __riscv_vmul_vx_i16m1(lo, -3327, vl);
        t = __riscv_vmulh_vx_i16m1(t, 3329, vl);
        __riscv_vse16_v_i16m1(r + i, __riscv_vsub_vv_i16m1(hi, t, vl), vl);
        i += vl;
    }
}

/* Widening, narrowing, accumulate, masks as data, a reduction: nothing branches on data. */
void rvv_forms(int16_t *r, const int16_t *a, const int16_t *b, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e16m1(n - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl);
        vint16m1_t y = __riscv_vle16_v_i16m1(b + i, vl);
        vint32m2_t w = __riscv_vwmul_vv_i32m2(x, y, vl);
        vint16m1_t h = __riscv_vnsra_wx_i16m1(w, 16, vl);
        h = __riscv_vmacc_vv_i16m1(h, x, y, vl);
        vbool16_t neg = __riscv_vmslt_vx_i16m1_b16(h, 0, vl);
        h = __riscv_vadd_vx_i16m1_mu(neg, h, h, 3329, vl);
        h = __riscv_vmerge_vvm_i16m1(h, x, neg, vl);
        vint16m1_t s = __riscv_vredsum_vs_i16m1_i16m1(h, __riscv_vmv_s_x_i16m1(0, vl), vl);
        __riscv_vse16_v_i16m1(r + i, h, vl);
        r[i] = (int16_t)(r[i] + __riscv_vmv_x_s_i16m1_i16(s));
        i += vl;
    }
}

void rvv_leak_index(int16_t *r, const int16_t *a, const int16_t *t, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e16m1(n - i);
        vuint16m1_t x = __riscv_vreinterpret_v_i16m1_u16m1(__riscv_vle16_v_i16m1(a + i, vl));
        vuint16m1_t idx = __riscv_vsll_vx_u16m1(__riscv_vand_vx_u16m1(x, 15, vl), 1, vl);
        __riscv_vse16_v_i16m1(r + i, __riscv_vluxei16_v_i16m1(t, idx, vl), vl);
        i += vl;
    }
}

void rvv_leak_rem(int16_t *r, const int16_t *a, int16_t q, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e16m1(n - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl);
        __riscv_vse16_v_i16m1(r + i, __riscv_vrem_vx_i16m1(x, q, vl), vl);
        i += vl;
    }
}

/* Which elements are stored depends on the data. */
void rvv_leak_masked_store(int16_t *r, const int16_t *a, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t vl = __riscv_vsetvl_e16m1(n - i);
        vint16m1_t x = __riscv_vle16_v_i16m1(a + i, vl);
        vbool16_t neg = __riscv_vmslt_vx_i16m1_b16(x, 0, vl);
        __riscv_vse16_v_i16m1_m(neg, r + i, x, vl);
        i += vl;
    }
}
"""

RVV_LEAKS = {
    "rvv_leak_index": ADDRESS,
    "rvv_leak_rem": DIVISION,
    "rvv_leak_masked_store": ADDRESS,
}


@pytest.mark.parametrize("opt", OPTS)
def test_rvv_intrinsics(opt: str, build: Build) -> None:
    obj = build("riscv64-clang", "rvv.c", RVV, opt)
    clean = _check("riscv64-clang", obj, ["rvv_montmul", "rvv_forms"])
    assert not clean, f"{opt}:\n{_show(clean)}"
    for name, reason in RVV_LEAKS.items():
        leak = _check("riscv64-clang", obj, [name])
        assert {v.function for v in leak} == {name}
        assert reason in {v.reason for v in leak}, f"{name} {opt}: {leak}"


# ------------------------------------------------------------------------- disassemblers


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("compiler", list(COMPILERS))
def test_disassemblers_agree(compiler: str, opt: str, build: Build) -> None:
    """GNU objdump and llvm-objdump print differently (``#16`` / ``#0x10``, ``add a0,a1,-8`` /
    ``addi a0, a1, -0x8``); the verdicts must not differ."""
    arch = COMPILERS[compiler][0]
    other = require_tool(OTHER_OBJDUMP[arch])
    sources = [("portable.c", PORTABLE)]
    sources += {"aarch64-gcc": [("neon.c", NEON)], "aarch64-clang": [("neon.c", NEON)],
                "riscv64-clang": [("rvv.c", RVV)]}.get(compiler, [])  # fmt: skip
    for name, text in sources:
        obj = build(compiler, name, text, opt)
        ours = [(v.function, v.address, v.reason) for v in _check(compiler, obj)]
        theirs = [(v.function, v.address, v.reason) for v in check_object(obj, arch, None, other)]
        assert ours == theirs, name
        assert ours  # the leaks are in there


# ------------------------------------------------------------------------- rules


def _analyse(arch: str, asm: str) -> set[str]:
    """The violation reasons of one function written as assembly, one instruction a line at
    addresses 0, 4, 8...; ``@N`` stands for the address of line N (a branch target) and
    ``@ret`` for a ``ret`` appended at the end (branching back over the prologue would run it
    twice, which compiled code never does)."""
    model = ARCHES[arch]()
    asm = asm.replace("@ret", f"@{sum(1 for x in asm.splitlines() if x.strip())}")
    lines = [x.strip() for x in asm.splitlines() if x.strip()] + ["ret"]
    code = []
    for k, line in enumerate(lines):
        line = "\t".join(line.split(None, 1))
        for n in range(len(lines) - 1, -1, -1):
            line = line.replace(f"@{n}", f"{4 * n:x} <f+{4 * n:#x}>")
        ins = model.parse(f"{4 * k:8x}:\t{line}")
        assert ins is not None, line
        code.append(ins)
    model.finish(code)
    return {v.reason for v in check_function("f", code, model)}


A64_RULES = {
    "branch on a loaded value": ("ldrsh w1, [x0]\n cmp w1, #0\n b.lt @ret", {BRANCH}),
    "public compare after a secret one": (
        "ldrsh w1, [x0]\n cmp w1, #0\n cmp x2, #4\n b.lt @ret",
        set(),
    ),
    "csel on secret flags: no branch, secret result": (
        "ldrsh w1, [x0]\n cmp w1, #0\n csel x3, x4, x5, lt\n ldr x6, [x7, x3]",
        {ADDRESS},
    ),
    "ccmp keeps secret flags": (
        "ldrsh w1, [x0]\n cmp x2, #1\n ccmp w1, #0, #4, ne\n b.eq @ret",
        {BRANCH},
    ),
    "adds sets the flags": ("ldr x1, [x0]\n adds x2, x1, #1\n b.cs @ret", {BRANCH}),
    "cbz on a secret register": ("ldrsh w1, [x0]\n cbz w1, @ret", {BRANCH}),
    "tbnz on a secret register": ("ldrsh w1, [x0]\n tbnz w1, #15, @ret", {BRANCH}),
    "secret index register": ("ldrsw x2, [x0]\n ldr w3, [x1, x2, lsl #2]", {ADDRESS}),
    "secret extended index": ("ldrsh w2, [x0]\n ldrh w3, [x1, w2, sxtw #1]", {ADDRESS}),
    "post-index by a secret register": (
        "ldr x2, [x0]\n ld1 {v0.8h-v3.8h}, [x1], x2\n ldr q4, [x1]",
        {ADDRESS},
    ),
    "post-index by an immediate": (
        "ld1 { v0.8h, v1.8h }, [x1], #32\n ldr q4, [x1]\n umov w2, v4.h[0]\n cbz w2, @ret",
        {BRANCH},  # the data is secret, the pointer is not
    ),
    "sdiv": ("sdiv w0, w1, w2", {DIVISION}),
    "udiv": ("udiv x0, x1, x2", {DIVISION}),
    "fdiv": ("fdiv v0.4s, v1.4s, v2.4s", {DIVISION}),
    "a call makes caller-saved registers public": (
        "ldrsh w0, [x0]\n bl 0 <g>\n cbz w0, @ret",
        set(),
    ),
    "callee-saved registers survive a call": (
        "ldrsh w19, [x0]\n bl 0 <g>\n cbz w19, @ret",
        {BRANCH},
    ),
    "indirect branch": ("ldr x2, [x0]\n br x2", {INDIRECT}),
    "indirect call": ("ldr x2, [x0]\n blr x2", {INDIRECT}),
    "literal loads are constants": ("ldr x2, @3\n ldr w3, [x1, x2]\n ret\n .word 0x4", set()),
    "read-only data through adrp": (
        "adrp x1, 0 <f>\n add x1, x1, #0x0\n ldrsh w2, [x1, #6]\n cbz w2, @ret",
        set(),
    ),
    # spills: slots are keyed by their offset from the entry stack pointer
    "secret spill and reload (pre-index frame, frame pointer)": (
        "ldrsh w1, [x0]\n stp x29, x30, [sp, #-32]!\n mov x29, sp\n str w1, [x29, #28]\n"
        "ldr w2, [sp, #28]\n cbz w2, @ret",
        {BRANCH},
    ),
    "public spill and reload": (
        "sub sp, sp, #0x20\n str x2, [sp, #8]\n ldr x3, [sp, #8]\n ldr w4, [x1, x3]",
        set(),
    ),
    "public store over a secret slot": (
        "ldrsh w1, [x0]\n sub sp, sp, #16\n str w1, [sp, #12]\n str wzr, [sp, #12]\n"
        "ldr w2, [sp, #12]\n cbz w2, @ret",
        set(),
    ),
    "partial store keeps the rest of a secret slot": (
        "ldr x1, [x0]\n sub sp, sp, #16\n str x1, [sp, #8]\n str wzr, [sp, #8]\n"
        "ldr w2, [sp, #12]\n cbz w2, @ret",
        {BRANCH},
    ),
    "spilled stack pointer reloads as a stack pointer": (
        "ldrsh w1, [x0]\n sub sp, sp, #0x20\n add x8, sp, #0x10\n strh w1, [x8]\n"
        "str x8, [sp, #8]\n ldr x9, [sp, #8]\n ldrsh w2, [x9]\n cbz w2, @ret",
        {BRANCH},
    ),
    "large frame through a register": (
        "mov x12, #0x52f0\n sub sp, sp, x12\n str x0, [sp, #24]\n ldr x1, [sp, #24]\nldr w2, [x1]",
        set(),
    ),
    "larger frame through mov and movk": (
        "mov x12, #0x2f0\n movk x12, #0x1, lsl #16\n sub sp, sp, x12\n str x0, [sp, #24]\n"
        "add x3, sp, #0x10, lsl #12\n ldr x1, [x3, #-65512]\n ldr w2, [x1]",
        set(),
    ),
    "realigned stack": (
        "sub x9, sp, #0x40\n and sp, x9, #0xffffffffffffffc0\n str x2, [sp, #8]\n"
        "ldr x3, [sp, #8]\n ldr w4, [x1, x3]",
        set(),
    ),
}
# Each operation writes v1 (or x1) after it was loaded: does the secret survive?
_A64_KEEP = ["mla v1.8h, v2.8h, v3.8h", "sqrdmlah v1.8h, v2.8h, v3.h[1]",
             "bsl v1.16b, v2.16b, v3.16b", "usra v1.8h, v2.8h, #3", "sli v1.8h, v2.8h, #4",
             "mov v1.h[1], w3", "ins v1.h[1], v2.h[0]", "xtn2 v1.16b, v2.8h",
             "smlal2 v1.4s, v2.8h, v3.8h", "sadalp v1.4s, v2.8h", "tbx v1.16b, {v2.16b}, v3.16b",
             "ld1 {v1.h}[2], [sp]", "movk x1, #0x1234, lsl #16"]  # fmt: skip
_A64_CLEAR = ["mul v1.8h, v2.8h, v3.8h", "eor v1.16b, v1.16b, v1.16b", "movi v1.2d, #0",
              "dup v1.8h, w3", "ld1 {v1.8h}, [sp]", "ldr q1, [sp, #16]", "mov x1, #0x5",
              "tbl v1.16b, {v2.16b}, v3.16b", "trn2 v1.8h, v2.8h, v3.8h"]  # fmt: skip


def _probe(op: str) -> str:
    """Load v1 or x1 from the caller, apply ``op``, branch on the result."""
    reg = "x1" if " x1," in f" {op}" else "v1"
    use = "cbz x1, @ret" if reg == "x1" else "umov w4, v1.h[0]\n cbz w4, @ret"
    return f"ldr {'x1' if reg == 'x1' else 'q1'}, [x0]\n {op}\n {use}"


A64_RULES.update({f"{op} reads its destination": (_probe(op), {BRANCH}) for op in _A64_KEEP})
A64_RULES.update({f"{op} writes only": (_probe(op), set()) for op in _A64_CLEAR})


@pytest.mark.parametrize("case", list(A64_RULES))
def test_aarch64_rules(case: str) -> None:
    asm, expected = A64_RULES[case]
    assert _analyse("aarch64", asm) == expected


_M1 = "vsetvli zero, a1, e16, m1, ta, ma"
_M2 = "vsetvli zero, a1, e16, m2, ta, ma"
_TU = "vsetvli zero, a1, e16, m1, tu, ma"
RV_RULES = {
    "branch on a loaded value": ("lh a1, 0(a0)\n bltz a1, @ret", {BRANCH}),
    "two-register branch": ("lw a1, 0x4(a0)\n bge a2, a1, @ret", {BRANCH}),
    "public branch": ("li a1, 3\n bnez a1, @ret", set()),
    "secret address": ("lh a1, 0(a0)\n add a2, a0, a1\n lh a3, 0(a2)", {ADDRESS}),
    "indirect branch": ("ld a1, 0(a0)\n jr a1", {INDIRECT}),
    "a call makes caller-saved registers public": (
        "lh a0, 0(a0)\n jalr ra\n beqz a0, @ret",
        set(),
    ),
    "callee-saved registers survive a call": ("lh s1, 0(a0)\n jalr ra\n beqz s1, @ret", {BRANCH}),
    "secret spill through the frame pointer, reload through sp": (
        "addi sp, sp, -32\n sd ra, 24(sp)\n addi s0, sp, 32\n lh a1, 0(a0)\n sw a1, -20(s0)\n"
        "lw a2, 12(sp)\n beqz a2, @ret",
        {BRANCH},
    ),
    "spilled stack pointer reloads as a stack pointer": (
        "addi sp, sp, -32\n addi a3, sp, 16\n sd a3, 8(sp)\n ld a4, 8(sp)\n lh a5, 0(a4)\n"
        "beqz a5, @ret",
        set(),
    ),
    "large frame through lui/addi (gcc)": (
        "addi sp, sp, -32\n addi s0, sp, 32\n lui t0, 0xfffec\n addi t0, t0, 0x770\n"
        "add sp, sp, t0\n sd a0, 8(sp)\n lui a5, 0xfffec\n addi a5, a5, 0x778\n"
        "add a5, a5, s0\n ld a1, -32(a5)\n lh a2, 0(a1)",
        set(),
    ),
    "large frame through lui/addiw (clang)": (
        "lui a1, 0x13\n addiw a1, a1, 0x6c0\n sub sp, sp, a1\n sd a0, 8(sp)\n ld a1, 8(sp)\n"
        "lh a2, 0(a1)",
        set(),
    ),
    "vlenb is public": ("csrr a1, vlenb\n beqz a1, @ret", set()),
    "LMUL 2 loads two registers": (
        f"{_M2}\n vle16.v v8, (a0)\n vmv.x.s a2, v9\n beqz a2, @ret",
        {BRANCH},
    ),
    "LMUL 1 loads one": (f"{_M1}\n vle16.v v8, (a0)\n vmv.x.s a2, v9\n beqz a2, @ret", set()),
    "widening writes two registers": (
        f"{_M1}\n vle16.v v8, (a0)\n vwmul.vv v10, v8, v8\n vmv.x.s a2, v11\n beqz a2, @ret",
        {BRANCH},
    ),
    "whole-register loads ignore vtype": (
        f"{_M1}\n vl2re16.v v8, (a0)\n vmv.x.s a2, v9\n beqz a2, @ret",
        {BRANCH},
    ),
    "secret index vector": (
        f"{_M1}\n vle16.v v4, (a0)\n vluxei16.v v8, (a1), v4",
        {ADDRESS},
    ),
    "public index vector": (f"{_M1}\n vid.v v4\n vluxei16.v v8, (a1), v4", set()),
    "tail-agnostic write clears": (
        f"{_M1}\n vle16.v v4, (a0)\n vid.v v4\n vluxei16.v v8, (a1), v4",
        set(),
    ),
    "tail-undisturbed write keeps the old tail": (
        f"{_TU}\n vle16.v v4, (a0)\n vid.v v4\n vluxei16.v v8, (a1), v4",
        {ADDRESS},
    ),
    "vmacc reads its destination": (
        f"{_M1}\n vle16.v v4, (a0)\n vmacc.vv v4, v9, v10\n vluxei16.v v8, (a1), v4",
        {ADDRESS},
    ),
    "vmul writes only": (
        f"{_M1}\n vle16.v v4, (a0)\n vmul.vv v4, v9, v10\n vluxei16.v v8, (a1), v4",
        set(),
    ),
    "vmv.v.i clears": (
        f"{_M1}\n vle16.v v4, (a0)\n vmv.v.i v4, 0\n vloxei16.v v8, (a1), v4",
        set(),
    ),
    "vxor of itself clears": (
        f"{_M1}\n vle16.v v4, (a0)\n vxor.vv v4, v4, v4\n vsuxei16.v v8, (a1), v4",
        set(),
    ),
    "secret stride": (f"{_M1}\n lh a2, 0(a0)\n vlse16.v v8, (a1), a2", {ADDRESS}),
    "public stride": (f"{_M1}\n li a2, 6\n vlse16.v v8, (a1), a2", set()),
    "store under a secret mask": (
        f"{_M1}\n vle16.v v8, (a0)\n vmslt.vx v0, v8, zero\n vse16.v v8, (a1), v0.t",
        {ADDRESS},
    ),
    "arithmetic under a secret mask": (
        f"{_M1}\n vle16.v v8, (a0)\n vmslt.vx v0, v8, zero\n vadd.vv v9, v9, v9, v0.t\n"
        "vse16.v v9, (a1)",
        set(),
    ),
    "secret vl": ("lh a1, 0(a0)\n vsetvli a2, a1, e16, m1, ta, ma\n vle16.v v8, (a3)", {ADDRESS}),
    "loop on a secret vl": (
        "lh a1, 0(a0)\n vsetvli a2, a1, e16, m1, ta, ma\n bnez a2, @ret",
        {BRANCH},
    ),
}


_RV_DIVISIONS = ["div a0, a1, a2", "divu a0, a1, a2", "divw a0, a1, a2", "divuw a0, a1, a2",
                 "rem a0, a1, a2", "remu a0, a1, a2", "remw a0, a1, a2", "remuw a0, a1, a2",
                 "fdiv.d fa0, fa1, fa2", "vdiv.vv v8, v9, v10", "vdivu.vx v8, v9, a0",
                 "vrem.vv v8, v9, v10", "vremu.vx v8, v9, a0"]  # fmt: skip
RV_RULES.update({op: (f"{_M1}\n {op}", {DIVISION}) for op in _RV_DIVISIONS})


@pytest.mark.parametrize("case", list(RV_RULES))
def test_riscv_rules(case: str) -> None:
    asm, expected = RV_RULES[case]
    assert _analyse("riscv64", asm) == expected


def test_architectures_are_registered() -> None:
    assert {"x86_64", "aarch64", "riscv64"} <= set(ARCHES)
