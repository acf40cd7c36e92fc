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

RVV (``rvv128``, ``rvv256``): the single-pass indexed loads of seed 004 (``shuffles="indexed"``:
each chunk's lane bits are exchanged with slot bits as it is loaded, by ``vluxei`` at constant
lane offsets, the inverse scattering its stores by ``vsuxei``; no in-register shuffle at all)
execute fewer instructions than the masked slides for every preset at both VLENs (QEMU counts
per call, slides -> indexed, 2026-11-23; VLEN 128: ML-KEM NTT 1,712 -> 1,357, inverse 1,965 ->
1,378, polymul 6,095 -> 4,847; ML-DSA 3,591 -> 3,373, 3,575 -> 3,406, 11,695 -> 11,149;
NewHope-1024 polymul 31,589 -> 29,371; VLEN 256: ML-KEM polymul 2,654 -> 2,191, ML-DSA 6,357
-> 5,343, Kyber-r1 2,777 -> 2,353). The seed measured indexed loads as the best way to
permute on a real VLEN-128 core too; LMUL > 1 and longer VLENs keep the slides (unmeasured).

AVX-512 has no entries: for every preset the heuristic plan (the whole transform in one pass
for n <= 512, a first layer then nine for n = 1024) was fastest or within noise of the best
candidate, and the two shuffle styles measured within noise of each other (the kernels are
multiplier-bound on this core, see ``scripts/port_bound.py``).
"""

from __future__ import annotations

_PRESETS = ("mlkem", "mldsa", "kyber-r1", "newhope512", "newhope1024", "falcon512", "falcon1024")

TUNED: dict[tuple[str, str], dict[str, object]] = {
    ("mlkem", "avx2"): {"extra_slots": (2, 1), "unroll": False},
    ("mldsa", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("kyber-r1", "avx2"): {"extra_slots": (2, 1), "unroll": False},
    ("newhope512", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("falcon512", "avx2"): {"extra_slots": (1, 1), "unroll": False},
    ("newhope1024", "avx2"): {"merge": (2, 8), "extra_slots": (1, 0), "unroll": False},
    ("falcon1024", "avx2"): {"merge": (2, 8), "extra_slots": (1, 0), "unroll": False},
    **{(ring, isa): {"shuffles": "indexed"} for ring in _PRESETS for isa in ("rvv128", "rvv256")},
}


NTRU_TUNED: dict[tuple[int, int, str], dict[str, int]] = {
    # AVX-512, sntrup761/ntrulpr761 (p = 761, q = 4591), Good–Rader pipeline: its base leaves
    # the pieces within about 2.2q (the double-width sums), and the inverse DFT's lazy policy
    # then reduces late; reducing every operand wider than 4q before its next op takes the
    # same number of reductions (136 -> 137) but measured faster (stage harness built with
    # the ISA's flags, best of 5: inverse 1,019 -> 895 ticks, polymul 5,346 -> 5,201).
    # AVX2's Karatsuba base left them within 5.4q, and it measured slower with it (polymul
    # 6,064 -> 6,199); its pair-sum base leaves them within 1.8q, and there the lazy policy
    # took 438 reductions against 352 with the threshold (stage harness, clang-19, best of 3,
    # Zen 3: inverse 1,643 -> 1,129 ticks, polymul 5,839 -> 5,402; 3q: 1,271 and 5,480).
    # Re-checked when AVX2 dropped forward_small (Isa.small_forward; the base's second input
    # then within 11,344, not 30,728): 4q places 392 inverse reductions and 5q 320, but 5q
    # measured about 1 % slower (benchmark libraries alternated, polymul 4,972 -> 5,022).
    (761, 4591, "avx512"): {"inverse_threshold_q": 4},
    (761, 4591, "avx2"): {"inverse_threshold_q": 4},
}
"""Measured choices for the NTRU Prime programs, per (p, q, ISA): ``inverse_threshold_q``,
the reduction threshold of the Good–Rader inverse DFT in multiples of q (see
:class:`nttgen.programs.lazy.Reducer`)."""
