"""The ``pair_*`` ops as the x86 backends emit them (``vpmaddwd``, ``vpaddd``, the
``pair_mred`` and ``pair_swap`` helpers, ``vpblendw`` or a masked blend), compiled with gcc
and clang under -Werror and run against the exact semantics of :mod:`nttgen.dsl.semantics`,
at the extremes of their operand ranges and on random lanes. AVX-512's code is compiled and
checked here even where this CPU cannot run it (the NTRU Prime program uses pair sums on AVX2
only, so this is where AVX-512's templates are exercised)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_command, host_executable
from nttgen.dsl import semantics
from nttgen.emit import c_ast as C
from nttgen.emit.files import _used_helpers
from nttgen.emit.isa import isa_class
from nttgen.emit.isa.base import EmitContext
from nttgen.lanes import I16
from nttgen.plan.constants import Arith

Q = 4591
CASES = 40


def _inputs(lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """a anywhere in the lane, b within q/2 (as the NTRU Prime base's reduced operand), so
    that the sum of two pair sums fits 32 bits: both extremes, mixed signs, then random
    lanes."""
    top, h = 1 << 15, (Q - 1) // 2
    rng = np.random.default_rng(lanes)
    a = [np.full(lanes, -top), np.full(lanes, top - 1), np.resize([top - 1, -top], lanes)]
    b = [np.full(lanes, h), np.full(lanes, -h), np.resize([-h, h], lanes)]
    a += list(rng.integers(-top, top, (CASES - 3, lanes)))
    b += list(rng.integers(-h, h + 1, (CASES - 3, lanes)))
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)


def _program(isa: str, a: np.ndarray, b: np.ndarray) -> str:
    """A C program that applies every pair op to each case and prints the lanes."""
    backend = isa_class(isa)(EmitContext(Arith(Q, I16), "t"))
    x, y = C.Name("x"), C.Name("y")
    w = C.Name("w")
    sums = backend.pair_add(w, backend.pair_madd(y, x))
    body: list[C.Stmt] = [
        C.Decl(backend.vec_type(), "x", backend.load(C.Name("a"), C.Int(0), False), const=True),
        C.Decl(backend.vec_type(), "y", backend.load(C.Name("b"), C.Int(0), False), const=True),
        C.Decl(backend.vec_type(), "w", backend.pair_madd(x, y), const=True),
        C.Decl(backend.vec_type(), "w2", sums, const=True),
    ]
    outs = (
        w,
        C.Name("w2"),
        backend.pair_mred(w, C.Name("w2")),
        backend.pair_swap(x),
        backend.pair_blend(x, y),
    )
    lanes = len(a[0])
    for k, v in enumerate(outs):
        body.append(backend.store(C.Name("r"), C.Int(k * lanes), v, False))
    kernel = C.FuncDef(
        "void",
        "apply",
        (
            C.Param("int16_t", "r", "restrict"),
            C.Param("const int16_t", "a", "restrict"),
            C.Param("const int16_t", "b", "restrict"),
        ),
        tuple(body),
        storage="static",
    )
    unit = C.Unit(
        [
            C.Directive("#include <stdint.h>"),
            C.Directive("#include <stdio.h>"),
            *(C.Directive(f"#include <{h}>") for h in backend.includes),
            *_used_helpers(backend.helpers(), [kernel]),
            kernel,
        ]
    )
    rows = lambda m: ",\n".join("{" + ", ".join(map(str, r)) + "}" for r in m.tolist())  # noqa: E731
    main = f"""
static const int16_t A[{len(a)}][{lanes}] = {{{rows(a)}}};
static const int16_t B[{len(b)}][{lanes}] = {{{rows(b)}}};
int main(void) {{
    int16_t r[{5 * lanes}];
    for (int c = 0; c < {len(a)}; ++c) {{
        apply(r, A[c], B[c]);
        for (int i = 0; i < {5 * lanes}; ++i) printf("%d ", r[i]);
        printf("\\n");
    }}
    return 0;
}}
"""
    return unit.render() + main


@pytest.mark.parametrize("compiler", ["gcc", "clang-19"])
@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_pair_ops_compiled(isa: str, compiler: str, tmp_path: Path) -> None:
    """Lane for lane equal to the semantics: pair sums (two 16-bit halves of each 32-bit lane
    as stored), their sum, the interleaved Montgomery reductions, the swap and the blend."""
    lanes = isa_class(isa).lanes_for(I16)
    a, b = _inputs(lanes)
    src = tmp_path / "pairs.c"
    src.write_text(_program(isa, a, b))
    exe = tmp_path / "pairs"
    flags = [*isa_class(isa).cflags]
    cmd = [*compile_command(compiler, isa), "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([*cmd, *flags, str(src), "-o", str(exe)], check=True)
    run = host_executable(isa, src, exe)  # SIMDe's translation where the CPU lacks the ISA
    out = subprocess.run([str(run)], capture_output=True, text=True, check=True).stdout
    got = np.array([[int(v) for v in line.split()] for line in out.splitlines()])
    ar = Arith(Q, I16)
    w = semantics.pair_madd(a, b)
    w2 = w + semantics.pair_madd(b, a)

    def as_halves(v: np.ndarray) -> np.ndarray:
        """32-bit lanes as the two 16-bit lanes memory holds (little-endian)."""
        lo = ((v & 0xFFFF) ^ 0x8000) - 0x8000
        hi = v >> 16
        return np.stack((lo, hi), axis=-1).reshape(len(v), -1)

    want = [
        as_halves(w),
        as_halves(w2),
        semantics.pair_mred(w, w2, I16, Q, ar.qinv),
        semantics.pair_swap(a),
        semantics.pair_blend(a, b),
    ]
    for k, expect in enumerate(want):
        assert (got[:, k * lanes : (k + 1) * lanes] == expect).all(), k
