"""Measured choices of pass plans for the presets, per SIMD ISA.

Each entry overrides fields of :func:`nttgen.generate.heuristic_config`. They were chosen with
``scripts/tune.py ISA``, which times the candidate plans of a ring side by side in one harness
run on the development machine (AMD Zen 5, see MACHINE.md), by ``polymul`` first and the
transforms second; generation only reads this table, so it stays deterministic. A custom ring
with a preset's shape (n, NTT depth, lane width) uses that preset's entry; other rings use the
heuristic plan with their ISA's defaults (:data:`ISA_DEFAULTS`).

Findings behind them (AVX2): one more interleaved register slot in the last pass (both halves of
a 256-coefficient polynomial in flight at once) is worth 10-15 % on n = 256: the kernels are
latency-bound with 16 registers; keeping the loops over chunks (instead of unrolling them)
costs clang nothing and keeps several kernels inside the 32 KB instruction cache at once. gcc
keeps ML-KEM's and Kyber-r1's inverse loop over two blocks as a loop, and that costs it
(2026-11-28, Zen 5, one harness, gcc 12 / clang-19 intt ticks, loops -> unrolled: ML-KEM 104 /
97 -> 95 / 96, Kyber-r1 109 / 104 -> 106 / 104; ntt and polymul unchanged or faster, the
files 3 % larger), so those two are unrolled; ML-DSA and NewHope-512 were no faster so (gcc's
ML-DSA polymul 1,005 -> 1,379, clang's NewHope-512 intt 270 -> 297). For
n = 1024 a last pass of eight layers (16 registers of data, spilling) beats seven layers with
spare registers by 12-14 % (ntt 639 vs 731 ticks, polymul 2,122 vs 2,451): the kernels are
latency-bound and the larger pass gives the out-of-order core more independent work; this only
paid once polymul stopped inlining the transforms (see ``emit/c_emit.py``).

AVX-512: the ``blocks`` shuffle style (128-bit blocks interleaved by one ``vpermt2q`` per output
where ``native`` takes two ``vshufi64x2``, as clang rewrites them anyway). gcc's transforms got
5-9 % faster and clang's did not move (2026-11-28, Zen 5, one harness per ring, gcc / clang-19
ticks, native -> blocks: ML-KEM ntt 73 / 62 -> 66 / 62, intt 70 / 62 -> 66 / 62, polymul 189 /
171 -> 175 / 171; Kyber-r1 ntt 83 / 72 -> 77 / 72, polymul 208 / 184 -> 194 / 184; NewHope-512
polymul 390 / 383 -> 368 / 388; ML-DSA 510 / 489 -> 491 / 484; NewHope-1024 923 / 838 ->
875 / 842). NTRU Prime keeps ``native``: with ``blocks`` gcc's sntrup761 polymul went 2,838 ->
3,022.

gcc's scheduling before register allocation (``gcc_options``, ``GCC_SCHED_PRESSURE``: the file
asks gcc for ``-fschedule-insns -fsched-pressure`` by a pragma; x86 gcc runs neither by default,
and the first alone spills: sntrup761 polymul 3,238 -> 5,169 ticks) is taken by ML-KEM's and
Kyber-r1's AVX-512 files and by NTRU Prime's Good–Rader files on AVX2 (below). 2026-11-29, Zen
5, gcc 12,
``nttgen bench`` with gcc and gcc with the two flags side by side, 500 samples, two runs,
ratios with / without: AVX-512 ML-KEM ntt 0.97, intt 1.00, polymul 0.98; Kyber-r1 0.95-0.96,
0.96, 0.97; ML-DSA 0.98, 1.03, 1.00; NewHope-512 0.97, 1.00, 1.03; NewHope-1024 0.99-1.00, so
those three keep gcc's default. Every AVX2 x^n + 1 file got slower with it (ML-KEM and
Kyber-r1 ntt 1.10, polymul 1.05-1.09; NewHope ntt 1.07-1.08).

Transforms of k polynomials two at a time (``paired_transforms``: ``ntt_vec`` and ``intt_vec``
call a body that transforms two polynomials, on two arrays, pass by pass) for ML-KEM and
Kyber-r1 on AVX2 and AVX-512, whose transforms are a few straight runs of short chains, which
the schedule then interleaves. 2026-11-29, Emerald Rapids, one harness, gcc 12 / clang-19
ticks, k = 2 against two single calls: AVX-512 ML-KEM ntt 179 / 188 against 212 / 214, intt
193 / 201 against 224 / 222; Kyber-r1 ntt 209 / 229 against 262, intt 212 / 217 against 238 /
240; AVX2 ML-KEM ntt 243 / 255 against 260 / 252, intt 262 / 269 against 280 / 284. The
transforms of several passes as loops gain nothing (ML-DSA, NewHope-512, NewHope-1024, k = 2
against two calls 0.97-1.02 on both ISAs), so they call the single transform k times.

Coarse reductions (``coarse_reductions``, 16-bit SIMD lanes: each function built with
Barrett's and with the coarse reductions, the cheaper kept) are on by default; NewHope-512 on
``rvv128`` at LMUL 2 and 1 keeps Barrett's, where the coarse inverse spilled (2026-11-29).

RVV (``rvv128``, ``rvv256``): single-pass indexed loads (``shuffles="indexed"``: each chunk's lane
bits are exchanged with slot bits as it is loaded, by ``vluxei`` at constant lane offsets, the
inverse scattering its stores by ``vsuxei``; no in-register shuffle at all) execute fewer
instructions than the masked slides for every preset at both VLENs (QEMU counts per call at LMUL 1,
slides -> indexed, 2026-11-23; VLEN 128: ML-KEM NTT 1,712 -> 1,357, inverse 1,965 -> 1,378, polymul
6,095 -> 4,847; ML-DSA 3,591 -> 3,373, 3,575 -> 3,406, 11,695 -> 11,149; NewHope-1024 polymul 31,589
-> 29,371; VLEN 256: ML-KEM polymul 2,654 -> 2,191, ML-DSA 6,357 -> 5,343, Kyber-r1 2,777 -> 2,353).
LMUL 2 and 4 take them as well (ML-KEM at VLEN 128, LMUL 4, slides -> indexed, ntt 511 -> 430,
polymul 2,111 -> 1,640); LMUL 8 and the longer VLENs keep the slides.

NEON and RVV (``rvv128``, ``rvv256``, at each LMUL but 8): the transforms' passes as loops over
chunks, as on AVX2, except ML-KEM on NEON; the base multiplications stay unrolled.
QEMU guest instructions per call, unrolled -> loops (clang-19 -O3, 2026-11-27): the loops cost
at most 3 % on an ntt (ML-KEM ``rvv128`` 1,351 -> 1,394) and gain up to 25 % (NewHope-1024
``rvv256`` 4,633 -> 3,490: the unrolled passes spill); polymul moved by -18 % to 0 (NewHope-1024
``rvv256`` 14,860 -> 12,138; Kyber-r1 NEON 3,931 -> 3,891; ML-DSA NEON 6,545 -> 6,374) except
in the two pairs left unrolled (ML-KEM NEON polymul 3,483 -> 3,524, ntt 835 -> 851; ML-DSA
``rvv256`` 5,353 -> 5,447, intt 1,630 -> 1,764), and the files became 2 to 5 times smaller
(NewHope-1024 NEON 902 -> 183 KB of C). The base multiplications as loops executed up to 37 %
more instructions (ML-DSA NEON basemul 524 -> 717), so ``unroll_products`` keeps them
unrolled there. ML-DSA on ``rvv256`` went back to loops when the RVV planner stopped filling
all 32 registers (``FIXED_PLAN_REGISTERS``, 2026-11-28: unrolled it still spilled; ntt 1,454
-> 1,402, intt 1,535 -> 1,452, polymul 4,896 -> 4,721).

RVV pass plans (``_RVV_PLANS``, from ``scripts/tune.py rvv128|rvv256``): every split of the
NTT's layers into two or three passes, and into four of at most three layers, with and without
one more register slot in the first, counted under QEMU per preset and VLEN (clang-19 -O3), and
the plan with the fewest polymul instructions among those whose file has no vector spill kept.

- LMUL 2 (``rvv128``, ``rvv256``; 2026-11-28): twelve register groups, so passes of three
  layers at most; NewHope-512 and -1024 spilled with every plan of two or three passes (26 and
  more vector spills and reloads) and take four (five for NewHope-1024 at VLEN 256, whose four
  kept 4). Instructions per call (and vector work, see :mod:`nttgen.bench.icount`) of ntt /
  intt / polymul, LMUL 1's plan -> LMUL 2's: VLEN 128 ML-KEM 1,172 / 1,381 / 4,477 -> 622
  (1,099) / 735 (1,318) / 2,363 (4,205); ML-DSA 2,576 / 2,642 / 8,708 -> 1,368 (2,387) /
  1,416 (2,501) / 4,617 (8,092); NewHope-1024 6,560 / 7,033 / 21,969 -> 3,766 (6,895) / 3,832
  (7,123) / 12,284 (22,537); VLEN 256 ML-KEM 579 / 676 / 2,218 -> 317 (562) / 377 (682) / 1,213
  (2,161); NewHope-1024 3,396 / 3,548 / 11,260 -> 2,148 (3,820) / 2,035 (3,760) / 6,803
  (12,224). The whole table is in ``docs/measurements.md``.
- LMUL 1 (``rvv128m1``, ``rvv256m1``; 2026-11-28), ntt / intt / polymul, heuristic plan ->
  chosen (VLEN-agnostic ``rvv`` at the same VLEN). Two passes of 16 registers executed fewer
  still for the n = 256 rings, 1-4 % below the VLEN-agnostic code, but spilled 1-4 vector
  registers.

  - VLEN 128: ML-KEM 1,223 / 1,396 / 4,594 -> 1,169 / 1,378 / 4,474 (1,082 / 1,264 / 4,272);
    ML-DSA 2,626 / 2,684 / 8,850 -> 2,573 / 2,639 / 8,705 (2,466 / 2,600 / 8,746); NewHope-512
    3,191 / 3,358 / 10,654 -> 3,112 / 3,359 / 10,503 (3,065 / 3,471 / 10,955); NewHope-1024
    7,153 / 7,425 / 23,547 -> 6,557 / 7,030 / 21,966 (6,674 / 7,565 / 23,387). Kyber-r1 keeps
    the heuristic plan (1,418 / 1,490 / 4,788; the best without spills, 4,773, has a slower
    inverse; agnostic 1,331 / 1,504 / 4,762).
  - VLEN 256: ML-KEM 610 / 704 / 2,349 -> 576 / 673 / 2,215 (576 / 665 / 2,257); Kyber-r1
    723 / 766 / 2,451 -> 686 / 756 / 2,373 (716 / 784 / 2,515); ML-DSA 1,368 / 1,416 / 4,617
    -> 1,345 / 1,382 / 4,543 (1,298 / 1,370 / 4,576); NewHope-512 1,704 / 1,740 / 5,613 ->
    1,628 / 1,702 / 5,429 (2,033 / 2,299 / 7,047); NewHope-1024 3,751 / 3,794 / 12,212 ->
    3,393 / 3,545 / 11,257 (3,389 / 3,841 / 11,865).
"""

from __future__ import annotations

from dataclasses import dataclass

from .programs.build_config import GCC_NO_PREDICTIVE_COMMONING, GCC_SCHED_PRESSURE

_PRESETS = ("mlkem", "mldsa", "kyber-r1", "newhope512", "newhope1024")

_LOOPS = {"unroll": False, "unroll_products": False}
_LOOPS_T = {"unroll": False}  # the transforms as loops, the base multiplications unrolled
_UNROLLED = {("mlkem", "neon")}  # measured fewer instructions unrolled


def _unrolled_or_loops(ring: str, isa: str) -> dict[str, object]:
    """The transforms unrolled where that measured fewer instructions, else as loops."""
    return {"unroll": True} if (ring, isa) in _UNROLLED else _LOOPS_T


# Rings with no preset's shape (custom n, depth or lane width) take their ISA's defaults
# below: on NEON and RVV the transforms as loops, the base multiplications unrolled, as the
# presets have them but for one pair each (see above). Measured on n = 2048, q = 12289, QEMU
# guest instructions per call, unrolled -> loops (clang-19 -O3, 2026-11-27): NEON ntt 12,734
# -> 12,491, intt 14,891 -> 14,638, polymul 43,184 -> 42,331; ``rvv128`` 23,444 -> 19,094,
# 26,117 -> 21,120, 76,753 -> 62,905; ``rvv256`` 10,683 -> 9,164, 12,097 -> 11,001, 35,365 ->
# 31,342 (the unrolled passes spill). AVX2 and AVX-512 keep the heuristic plan there
# (unmeasured on such rings); AVX-512 with the presets' ``blocks`` shuffles (see above).
_RVV_INDEXED = tuple(f"rvv{v}{m}" for v in (128, 256) for m in ("", "m1", "m4"))
"""The VLEN-specialised RVV backends whose presets take the indexed loads and the chunk loops:
the default LMUL (2), LMUL 1 and LMUL 4."""

ISA_DEFAULTS: dict[str, dict[str, object]] = {
    "avx512": {"shuffles": "blocks"},
    "neon": _LOOPS_T,
    **{isa: _LOOPS_T for isa in _RVV_INDEXED},
}
"""Measured choices for the rings that have no preset's shape, per SIMD ISA."""

# (layers per pass, extra register slots per pass) of the VLEN-specialised RVV backends, see
# the module docstring
_RVV_PLANS: dict[tuple[str, str], tuple[tuple[int, ...], tuple[int, ...]]] = {
    # LMUL 2 (the default), from ``scripts/tune.py rvv128|rvv256``, see the module docstring
    ("mlkem", "rvv128"): ((3, 2, 2), (0, 0, 0)),
    ("mlkem", "rvv256"): ((2, 3, 2), (0, 0, 0)),
    ("kyber-r1", "rvv128"): ((3, 2, 3), (0, 0, 0)),
    ("kyber-r1", "rvv256"): ((3, 2, 3), (0, 0, 0)),
    ("mldsa", "rvv128"): ((2, 3, 3), (1, 0, 0)),
    ("mldsa", "rvv256"): ((2, 1, 3, 2), (1, 0, 0, 0)),
    ("newhope512", "rvv128"): ((2, 2, 2, 3), (1, 0, 0, 0)),
    ("newhope512", "rvv256"): ((2, 2, 2, 3), (0, 0, 0, 0)),
    ("newhope1024", "rvv128"): ((3, 2, 2, 3), (0, 0, 0, 0)),
    ("newhope1024", "rvv256"): ((2, 2, 2, 1, 3), (0, 0, 0, 0, 0)),
    # LMUL 1
    ("mlkem", "rvv128m1"): ((2, 2, 3), (1, 0, 0)),
    ("mlkem", "rvv256m1"): ((2, 2, 3), (0, 0, 0)),
    ("kyber-r1", "rvv256m1"): ((2, 2, 4), (1, 0, 0)),
    ("mldsa", "rvv128m1"): ((2, 2, 4), (1, 0, 0)),
    ("mldsa", "rvv256m1"): ((1, 3, 4), (1, 0, 0)),
    ("newhope512", "rvv128m1"): ((3, 2, 4), (1, 0, 0)),
    ("newhope512", "rvv256m1"): ((3, 2, 4), (0, 0, 0)),
    ("newhope1024", "rvv128m1"): ((3, 3, 4), (0, 0, 0)),
    ("newhope1024", "rvv256m1"): ((3, 3, 4), (0, 0, 0)),
}

_GCC_SCHED_PRESSURE_AVX512 = ("mlkem", "kyber-r1")
"""The presets whose AVX-512 files ask gcc to schedule before register allocation, weighing
register pressure (see the module docstring)."""

_RVV_EXACT = {("newhope512", "rvv128"), ("newhope512", "rvv128m1")}
"""Where the coarse reductions' inverse spilled vector registers (clang-19: 4 and 1 spills and
reloads in intt and intt_reduce), so the files keep Barrett's reductions (see the module
docstring)."""

_PAIRED: dict[str, object] = {"paired_transforms": True}
"""The transforms of k polynomials two at a time (``paired_transforms``), for the presets whose
transforms are short chains in registers (see the module docstring)."""

TUNED: dict[tuple[str, str], dict[str, object]] = {
    ("mlkem", "avx2"): {"extra_slots": (2, 1), **_LOOPS, "unroll": True, **_PAIRED},
    ("mldsa", "avx2"): {"extra_slots": (1, 1), **_LOOPS},
    ("kyber-r1", "avx2"): {"extra_slots": (2, 1), **_LOOPS, "unroll": True, **_PAIRED},
    ("newhope512", "avx2"): {"extra_slots": (1, 1), **_LOOPS},
    ("newhope1024", "avx2"): {"merge": (2, 8), "extra_slots": (1, 0), **_LOOPS},
    **{
        (ring, "avx512"): {
            "shuffles": "blocks",
            **({"fuse_forwards": True} if ring in ("mlkem", "kyber-r1", "newhope512") else {}),
            **({"gcc_options": GCC_SCHED_PRESSURE} if ring in _GCC_SCHED_PRESSURE_AVX512 else {}),
            **(_PAIRED if ring in ("mlkem", "kyber-r1") else {}),
        }
        for ring in _PRESETS
    },
    **{(ring, "neon"): _unrolled_or_loops(ring, "neon") for ring in _PRESETS},
    **{
        (ring, isa): {
            "shuffles": "indexed",
            **_unrolled_or_loops(ring, isa),
            **(
                {"merge": _RVV_PLANS[ring, isa][0], "extra_slots": _RVV_PLANS[ring, isa][1]}
                if (ring, isa) in _RVV_PLANS
                else {}
            ),
            **({"coarse_reductions": False} if (ring, isa) in _RVV_EXACT else {}),
        }
        for ring in _PRESETS
        for isa in _RVV_INDEXED
    },
}


PRODUCT_GROUPS: dict[str, tuple[str, dict[str, object]]] = {
    "rvv128": ("rvv128m4", {"wide_sums": False}),
    "rvv256": ("rvv256m4", {"wide_sums": False}),
}
"""The backend (and its configuration's changes) whose register groups run the base
multiplications of a complete NTT, per ISA. They multiply element by element, so they work
in any memory order, and a larger group saves pointer arithmetic and loop overhead without
the spills it brings to the transforms. RVV at LMUL 4 summing in lanes (the double-width sums
of LMUL 4 spilled 2 registers), QEMU instructions per call (vector work, see
:mod:`nttgen.bench.icount`), 2026-11-28, LMUL 2 -> 4: VLEN 128, ML-DSA basemul 361 (617) ->
185 (569), basemul_acc k = 3 1,294 (2,478) -> 825 (2,185), k = 5 1,806 (3,502) -> 1,209
(3,337); NewHope-512 361 (617) -> 186 (570), k = 3 1,407 (2,335) -> 817 (2,177); VLEN 256,
ML-DSA 185 (313) -> 98 (290), k = 3 678 (1,270) -> 438 (1,118); NewHope-512 k = 5 1,232
(2,112) -> 700 (1,972). LMUL 8 executes fewer still (ML-DSA basemul at VLEN 128: 98) but its
sums spill."""


# --------------------------------------------------------------------------- NTRU Prime
# The NTRU Prime programs' variants each ISA runs (fields of
# nttgen.programs.ntru_config.NtruConfig; a field left out keeps its default), with the
# measurements behind them. Measured on sntrup761 (p = 761, q = 4591), Zen 3 unless said;
# NEON and RVV in guest instructions per call under QEMU.
#
# paired_leaves (default True): Rader's quadratic leaves multiplied by a constant with three
#   multiplications and one more addition rather than four. 2026-11-24, polymul: portable C
#   29,789 -> 28,609 ticks, NEON 46,685 -> 45,654, RVV (VLEN 128) 73,955 -> 72,994; AVX2
#   7,312 -> 7,347 (the one more addition and the reductions it brings cost more there), so
#   AVX2 keeps four. AVX-512 with the lines below takes three (Zen 5, one harness, polymul
#   2,854 -> 2,791 ticks with clang-19, 2,923 -> 2,804 with gcc 12; polymul_small 2,798 ->
#   2,782 and 2,802 -> 2,782).
# narrow_inverse (default True): the inverse DFT leaves its outputs within a third of the
#   lane, so that the fold adds its three terms without reducing them. 2026-11-24, polymul:
#   portable C 24,459 -> 24,145 ticks, AVX2 7,064 -> 6,981, NEON 43,662 -> 43,537; RVV (VLEN
#   128) 69,450 -> 76,124 and (VLEN 256) 35,094 -> 38,423, so RVV keeps the fold's reductions.
# dft_lines: the DFTs as loops over lines (and the fold a loop) rather than one straight-line
#   trace. 2026-11-24, polymul: AVX2 6,980 -> 6,197 ticks (stage harness: forward 1,121 ->
#   987, inverse 1,499 -> 1,193; a few thousand instructions run once per call were decoded
#   afresh each time), RVV (VLEN 128) 69,454 -> 61,557 and (VLEN 256) 35,098 -> 31,086;
#   NEON 43,537 -> 46,222 and portable C (gcc vectorises the straight-line column loop,
#   stage harness) 24,154 -> 110,223 keep the trace. AVX-512: see below.
# AVX-512 (measured on Zen 5, 2026-11-28, once a CPU with AVX-512 was at hand) takes AVX2's
#   choices but the base products, and AVX2's thresholds (NTRU_TUNED): sntrup761 in one
#   harness, 300 samples, clang-19 / gcc 12, polymul 3,254 / 3,612 -> 2,852 / 2,944 ticks
#   (AVX2 3,136 / 3,405), polymul_small 3,368 / 3,871 -> 2,832 / 2,840 (AVX2 2,963 / 3,296):
#   the straight-line traces had made the AVX-512 file larger than the L1 instruction cache.
#   The lines without the thresholds: 2,911 / 3,359 (clang); RVV's thresholds 2,899 / 2,870;
#   4q in every inverse pass 2,893 / 2,887; 3q in the forward's frequencies 2,865 / 2,854.
# base_products: "pairs" on AVX2 (stage harness, clang-19, best of 3: base 2,227 -> 1,751
#   ticks, polymul 5,998 -> 5,402 with the inverse's threshold of 4q); "wide" on NEON
#   (polymul 51,668 with Karatsuba, 46,681 with the sums) and AVX-512 (nttgen bench, 300
#   samples: polymul 5,671 -> 5,475 ticks with the sums), since 2026-11-29 "pairs" on AVX-512
#   too: split pieces by pair sums of operands interleaved once (LoopedPairProduct), which
#   needs GCC_NO_PREDICTIVE_COMMONING below. Intel Emerald Rapids, nttgen bench, 1,000
#   samples, three runs, wide sums -> pair sums, gcc 12 / clang-19: polymul 4,078 / 3,943 ->
#   3,917 / 3,749, 3,722 / 3,605 -> 3,609 / 3,421, 4,087 / 3,931 -> 3,929 / 3,730 ticks.
# looped_products: AVX-512's wide products of split pieces as loops over their coefficients.
#   2026-11-29, Zen 5, nttgen bench's harness, both trees' files in one binary, 500 samples,
#   two runs, gcc 12 / clang-19: polymul 2,485 / 2,706 -> 2,119 / 2,421 and 2,393 / 2,626 ->
#   2,057 / 2,359 ticks, polymul_small 2,477 / 2,688 -> 2,141 / 2,458. The base alone got
#   slower with gcc (stage harness: 1,071 -> 1,183; clang 1,633 -> 1,141), but the stages of
#   polymul now sum to its time: the unrolled base was 18 KB of code.
# coarse_reductions: barrett_coarse (one rounding high product) wherever its wider range
#   (within 0.63q for q = 4591) serves. 2026-11-25, polymul: AVX2 by vpmulhrsw, 3
#   instructions where barrett takes 5 (stage harness, clang-19: forward 989 -> 906 ticks,
#   inverse 1,134 -> 1,025, polymul 5,445 -> 5,033); NEON 43,537 -> 41,691; RVV (VLEN 128)
#   61,553 -> 58,722 and (VLEN 256) 31,082 -> 29,655. The portable C keeps barrett: gcc -O3
#   vectorises barrett's high product but not the rounding one (polymul 23,852 -> 32,336
#   ticks).
# small_forward (default True): polymul_small transforms its small operand by a DFT of its
#   own. AVX2 cleared it on 2026-11-25 while that DFT was Rader's straight-line trace on
#   [-1, 1] (the benchmark's shared libraries alternated in batches of 100 calls, medians of
#   3 runs: polymul_small 5,137 -> 5,043, 5,163 -> 5,069, 5,129 -> 5,047 ticks: 4.5 KiB of
#   code whose few saved reductions did not pay for decoding it); with the ternary forward it
#   is set again.
# ternary_forward: that DFT by its defining sum over the nonzero blocks, each product an exact
#   mullo of an input in [-1, 1]. 2026-11-26, polymul_small, clang-19: AVX2 stage 853 -> 554
#   ticks, the whole call 4,590 -> 4,535; NEON 40,451 -> 37,898; RVV (VLEN 128) 57,459 ->
#   54,596 and (VLEN 256) 29,022 -> 27,575. The portable C keeps its trace: gcc does not
#   vectorise the sums loop as it does the trace (polymul_small 24,300 -> 49,652 ticks).
# rotated_forward: with dft_lines, the forward by Rader's algorithm on each line's nonzero
#   blocks read straight from the input, the lines' rotations as twiddles in the frequencies
#   pass. 2026-11-26, clang-19, shared libraries alternated in batches, both orders: AVX2
#   polymul 4,535 -> 4,381 and 4,544 -> 4,393 ticks, polymul_small 4,532 -> 4,388 and 4,546
#   -> 4,408; RVV polymul 57,810 -> 55,354 (VLEN 128) and 29,196 -> 27,952 (VLEN 256),
#   polymul_small 54,592 -> 53,364 and 27,571 -> 26,949.
# indexed_outputs: with dft_lines, the inverse's last pass as a loop reading its blocks'
#   positions from tables of offsets. 2026-11-26, same method: AVX2 polymul 4,380 -> 4,336,
#   polymul_small 4,400 -> 4,234 ticks (the inverse's code 7.0 -> 4.0 KiB).
# gcc_options: GCC_SCHED_PRESSURE asks gcc for pressure-aware scheduling before register
#   allocation (see the module docstring). 2026-11-29, Zen 5, gcc 12, sntrup761 AVX2, stage
#   harness (best of five alternated runs), without -> with: forward 573 -> 560 and 602 ->
#   576 ticks, base 1,028 -> 1,006 and 1,083 -> 1,043, inverse 716 -> 698 and 753 -> 723,
#   polymul 3,093 -> 2,967 and 3,238 -> 3,033; nttgen bench, polymul 0.93, polymul_small 0.97.
#   AVX-512 keeps gcc's scheduling (1.03 and 1.04-1.06), and so do the Schönhage pipelines,
#   which do not read the choice (AVX2 1.19-1.25). GCC_NO_PREDICTIVE_COMMONING on AVX-512:
#   the pair sums' loop reads each interleaved pair of y' again two trips later, and gcc -O3
#   kept them in registers, copied 8 of them a trip and spilled x's 16 pairs, which its
#   products reuse every trip. Same harness, one run: pair sums without -> with 4,467 ->
#   4,231 ticks (the wide sums 4,359).
NTRU_CHOICES: dict[str, dict[str, object]] = {
    "c": {},
    "avx2": {
        "paired_leaves": False,
        "dft_lines": True,
        "base_products": "pairs",
        "coarse_reductions": True,
        "ternary_forward": True,
        "rotated_forward": True,
        "indexed_outputs": True,
        "gcc_options": GCC_SCHED_PRESSURE,
    },
    "avx512": {
        "dft_lines": True,
        "base_products": "pairs",
        "looped_products": True,
        "coarse_reductions": True,
        "ternary_forward": True,
        "rotated_forward": True,
        "indexed_outputs": True,
        "gcc_options": GCC_NO_PREDICTIVE_COMMONING,
    },
    "neon": {"base_products": "wide", "coarse_reductions": True, "ternary_forward": True},
    "rvv": {
        "narrow_inverse": False,
        "dft_lines": True,
        "coarse_reductions": True,
        "ternary_forward": True,
        "rotated_forward": True,
    },
}
"""The NTRU Prime program variants of each ISA (see the comments above), before the
thresholds of :data:`NTRU_TUNED`."""


@dataclass(frozen=True)
class NtruTuning:
    """Measured reduction thresholds of one NTRU Prime ring's Good–Rader programs on one ISA,
    in multiples of q (None: the lazy policy alone; see :class:`nttgen.programs.lazy.Reducer`).

    ``inverse_threshold_q``: the inverse DFT's, in every pass; ``forward_lines_q`` and
    ``inverse_lines_q``: where the DFTs run as loops over lines (``Isa.dft_lines``), one per
    pass instead (:class:`nttgen.programs.ntru_lines.LineThresholds`), which overrides
    ``inverse_threshold_q`` there."""

    inverse_threshold_q: int | None = None
    forward_lines_q: tuple[int | None, int | None] | None = None
    inverse_lines_q: tuple[int | None, int | None, int | None] | None = None


NTRU_TUNED: dict[tuple[int, int, str], NtruTuning] = {
    # AVX-512, sntrup761 (p = 761, q = 4591), Good–Rader pipeline, DFTs as lines: AVX2's
    # thresholds (below) measured best of those tried (see NTRU_CHOICES). Before the lines,
    # with straight-line DFTs, its one inverse threshold of 4q had measured faster than the
    # lazy policy alone (stage harness, best of 5: inverse 1,019 -> 895 ticks).
    (761, 4591, "avx512"): NtruTuning(forward_lines_q=(None, 2), inverse_lines_q=(None, None, 2)),
    # AVX2 (DFTs as lines): the greedy policy is not monotone in its threshold. One threshold
    # for every pass of the inverse (4q: its pair-sum base leaves the pieces within about 2q,
    # and the lazy policy alone had taken 438 inverse reductions against 352, stage harness
    # 1,643 -> 1,129 ticks) left it at 845 reductions per polymul (5q: 773, but measured 1 %
    # slower). One threshold per pass, searched by the op
    # counter over {none, 1.5q, 2q, ..., 6q} for the forward's two passes and the inverse's
    # three jointly (the forward's output range is the base's input, whose output is the
    # inverse's): 611 reductions with 2q in the forward's frequencies and in the fold, none
    # elsewhere (forward 178 -> 114, inverse 392 -> 286). Measured the benchmark's way
    # (sntrup761, clang-19, Zen 3: shared libraries alternated in batches of 100 calls, 3
    # quiet runs): polymul 4,948 -> 4,854, polymul_small 5,021 -> 4,853 ticks. Either half
    # alone measured slower (the forward's: 4,948 -> 5,065; the inverse's: 5,029 -> 5,503),
    # as each alone widens what the other pass must reduce.
    (761, 4591, "avx2"): NtruTuning(forward_lines_q=(None, 2), inverse_lines_q=(None, None, 2)),
    # NEON (straight-line DFTs, one inverse threshold): the lazy policy alone took 1,761
    # vector reductions per polymul; 3q 1,599, 4q 1,529, 5q 1,649. QEMU guest instructions
    # per polymul (the NEON measure here, see bench/icount.py): none 41,695, 3q 40,768, 4q
    # 40,929, 5q 41,291 (the count of reductions is not all: where they fall changes the
    # register traffic).
    (761, 4591, "neon"): NtruTuning(inverse_threshold_q=3),
    # RVV (DFTs as lines): the same joint search as AVX2's by the op counter, 21,818 -> 17,752
    # coefficient reductions per polymul; QEMU guest instructions per polymul, VLEN 128:
    # 58,726 -> 57,814 (AVX2's choice: 58,029; 4q in the inverse's passes: 58,672), VLEN 256:
    # 29,659 -> 29,200.
    (761, 4591, "rvv"): NtruTuning(forward_lines_q=(None, 2), inverse_lines_q=(None, 3, 2)),
}
"""Measured choices for the NTRU Prime programs, per (p, q, ISA)."""
