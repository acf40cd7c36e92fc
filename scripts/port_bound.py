#!/usr/bin/env python3
"""How fast could each SIMD kernel be on this core? A lower bound from the multiplier alone.

1. Measures, with an inline-assembly loop of independent instructions, the reciprocal
   throughput in TSC ticks of the vector instructions the kernels use, for ymm and zmm
   registers (run it on an idle machine: the other vCPU is usually the same core's sibling).
2. Counts the multiplications each kernel executes (from the op counter: a 16-bit Montgomery
   product is 3 of them, a 32-bit one 5 (a ``vpmulld`` and 4 ``vpmuldq``), a 32-bit Shoup
   product 4) and multiplies by the measured cost of one
   multiplication of that register width: no schedule can beat that figure, since every
   multiplication goes through the same pipes.

    scripts/port_bound.py [--json bench.json] [ring ...]

With ``--json`` (from ``nttgen bench --json``) it prints the measured ticks beside the bounds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from nttgen.generate import kernel_set
from nttgen.interp.cost import count_ops
from nttgen.rings import PRESETS

N_REGS = 10
ITERS = 200_000
INSTRUCTIONS = {
    "vpmullw": "vpmullw %{r}31, %{r}{i}, %{r}{i}",
    "vpmulhw": "vpmulhw %{r}31, %{r}{i}, %{r}{i}",
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


def measure() -> dict[tuple[str, str], float]:
    """Ticks per instruction for every (instruction, register kind)."""
    # rdtsc as a volatile asm: volatile asms keep their order, an intrinsic may move
    lines = [
        "#include <stdio.h>",
        "#include <stdint.h>",
        "static inline uint64_t tsc(void) { uint32_t lo, hi;"
        ' __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((uint64_t)hi << 32) | lo; }',
    ]
    calls = []
    for k, (name, pattern) in enumerate(INSTRUCTIONS.items()):
        for reg in ("ymm", "zmm"):
            text = pattern.replace("{r}", reg)
            if reg == "ymm":
                if "vpermt2w" in text:
                    continue
                text = text.replace("31", "15").replace("30", "14")
            body = "\\n\\t".join(text.format(i=i) for i in range(N_REGS)).replace("%", "%%")
            # the clobbers keep the compiler's own values out of the registers the loop uses
            clobbers = ", ".join(f'"xmm{i}"' for i in (*range(N_REGS), 14, 15, 30, 31))
            fn = f"f{k}_{reg}"
            lines.append(
                f"static double {fn}(void) {{ uint64_t t = tsc();"
                f' for (long i = 0; i < {ITERS}; i++) __asm__ volatile("{body}" ::: {clobbers});'
                f" return (double)(tsc() - t) / ({N_REGS}.0 * {ITERS}); }}"
            )
            calls.append((fn, name, reg))
    for reg in ("ymm", "zmm"):
        c = "15" if reg == "ymm" else "31"
        seq = [
            f"{op} %{reg}{c}, %{reg}{i}, %{reg}{i}"
            for k in range(N_REGS)
            for i, op in [((k + j) % N_REGS, op) for j, op in enumerate(BUTTERFLY)]
        ]
        body = "\\n\\t".join(seq).replace("%", "%%")
        clobbers = ", ".join(f'"xmm{i}"' for i in (*range(N_REGS), 15, 31))
        fn = f"butterfly_{reg}"
        lines.append(
            f"static double {fn}(void) {{ uint64_t t = tsc();"
            f' for (long i = 0; i < {ITERS}; i++) __asm__ volatile("{body}" ::: {clobbers});'
            f" return (double)(tsc() - t) / ({N_REGS}.0 * {ITERS}); }}"
        )
        calls.append((fn, "butterfly", reg))
    lines.append("int main(void) { double best;")
    for fn, name, reg in calls:
        lines.append(
            f"  best = 1e9; for (int r = 0; r < 7; r++) {{ double t = {fn}();"
            f' if (t < best) best = t; }} printf("{name} {reg} %.4f\\n", best);'
        )
    lines.append("  return 0; }")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "mb.c"
        src.write_text("\n".join(lines))
        exe = Path(tmp) / "mb"
        subprocess.run(["gcc", "-O2", "-mavx512f", str(src), "-o", str(exe)], check=True)
        out = subprocess.run(["taskset", "-c", "0", str(exe)], capture_output=True, text=True)
    table = {}
    for line in out.stdout.splitlines():
        name, reg, ticks = line.split()
        table[(name, reg)] = float(ticks)
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rings", nargs="*", default=list(PRESETS))
    ap.add_argument("--json", help="nttgen bench --json output, for the measured column")
    args = ap.parse_args()
    cost = measure()
    print("reciprocal throughput, TSC ticks per instruction (10 independent chains):")
    for (name, reg), t in sorted(cost.items()):
        print(f"  {name:12s} {reg}  {t:.3f}")
    measured = {}
    if args.json:
        for rec in json.loads(Path(args.json).read_text())["results"]:
            if rec["op"] in OPS:
                measured[(rec["ring"], rec["isa"], rec["op"])] = rec["median"]
    print("  (butterfly: 3 multiplies, 1 subtraction, 1 addition, 1 subtraction per group)")
    print("\nlower limits in ticks per call: 'mul' from the multiplies alone; 'bfly' from the")
    print("butterfly mix, for the transforms (one group per Montgomery product by a twiddle)")
    head = f"{'ring':12s} {'op':8s} {'isa':7s} {'muls':>6s} {'mul':>6s} {'bfly':>6s}"
    print(head + f" {'measured':>9s}")
    for name in args.rings:
        ring = PRESETS[name]
        for isa, reg in (("avx2", "ymm"), ("avx512", "zmm")):
            ks = kernel_set(ring, isa)
            mul_cost = cost[("vpmullw" if ring.lane.bits == 16 else "vpmuldq", reg)]
            for op in OPS:
                counts = count_ops(ks.functions[op])
                muls = sum(MULS[ring.lane.bits].get(k, 0) * v for k, v in counts.items())
                got = measured.get((name, isa, op))
                shown = f"{got:9.0f}" if got else f"{'-':>9s}"
                bfly = "-"
                if op in ("ntt", "intt") and ring.lane.bits == 16:
                    bfly = f"{counts.get('montmul', 0) * cost[('butterfly', reg)]:.0f}"
                row = f"{name:12s} {op:8s} {isa:7s} {muls:6d} {muls * mul_cost:6.0f} {bfly:>6s}"
                print(f"{row} {shown}")


if __name__ == "__main__":
    main()
