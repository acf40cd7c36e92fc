"""Measured choices of pass plans for the presets, per SIMD ISA.

Each entry overrides fields of :func:`nttgen.generate.heuristic_config`. They were chosen with
``scripts/tune.py ISA``, which times the candidate plans of a ring side by side in one harness
run on the development machine (AMD Zen 5, see MACHINE.md), by ``polymul`` first and the
transforms second; generation only reads this table, so it stays deterministic. A custom ring
with a preset's shape (n, NTT depth, lane width) uses that preset's entry; other rings use the
heuristic plan.

Findings behind them (AVX2): one more interleaved register slot in the last pass (both halves of
a 256-coefficient polynomial in flight at once) is worth 10-15 % on n = 256: the kernels are
latency-bound with 16 registers; keeping the loops over chunks (instead of unrolling them)
costs nothing and keeps several kernels inside the 32 KB instruction cache at once. For
n = 1024 a last pass of eight layers (16 registers of data, spilling) beats seven layers with
spare registers by 12-14 % (ntt 639 vs 731 ticks, polymul 2,122 vs 2,451): the kernels are
latency-bound and the larger pass gives the out-of-order core more independent work; this only
paid once polymul stopped inlining the transforms (see ``emit/c_emit.py``).

AVX-512 has no entries: for every preset the heuristic plan (the whole transform in one pass
for n <= 512, a first layer then nine for n = 1024) was fastest or within noise of the best
candidate, and the two shuffle styles measured within noise of each other (the kernels are
multiplier-bound on this core, see ``scripts/port_bound.py``).
"""

from __future__ import annotations

TUNED: dict[tuple[str, str], dict[str, object]] = {
    ("mlkem", "avx2"): {"extra_slots": (2, 1), "unroll": False},
    ("mldsa", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("kyber-r1", "avx2"): {"extra_slots": (2, 1), "unroll": False},
    ("newhope512", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("falcon512", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("newhope1024", "avx2"): {"merge": (2, 8), "extra_slots": (1, 0), "unroll": False},
    ("falcon1024", "avx2"): {"merge": (2, 8), "extra_slots": (1, 0), "unroll": False},
}
