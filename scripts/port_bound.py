#!/usr/bin/env python3
"""How fast could each SIMD kernel be on this core? A lower bound from the multiplier alone.

1. Measures, with an inline-assembly loop of independent instructions, the reciprocal
   throughput in TSC ticks of the vector instructions the kernels use, for ymm and zmm
   registers (run it on an idle machine: the other vCPU is usually the same core's sibling).
2. Counts the multiplications each kernel executes (from the op counter: a 16-bit Montgomery
   product is 3 of them, a 32-bit one 5 (a ``vpmulld`` and 4 ``vpmuldq``), a 32-bit Shoup
   product 4) and multiplies by the measured cost of one
   multiplication of that register width: no schedule can beat that figure, since every
   multiplication goes through the same pipes. For 16-bit lanes it also bounds each kernel
   by all its vector ALU uops on all vector pipes (``uops``): what a kernel could reach with
   every pipe busy every cycle, which for a kernel whose additions, shuffles and reductions
   outnumber its multiplications is the tighter limit.

3. For an NTRU Prime ring (``sntrup761``, ``ntrulpr761``), times each stage of its polymul
   (forward, base, inverse, fold) alone in a harness of its own and sets beside it two bounds
   from the stage's op counts: its multiplications on the multiplier pipes, and all its
   vector instructions on all vector pipes (the uops of each op as clang emits it, see
   ``VEC_UOPS``). The share of the larger bound in the measured time says how much of a
   stage's time the pipes are busy, so how much a better schedule could still win.

    scripts/port_bound.py [--json bench.json [--cc CC]] [--pipeline NAME] [ring ...]

With ``--json`` (from ``nttgen bench --json``) it prints the measured ticks beside the bounds.
ISAs the CPU lacks are left out with a line that says so (``zmm`` needs AVX-512).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path

from nttgen.bench import ALIGN_FLAGS, run_pinned
from nttgen.bench.probes import time_probes
from nttgen.bench.report import medians_by_kernel
from nttgen.build import compiler
from nttgen.cpu import hardware_isas
from nttgen.dsl.ir import Buffer, Call, Function
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import NTRU_PIPELINES, NtruFileWriter
from nttgen.generate import kernel_set
from nttgen.interp.cost import OP_WEIGHTS, count_ops
from nttgen.ntru_rings import NTRU_PRESETS
from nttgen.plan.maps.choose import GRB
from nttgen.rings import PRESETS

N_REGS = 10
ITERS = 200_000
INSTRUCTIONS = {
    "vpmullw": "vpmullw %{r}31, %{r}{i}, %{r}{i}",
    "vpmulhw": "vpmulhw %{r}31, %{r}{i}, %{r}{i}",
    "vpmaddwd": "vpmaddwd %{r}31, %{r}{i}, %{r}{i}",
    "vpmuldq": "vpmuldq %{r}31, %{r}{i}, %{r}{i}",
    "vpmulld": "vpmulld %{r}31, %{r}{i}, %{r}{i}",
    "vpaddw": "vpaddw %{r}31, %{r}{i}, %{r}{i}",
    "vpsrlq": "vpsrlq $32, %{r}{i}, %{r}{i}",
    "vpunpcklqdq": "vpunpcklqdq %{r}31, %{r}{i}, %{r}{i}",
    "vpermt2w": "vpermt2w %{r}31, %{r}30, %{r}{i}",
}
# a butterfly's instructions (16-bit lanes): a Montgomery product by a twiddle (3 multiplies and a
# subtraction), then an addition and a subtraction; measured as a mix of independent chains
BUTTERFLY = ["vpmullw", "vpmulhw", "vpmulhw", "vpsubw", "vpaddw", "vpsubw"]
# multiplications per vocabulary op, by lane width (see emit/isa/x86.py)
MULS = {
    16: {"mullo": 1, "mulhi": 1, "montmul": 3, "shoupmul": 3, "montmul_var": 4, "barrett": 2},
    32: {"mullo": 1, "mulhi": 2, "montmul": 5, "shoupmul": 4, "montmul_var": 6, "barrett": 3},
}
OPS = ("ntt", "intt", "basemul", "polymul")
REGS = {"avx2": "ymm", "avx512": "zmm"}

# The NTRU Prime programs' ops (16-bit lanes) as the x86 backends emit them and clang compiles
# them: multiplications (vpmullw, vpmulhw, vpmulhrsw, vpmaddwd: the multiplier pipes) and all
# vector uops (any vector pipe). Loads, stores and broadcasts of constants are not counted.
NTRU_MULS = {
    "montmul": 3,  # mullo(a, zq), mulhi(a, z), mulhi(m, q)
    "barrett": 2,  # mulhi(a, v), mullo(t, q)
    "barrett_coarse": 2,  # mulhrs(a, v), mullo(t, q)
    "mulhi": 1,
    "mullo": 1,
    "pair_madd": 1,  # vpmaddwd
    "pair_mred": 4,  # per vector of 32-bit sums: mullo by q^-1 and madd by q, twice
    "madd": 2,  # double-width products (AVX-512's base): a vpmaddwd per 32-bit half
    "mredw": 4,  # mullo by q^-1 and madd by q per half
}
NTRU_VEC_UOPS = {
    **NTRU_MULS,
    "montmul": 4,  # and the subtraction
    "barrett": 5,  # and add, shift, subtraction
    "barrett_coarse": 3,  # and the subtraction
    "pair_mred": 8,  # and two 32-bit subtractions, a shift and a blend
    "add": 1,
    "sub": 1,
    "cond_add_q": 3,  # sign shift, and, add
    "zip": 1,
    "shuffle": 1,
    "pair_add": 1,
    "pair_blend": 1,
    "pair_swap": 2,  # clang lowers the one vpshufb to vpshuflw + vpshufhw
    "madd": 6,  # and 4 interleaves of the operands' words
    "addw": 2,  # a vpaddd per half
    "mredw": 9,  # and a subtraction and a shift per half, and a vpackssdw
}
NOT_VECTOR_WORK = {"load", "store", "const", "reductions"}


def uop_bound(counts: dict[str, int], t_mul: float, t_uop: float) -> float:
    """Ticks per call of a 16-bit kernel with op ``counts`` if every vector pipe were busy
    every cycle: the larger of its multiplies times ``t_mul`` (the multiplier pipes) and all
    its vector ALU uops, multiplies included, times ``t_uop`` (the reciprocal throughput of
    an addition, which runs on every pipe); the uops per op are those the generator ranks
    variants by (:data:`nttgen.interp.cost.OP_WEIGHTS`)."""
    muls = sum(OP_WEIGHTS[k][0] * v for k, v in counts.items() if k in OP_WEIGHTS)
    rest = sum(OP_WEIGHTS[k][1] * v for k, v in counts.items() if k in OP_WEIGHTS)
    return max(muls * t_mul, (muls + rest) * t_uop)


def probe_loop(fn: str, instructions: list[str], high: tuple[int, ...]) -> str:
    """A C function ``fn`` that runs ``instructions`` (AT&T syntax, on registers 0 ..
    N_REGS - 1 and those in ``high``) ITERS times as one inline-assembly block and returns the
    TSC ticks of one run divided by N_REGS: per instruction for N_REGS independent instructions,
    per group for N_REGS interleaved groups."""
    body = "\\n\\t".join(instructions).replace("%", "%%")
    # the clobbers keep the compiler's own values out of the registers the loop uses
    clobbers = ", ".join(f'"xmm{i}"' for i in (*range(N_REGS), *high))
    return (
        f"static double {fn}(void) {{ uint64_t t = tsc();"
        f' for (long i = 0; i < {ITERS}; i++) __asm__ volatile("{body}" ::: {clobbers});'
        f" return (double)(tsc() - t) / ({N_REGS}.0 * {ITERS}); }}"
    )


def measure(regs: tuple[str, ...]) -> dict[tuple[str, str], float]:
    """Ticks per instruction for every (instruction, register kind) of ``regs`` (``ymm``,
    ``zmm``: only those the CPU runs)."""
    # rdtsc as a volatile asm: volatile asms keep their order, an intrinsic may move
    lines: list[str] = []
    calls = []
    for k, (name, pattern) in enumerate(INSTRUCTIONS.items()):
        for reg in regs:
            text = pattern.replace("{r}", reg)
            if reg == "ymm":
                if "vpermt2w" in text:
                    continue
                text = text.replace("31", "15").replace("30", "14")
            high = (14, 15) if reg == "ymm" else (14, 15, 30, 31)
            fn = f"f{k}_{reg}"
            lines.append(probe_loop(fn, [text.format(i=i) for i in range(N_REGS)], high))
            calls.append((fn, name, reg))
    for reg in regs:
        c = "15" if reg == "ymm" else "31"
        seq = [
            f"{op} %{reg}{c}, %{reg}{i}, %{reg}{i}"
            for k in range(N_REGS)
            for i, op in [((k + j) % N_REGS, op) for j, op in enumerate(BUTTERFLY)]
        ]
        fn = f"butterfly_{reg}"
        lines.append(probe_loop(fn, seq, (int(c),)))
        calls.append((fn, "butterfly", reg))
    return time_probes(lines, calls, "zmm" in regs, rounds=15)


def c_args(call: Call) -> str:
    """The C arguments of a stage call, in the callee's parameter order."""
    bound = dict(call.args)
    out = []
    for p in call.callee.params:
        v = bound[p.name]
        out.append(v.name if isinstance(v, Buffer) else str(v))
    return ", ".join(out)


def stage_harness(stem: str, entry: Function, rounds: int = 7) -> str:
    """C source that includes ``stem``.c and times each stage call of ``entry`` (forward,
    base, ...) alone, and ``entry`` itself: per round and per call, the median of 301
    batches of 20 calls; the lowest median over the rounds is printed (one line per call,
    "label ticks"). Its buffers are static: ``entry``'s parameters, with random inputs in
    their contracts, and its locals, filled by running the stages once in order."""
    calls = [s for s in entry.body if isinstance(s, Call)]
    rng = random.Random(f"{stem}/{entry.name}")
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <x86intrin.h>",
        f'#include "{stem}.c"',
        "static inline uint64_t ticks(void) {",
        "    _mm_lfence(); uint64_t t = __rdtsc(); _mm_lfence(); return t; }",
        "static int by_value(const void *x, const void *y) {",
        "    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;",
        "    return (a > b) - (a < b); }",
    ]
    for b in [*entry.params, *entry.locals]:
        if not isinstance(b, Buffer):
            raise ValueError(f"{entry.name}: scalar parameter {b.name} is not supported")
        init = ""
        if b.role == "in" and b.contract is not None:
            lo, hi = b.contract
            init = " = {" + ", ".join(str(rng.randint(lo, hi)) for _ in range(b.length)) + "}"
        lines.append(f"static int16_t {b.name}[{b.length}] __attribute__((aligned(64))){init};")
    labels = []
    for i, c in enumerate(calls):
        labels.append(f"{c.callee.name} ({', '.join(c_args(c).split(', ')[1:])})")
        lines.append(
            f"__attribute__((noinline)) static void call_{i}(void) "
            f"{{ {stem}_{c.callee.name}({c_args(c)}); }}"
        )
    entry_args = ", ".join(b.name for b in entry.params)
    lines.append(
        f"__attribute__((noinline)) static void call_{len(calls)}(void) "
        f"{{ {stem}_{entry.name}({entry_args}); }}"
    )
    labels.append(entry.name)
    n = len(labels)
    lines += [
        f"static void (*const CALLS[{n}])(void) = {{"
        + ", ".join(f"call_{i}" for i in range(n))
        + "};",
        f"static const char *const LABELS[{n}] = {{{', '.join(json.dumps(x) for x in labels)}}};",
        "int main(void) {",
        f"    static uint64_t t[301]; double best[{n}];",
        f"    for (int i = 0; i < {n}; ++i) {{ CALLS[i](); best[i] = 1e30; }}",
        f"    for (int r = 0; r < {rounds}; ++r)",
        f"        for (int i = 0; i < {n}; ++i) {{",
        "            for (int s = 0; s < 301; ++s) {",
        "                uint64_t t0 = ticks();",
        "                for (int k = 0; k < 20; ++k) CALLS[i]();",
        "                t[s] = ticks() - t0;",
        "            }",
        "            qsort(t, 301, sizeof t[0], by_value);",
        "            double m = (double)t[150] / 20;",
        "            if (m < best[i]) best[i] = m;",
        "        }",
        f'    for (int i = 0; i < {n}; ++i) printf("%s\\t%.1f\\n", LABELS[i], best[i]);',
        "    return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def stage_ticks(
    ring_name: str, isa: str, pipeline: str, rounds: int = 7
) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """Measured ticks of each stage call of the ring's polymul and of polymul itself (see
    :func:`stage_harness`), and the op counts per stage function."""
    ring = NTRU_PRESETS[ring_name]
    w = NtruFileWriter(ring, isa, pipeline)
    files = w.files()
    entry = w.functions["polymul"]
    cls = isa_class(isa)
    with tempfile.TemporaryDirectory(prefix="nttgen-stages-") as tmp:
        d = Path(tmp)
        for name, text in files.items():
            (d / name).write_text(text)
        (d / "stages.c").write_text(stage_harness(files.stem, entry, rounds))
        cc = compiler(cls.compilers)
        flags = ["-std=c99", "-O3", *ALIGN_FLAGS, *cls.cflags]
        subprocess.run([cc, *flags, "stages.c", "-o", "stages"], cwd=d, check=True)
        out = run_pinned([str(d / "stages")], d)
    ticks = {}
    for line in out.splitlines():
        label, value = line.rsplit("\t", 1)
        ticks[label] = float(value)
    return ticks, w.costs


def ntru_report(ring_name: str, isa: str, pipeline: str, cost: dict) -> None:
    """Print the stage table of one NTRU Prime ring for one ISA (see the module docstring)."""
    reg = REGS[isa]
    t_mul, t_vec = cost[("vpmullw", reg)], cost[("vpaddw", reg)]
    measured, counts = stage_ticks(ring_name, isa, pipeline)
    print(f"\n{ring_name} ({pipeline}), {isa}: one multiplication {t_mul:.3f} ticks, any vector")
    print(f"uop {t_vec:.3f} (vpaddw); bound = the larger of muls x {t_mul:.3f} and uops x")
    print(f"{t_vec:.3f}; busy = bound / measured")
    print(f"{'call':34s} {'muls':>6s} {'uops':>6s} {'bound':>6s} {'measured':>9s} {'busy':>5s}")
    unmodelled: set[str] = set()
    for label, ticks in measured.items():
        fn = label.split(" ")[0]
        ops = counts[fn]
        unmodelled |= {k for k in ops if k not in NTRU_VEC_UOPS and k not in NOT_VECTOR_WORK}
        muls = sum(NTRU_MULS.get(k, 0) * v for k, v in ops.items())
        uops = sum(NTRU_VEC_UOPS.get(k, 0) * v for k, v in ops.items())
        bound = max(muls * t_mul, uops * t_vec)
        print(f"{label:34s} {muls:6d} {uops:6d} {bound:6.0f} {ticks:9.0f} {bound / ticks:5.0%}")
    if unmodelled:
        print(f"(ops with no uop count, left out of the bounds: {', '.join(sorted(unmodelled))})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rings", nargs="*", default=list(PRESETS))
    ap.add_argument("--json", help="nttgen bench --json output, for the measured column")
    ap.add_argument("--cc", default="clang-19", help="the compiler whose times a --cc run shows")
    ap.add_argument("--pipeline", default=GRB, choices=NTRU_PIPELINES, help="NTRU Prime rings")
    args = ap.parse_args()
    for name in args.rings:
        if name not in PRESETS and name not in NTRU_PRESETS:
            ap.error(f"unknown ring {name!r}: presets are {', '.join([*PRESETS, *NTRU_PRESETS])}")
    runs = [isa for isa in REGS if isa in hardware_isas()]
    for isa in REGS:
        if isa not in runs:
            print(f"{isa}: left out (no {isa.upper()} on this CPU)")
    if not runs:
        return
    cost = measure(tuple(REGS[isa] for isa in runs))
    print("reciprocal throughput, TSC ticks per instruction (10 independent chains):")
    for (name, reg), t in sorted(cost.items()):
        print(f"  {name:12s} {reg}  {t:.3f}")
    print("  (butterfly: 3 multiplies, 1 subtraction, 1 addition, 1 subtraction per group)")
    measured = medians_by_kernel(Path(args.json), OPS, args.cc) if args.json else {}
    ntt_rings = [r for r in args.rings if r in PRESETS]
    if ntt_rings:
        print("\nlower limits in ticks per call: 'mul' from the multiplies alone; 'bfly' from the")
        print("butterfly mix, for the transforms (one group per Montgomery product by a twiddle);")
        print("'uops' from every vector ALU uop on every vector pipe, multiplies on theirs (16-bit")
        print("lanes: the uops of nttgen.interp.cost.OP_WEIGHTS; loads and stores left out)")
        head = f"{'ring':12s} {'op':8s} {'isa':7s} {'muls':>6s} {'mul':>6s} {'bfly':>6s}"
        print(head + f" {'uops':>6s} {'measured':>9s}")
    for name in ntt_rings:
        ring = PRESETS[name]
        for isa in runs:
            reg = REGS[isa]
            ks = kernel_set(ring, isa)
            mul_cost = cost[("vpmullw" if ring.lane.bits == 16 else "vpmuldq", reg)]
            for op in OPS:
                counts = count_ops(ks.functions[op])
                muls = sum(MULS[ring.lane.bits].get(k, 0) * v for k, v in counts.items())
                got = measured.get((name, isa, op))
                shown = f"{got:9.0f}" if got else f"{'-':>9s}"
                bfly = uops = "-"
                if op in ("ntt", "intt") and ring.lane.bits == 16:
                    bfly = f"{counts.get('montmul', 0) * cost[('butterfly', reg)]:.0f}"
                if ring.lane.bits == 16:
                    uops = f"{uop_bound(counts, mul_cost, cost[('vpaddw', reg)]):.0f}"
                row = f"{name:12s} {op:8s} {isa:7s} {muls:6d} {muls * mul_cost:6.0f} {bfly:>6s}"
                print(f"{row} {uops:>6s} {shown}")
    for name in args.rings:
        if name in NTRU_PRESETS:
            for isa in runs:
                ntru_report(name, isa, args.pipeline, cost)


if __name__ == "__main__":
    main()
