"""Products by operands with one value in every lane (x86, 32-bit lanes).

``vpmuldq`` multiplies the low halves of 64-bit lanes, so the 32-bit-lane products copy each
operand's odd lanes down first (``vpshufd``); an operand that holds one value in every lane (a
broadcast twiddle, a constant) has it there already, and the emitter then calls the helper's
``_u`` form (:meth:`nttgen.emit.isa.x86.X86Simd.uniform_form`). It must do so only for such
operands, and every 32-bit product helper, ``_u`` or not, must compute its formula exactly, at
the ends of the 32-bit range too: checked here in C against 64-bit integer arithmetic.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import host_executable, require_tool
from nttgen.emit.files import FileWriter, GeneratedFiles
from nttgen.emit.isa import isa_class
from nttgen.generate import default_config
from nttgen.programs.kernels import build_kernels
from nttgen.rings import PRESETS

ISAS = ("avx2", "avx512")


def _files(isa: str, const_mul: str) -> GeneratedFiles:
    ring = PRESETS["mldsa"]
    config = replace(default_config(ring, isa), const_mul=const_mul)  # type: ignore[arg-type]
    return FileWriter(build_kernels(ring, config), isa_class(isa), "test").files()


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("const_mul", ["shoup", "montgomery"])
def test_uniform_forms_read_only_broadcasts_and_constants(isa: str, const_mul: str) -> None:
    """Each ``_u`` call's uniform operand is a broadcast of one table entry or a constant,
    and each general call's is neither (so the twiddles held per lane take the general
    form); both forms occur."""
    text = _files(isa, const_mul).source
    p = f"nttgen_mldsa_{isa}_"
    width = isa_class(isa).width
    op = "shoupmul" if const_mul == "shoup" else "montmul"
    # the quotient (Shoup) or the twiddle (Montgomery) is the operand whose odd lanes move
    k = 2 if op == "shoupmul" else 1
    special = general = 0
    for body in re.split(r"\n}\n", text):  # one function at a time: each has its own names
        uniform = set(re.findall(rf"const __m{width}i (\w+) =\s*_mm{width}_set1_epi32\(", body))
        uniform |= set(re.findall(rf"const __m{width}i (\w+) =\s*{p}keep\(_mm{width}_set1", body))
        for u, *args in re.findall(rf"{p}{op}(_u)?\((\w+), (\w+), (\w+)\)", body):
            if u:
                special += 1
                assert args[k] in uniform, args
            else:
                general += 1
                assert args[k] not in uniform, args
    assert special and general, (special, general)
    # the Barrett reduction's multiplier is a constant
    assert re.search(rf"{p}mulhi_u\(a, bv\)", text)


def test_sixteen_bit_lanes_have_no_uniform_forms() -> None:
    """16-bit lanes have their high products (``vpmulhw``): no helper moves odd lanes."""
    text = (
        FileWriter(
            build_kernels(PRESETS["mlkem"], default_config(PRESETS["mlkem"], "avx2")),
            isa_class("avx2"),
            "test",
        )
        .files()
        .source
    )
    assert not re.search(r"_u\(", text)


# Every product helper of the file, with vectors of random and extreme lanes, against its
# formula in 64-bit integers; then a `_u` helper given an operand whose lanes differ, which
# must come out wrong somewhere (the uniform form depends on the operand being uniform).
HELPERS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "%(stem)s.c"
#define L %(lanes)d
#define Q %(q)dLL
#define QINV %(qinv)dLL
typedef %(vt)s vec;
static vec ld(const void *p) { return %(loadu)s; }
static void st(void *p, vec v) { %(storeu)s; }
static uint64_t state = 0x2545f4914f6cdd1dull;
static int32_t rnd(void) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (int32_t)(uint32_t)(state >> 16);
}
static const int32_t ENDS[] = {INT32_MIN, INT32_MIN + 1, -8380417, -1, 0, 1, 8380417,
                               INT32_MAX - 1, INT32_MAX};
static int32_t pick(int i) { return i %% 3 == 0 ? ENDS[(unsigned)rnd() %% 9u] : rnd(); }
static int32_t lo32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int32_t hi32(int64_t v) { return (int32_t)(v >> 32); }
static long bad = 0;
static void expect(const char *what, vec got, const int32_t *want) {
    int32_t g[L];
    st(g, got);
    for (int i = 0; i < L; ++i) {
        if (g[i] != want[i]) {
            if (bad++ < 5) printf("%%s lane %%d: %%d, want %%d\n", what, i, g[i], want[i]);
        }
    }
}
static inline int32_t shoup(int32_t a, int32_t z, int32_t zs) {
    int32_t t = hi32((int64_t)a * zs);
    return (int32_t)((uint32_t)a * (uint32_t)z - (uint32_t)t * (uint32_t)Q);
}
static inline int32_t mont(int32_t a, int32_t z, int32_t zq) {
    int64_t m = lo32((int64_t)a * zq);
    return hi32((int64_t)a * z - m * Q);
}
static int32_t mont_var(int32_t a, int32_t b) {
    int64_t p = (int64_t)a * b;
    int64_t m = lo32((int64_t)lo32(p) * QINV);
    return hi32(p - m * Q);
}
static int32_t mred(int64_t s) { return hi32(s - (int64_t)lo32((int64_t)lo32(s) * QINV) * Q); }
int main(void) {
    for (int round = 0; round < 20000; ++round) {
        int32_t a[L], b[L], c[L], u0 = pick(round), u1 = pick(round + 1), want[L];
        int32_t uu0[L], uu1[L];
        int64_t s[L];
        for (int i = 0; i < L; ++i) {
            a[i] = pick(round + i); b[i] = pick(round + 2 * i); c[i] = pick(round + 3 * i);
            uu0[i] = u0; uu1[i] = u1;
            s[i] = (int64_t)pick(i) * pick(i + 1) + (int64_t)pick(i) * 7;
        }
        vec va = ld(a), vb = ld(b), vc = ld(c), w0 = ld(uu0), w1 = ld(uu1);
        (void)vc, (void)w0, (void)w1;
        for (int i = 0; i < L; ++i) want[i] = hi32((int64_t)a[i] * u0);
        expect("mulhi_u", %(p)smulhi_u(va, w0), want);
        for (int i = 0; i < L; ++i) want[i] = mont_var(a[i], b[i]);
        expect("montmul_var", %(p)smontmul_var(va, vb), want);
        {
            int32_t got[L];
            /* the even lanes' sums, then the odd lanes' */
            vec lo = ld(s), hi = ld(s + L / 2);
            for (int j = 0; j < L / 2; ++j) {
                want[2 * j] = mred(s[j]);
                want[2 * j + 1] = mred(s[L / 2 + j]);
            }
            expect("mredw", %(p)smredw(lo, hi), want);
            (void)got;
        }
%(products)s
    }
    /* the uniform form on an operand whose lanes differ: wrong in the odd lanes */
    {
        int32_t a[L], c[L], want[L];
        for (int i = 0; i < L; ++i) { a[i] = 1000003 + i; c[i] = (int32_t)(123456789 * (i + 1)); }
        long before = bad;
%(misuse)s
        if (bad == before) { printf("a _u helper ignored its operand's odd lanes\n"); return 1; }
        bad = before;
    }
    if (bad) { printf("%%ld mismatches\n", bad); return 1; }
    printf("ok\n");
    return 0;
}
"""

SHOUP_C = """
        for (int i = 0; i < L; ++i) want[i] = shoup(a[i], b[i], c[i]);
        expect("shoupmul", %(p)sshoupmul(va, vb, vc), want);
        for (int i = 0; i < L; ++i) want[i] = shoup(a[i], b[i], u1);
        expect("shoupmul_u", %(p)sshoupmul_u(va, vb, w1), want);"""
SHOUP_MISUSE = """
        for (int i = 0; i < L; ++i) want[i] = shoup(a[i], 77, c[i]);
        expect("misuse", %(p)sshoupmul_u(ld(a), %(set1)s(77), ld(c)), want);"""
# a twisted pair: zq = z * q^-1 mod 2^32, so that the low halves of a*z and m*q agree
MONT_C = """
        int32_t zq[L], uq[L];
        for (int i = 0; i < L; ++i) zq[i] = lo32((int64_t)b[i] * QINV), uq[i] = lo32(u0 * QINV);
        for (int i = 0; i < L; ++i) want[i] = mont(a[i], b[i], zq[i]);
        expect("montmul", %(p)smontmul(va, vb, ld(zq)), want);
        for (int i = 0; i < L; ++i) want[i] = mont(a[i], u0, uq[i]);
        expect("montmul_u", %(p)smontmul_u(va, w0, ld(uq)), want);"""
MONT_MISUSE = """
        int32_t zq[L];
        for (int i = 0; i < L; ++i) zq[i] = lo32((int64_t)c[i] * QINV);
        for (int i = 0; i < L; ++i) want[i] = mont(a[i], c[i], zq[i]);
        expect("misuse", %(p)smontmul_u(ld(a), ld(c), ld(zq)), want);"""


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("const_mul", ["shoup", "montgomery"])
def test_product_helpers_compute_their_formulas(isa: str, const_mul: str, tmp_path: Path) -> None:
    """Each 32-bit product helper (``mulhi_u``, ``montmul_var``, ``mredw``, and ``shoupmul``
    or ``montmul`` with its ``_u`` form) equals its formula in 64-bit integers lane by lane
    for 20,000 vectors with random lanes and the ends of the range; a ``_u`` helper given an
    operand whose lanes differ is wrong."""
    cc = require_tool("gcc")
    files = _files(isa, const_mul)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    cls = isa_class(isa)
    w = cls.width
    ring = PRESETS["mldsa"]
    p = f"nttgen_mldsa_{isa}_"
    keys = {"p": p, "set1": f"_mm{w}_set1_epi32"}
    shoup = const_mul == "shoup"
    src = HELPERS_C % {
        "stem": files.stem,
        "lanes": w // 32,
        "q": ring.q,
        "qinv": pow(ring.q, -1, 1 << 32) - (1 << 32) * (pow(ring.q, -1, 1 << 32) >= 1 << 31),
        "vt": f"__m{w}i",
        "loadu": f"_mm{w}_loadu_si{w}((const __m{w}i *)p)" if w == 256 else "_mm512_loadu_si512(p)",
        "storeu": f"_mm{w}_storeu_si{w}((__m{w}i *)p, v)"
        if w == 256
        else "_mm512_storeu_si512(p, v)",
        "p": p,
        "products": (SHOUP_C if shoup else MONT_C) % keys,
        "misuse": (SHOUP_MISUSE if shoup else MONT_MISUSE) % keys,
    }
    c_file = tmp_path / "helpers.c"
    c_file.write_text(src)
    exe = tmp_path / "helpers"
    flags = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *cls.cflags)
    subprocess.run([cc, *flags, str(c_file), "-o", str(exe)], check=True)
    run = subprocess.run(
        [str(host_executable(isa, c_file, exe))], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout
