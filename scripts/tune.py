#!/usr/bin/env python3
"""Time candidate pass plans of each preset for a SIMD ISA in one harness run per ring and
print the results; the chosen plans are recorded in src/nttgen/tuning.py (generation itself
never times anything, so it stays deterministic).

    scripts/tune.py avx2|avx512 [ring ...]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from nttgen.bench.tune import Variant, compare
from nttgen.build import compiler
from nttgen.emit.isa import isa_class
from nttgen.generate import heuristic_config
from nttgen.rings import PRESETS


def candidates(ring, isa):  # type: ignore[no-untyped-def]
    """The heuristic plan, with one more interleaved register slot in its last pass, with the
    first layer moved into the last pass, each fully unrolled or keeping its chunk loops; and
    the heuristic plan in each other shuffle style the ISA has."""
    base = heuristic_config(ring, isa)
    merge, extra = list(base.merge), list(base.extra_slots)
    plans = {"plan": (tuple(merge), tuple(extra))}
    plans["plan_x"] = (tuple(merge), (*extra[:-1], extra[-1] + 1))
    if len(merge) >= 2 and merge[0] > 1:
        m2 = (merge[0] - 1, merge[1] + 1, *merge[2:])
        plans["shift"] = (m2, tuple(min(x + 1, 3) if i == 0 else x for i, x in enumerate(extra)))
    out = {}
    for name, (m, e) in plans.items():
        out[name] = replace(base, merge=m, extra_slots=e, unroll=True)
        out[name + "_loop"] = replace(base, merge=m, extra_slots=e, unroll=False)
    # the ISA's other shuffle styles, with the heuristic plan
    for style in isa_class(isa).shuffle_styles[1:]:
        out[f"plan_{style}"] = replace(base, shuffles=style, unroll=True)
        out[f"plan_{style}_loop"] = replace(base, shuffles=style, unroll=False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("isa", choices=("avx2", "avx512"), help="the x86 ISA to tune")
    parser.add_argument("rings", nargs="*", help=f"presets (default all: {', '.join(PRESETS)})")
    args = parser.parse_args()
    unknown = [r for r in args.rings if r not in PRESETS]
    if unknown:
        parser.error(f"not a preset: {', '.join(unknown)} (presets: {', '.join(PRESETS)})")
    isa = args.isa
    names = args.rings or list(PRESETS)
    cc = compiler(isa_class(isa).compilers)
    for name in names:
        ring = PRESETS[name]
        cands = candidates(ring, isa)
        res = compare(ring, isa, [Variant(k, v, cc) for k, v in cands.items()], samples=400)
        for k, v in res.items():
            cfg = cands[k]
            timing = ", ".join(f"{op} {t:.0f}" for op, t in v.items())
            plan = f"merge={cfg.merge} extra={cfg.extra_slots} shuffles={cfg.shuffles}"
            print(f"{name:12s} {k:14s} {plan}: {timing}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
