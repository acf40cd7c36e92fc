"""Timing of inline-assembly probe loops, for the bound scripts (``scripts/port_bound.py``,
``scripts/chain_bound.py``): each probe is a C function that returns TSC ticks per
instruction; this module wraps them in a program, compiles and runs it pinned, and reads the
figures back."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from . import run_pinned

PROBE_PRELUDE = (
    "#include <stdio.h>",
    "#include <stdint.h>",
    "static inline uint64_t tsc(void) { uint32_t lo, hi;"
    ' __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((uint64_t)hi << 32) | lo; }',
)
"""What every probe program starts with: ``tsc()``, the time-stamp counter."""


def time_probes(
    probes: list[str], calls: list[tuple[str, str, str]], zmm: bool, rounds: int
) -> dict[tuple[str, str], float]:
    """Run the probe functions ``probes`` (C text after :data:`PROBE_PRELUDE`, each
    ``static double fn(void)``) and return the best figure of each, keyed by (name, register
    kind) from ``calls`` = [(function, name, register kind), ...]. The program runs every probe
    once per round, ``rounds`` times (a disturbance lasting a few probes, such as another
    tenant on the core, then spoils one round, not every figure of one instruction), compiled
    with gcc -O2 for AVX2, or AVX-512 where ``zmm``, pinned to one CPU."""
    n = len(calls)
    lines = [*PROBE_PRELUDE, *probes]
    lines.append(f"int main(void) {{ double best[{n}]; double (*const fns[{n}])(void) = {{")
    lines.append(", ".join(fn for fn, _, _ in calls) + "};")
    lines.append(f"  for (int i = 0; i < {n}; i++) best[i] = 1e9;")
    lines.append(f"  for (int r = 0; r < {rounds}; r++) for (int i = 0; i < {n}; i++) {{")
    lines.append("    double t = fns[i](); if (t < best[i]) best[i] = t; }")
    for i, (_, name, reg) in enumerate(calls):
        lines.append(f'  printf("{name} {reg} %.4f\\n", best[{i}]);')
    lines.append("  return 0; }")
    flags = ["-mavx512f"] if zmm else ["-mavx2"]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probes.c"
        src.write_text("\n".join(lines))
        exe = Path(tmp) / "probes"
        subprocess.run(["gcc", "-O2", *flags, str(src), "-o", str(exe)], check=True)
        out = run_pinned([str(exe)], Path(tmp))
    table = {}
    for line in out.splitlines():
        name, reg, ticks = line.split()
        table[(name, reg)] = float(ticks)
    return table
