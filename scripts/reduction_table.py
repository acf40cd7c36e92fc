#!/usr/bin/env python3
"""Print the reductions per kernel that nttgen's analysis places, for several program
structures, next to the published hand schedules (docs/reductions.md is made from this)."""

from __future__ import annotations

from nttgen.generate import default_config
from nttgen.interp.cost import count_ops
from nttgen.programs.build_config import BuildConfig
from nttgen.programs.kernels import build_kernels
from nttgen.rings import PRESETS

STRUCTURES = {
    "portable C as generated (loops, 1 lane)": lambda r: default_config(r, "c"),
    "scalar, 3 class slots, gs inverse": lambda r: BuildConfig(
        class_slots=3, intt_networks=("gs",)
    ),
    "AVX2 as generated (tuned pass plan)": lambda r: default_config(r, "avx2"),
}

HAND = {
    ("mlkem", "ntt"): "0 (pq-crystals ref C and AVX2)",
    ("mlkem", "intt"): "896 Barrett (ref C); 64 Barrett + 256 scaling products first (AVX2)",
    ("mldsa", "ntt"): "0 (ref C and AVX2)",
    ("mldsa", "intt"): "0 (ref C and AVX2; scale folded into the last level)",
    ("kyber-r1", "ntt"): "768 (Seiler §3.4: levels 3, 6, 7); 128 with standard representatives",
    ("kyber-r1", "intt"): "not stated (Seiler: tracked per coefficient)",
    ("newhope1024", "ntt"): "1536 (Seiler §3.4, standard representatives); 5120 without",
    ("newhope1024", "intt"): "5120 (Seiler §3.4: half the coefficients in every level)",
}


def main() -> None:
    names = list(STRUCTURES)
    print("| ring | kernel | " + " | ".join(names) + " | hand schedule |")
    print("|---|---|" + "---|" * len(names) + "---|")
    for ring_name in ("mlkem", "mldsa", "kyber-r1", "newhope512", "newhope1024"):
        ring = PRESETS[ring_name]
        sets = {s: build_kernels(ring, f(ring)) for s, f in STRUCTURES.items()}
        for op in ("ntt", "intt", "basemul", "basemul_acc", "basemul_acc_cached"):
            cells = []
            for s in names:
                fn = sets[s].functions[op]
                sizes = {"k": 3} if op.startswith("basemul_acc") else {}
                red = count_ops(fn, sizes).get("reductions", 0)
                extra = ""
                if op == "intt":
                    extra = f" ({fn.info['network']}, {fn.info['scale']}; {fn.info['policy']})"
                cells.append(f"{red}{extra}")
            hand = HAND.get((ring_name, op), "")
            label = f"{op} (k=3)" if op.startswith("basemul_acc") else op
            print(f"| {ring_name} | {label} | " + " | ".join(cells) + f" | {hand} |")


if __name__ == "__main__":
    main()
