#!/usr/bin/env python3
"""Time candidate pass plans of each preset for a SIMD ISA in one harness run per ring and
print the results; the chosen plans are recorded in src/nttgen/tuning.py (generation itself
never times anything, so it stays deterministic).

For the VLEN-specialised RVV backends (``rvv128``, ``rvv256``, ``rvv128m1``...) it counts
instead, under QEMU, the instructions (and in brackets the vector work, see
``nttgen.bench.icount``) of every split of the NTT's layers into two or three passes, or four
short ones (with and without one more register slot in the first), and the vector spills of each
candidate's file (clang-19 for RISC-V), sorted by polymul's count.

    scripts/tune.py avx2|avx512|rvv128|rvv256|rvv128m1|... [ring ...]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from nttgen.bench import writer_entry
from nttgen.bench.icount import COUNT_CFLAGS, count_work, counter_of
from nttgen.bench.tune import Variant, compare
from nttgen.build import compiler
from nttgen.cross import isa_target
from nttgen.emit.files import FileWriter
from nttgen.emit.isa import isa_class
from nttgen.errors import NttgenError
from nttgen.generate import canonical_command, default_config, heuristic_config, kernel_set
from nttgen.programs.kernels import build_kernels
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


RVV_OPS = ("ntt", "intt", "polymul")
VECTOR_SPILL = re.compile(r"\bvs[0-9]r\.v|\bvl[0-9]re[0-9]+\.v")


def rvv_candidates(ring, isa):  # type: ignore[no-untyped-def]
    """The ISA's configuration with every split of the layers into two or three passes, and
    into four of at most three layers each, each with no extra register slot or with one in
    its first pass."""
    base = default_config(ring, isa)
    d = ring.depth
    merges = [(a, d - a) for a in range(1, d)]
    merges += [(a, b, d - a - b) for a in range(1, d) for b in range(1, d - a)]
    # four passes of at most 3 layers (8 register groups, 16 registers at LMUL 2)
    merges += [
        (a, b, c, d - a - b - c)
        for a in range(1, 4)
        for b in range(1, 4)
        for c in range(1, 4)
        if 1 <= d - a - b - c <= 3
    ]
    out = {}
    for m in merges:
        for extra in (0, 1):
            slots = (extra, *([0] * (len(m) - 1)))
            name = "p" + "_".join(map(str, m)) + f"x{extra}"
            out[name] = replace(base, merge=m, extra_slots=slots)
    return out


def vector_spills(files, cls, target):  # type: ignore[no-untyped-def]
    """Vector register spills and reloads in the object of ``files`` (ISA class ``cls``)
    built for ``target`` by clang."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, text in files.items():
            (d / name).write_text(text)
        cc = target.pick_compiler(("clang-19",))
        src, obj = str(d / f"{files.stem}.c"), str(d / "x.o")
        subprocess.run([*cc, *COUNT_CFLAGS, *cls.cflags, "-c", src, "-o", obj], check=True)
        dump = subprocess.run(
            ["llvm-objdump-19", "-d", "--mattr=+v", obj], capture_output=True, text=True, check=True
        ).stdout
    return len(VECTOR_SPILL.findall(dump))


def count_rvv(ring, isa):  # type: ignore[no-untyped-def]
    """Print every candidate plan's instructions per call and spills, fewest polymul first."""
    cls = isa_class(isa)
    target = isa_target(cls)
    contract = kernel_set(ring, "c").published
    rows = []
    for name, cfg in rvv_candidates(ring, isa).items():
        try:
            ks = build_kernels(ring, cfg, contract)
        except (NttgenError, ValueError) as exc:  # a plan the planner refuses for this shape
            print(f"{ring.name:12s} {name:10s} refused: {exc}")
            continue
        prefix = f"nttgen_{ring.c_name}_{isa}_{name}"
        w = FileWriter(ks, cls, canonical_command(ring, isa), prefix=prefix)
        files = w.files()
        cmd = [*target.pick_compiler(cls.compilers), *COUNT_CFLAGS, *cls.cflags]
        exe, _ = counter_of(
            ring, [(writer_entry(name, w, files, tuple(cls.cflags), None), cmd)], target
        )
        counts = {op: count_work(exe, target, 0, op) for op in RVV_OPS}
        rows.append((counts["polymul"], name, cfg, counts, vector_spills(files, cls, target)))
    for _, name, cfg, counts, spills in sorted(rows, key=lambda r: r[0]):
        shown = ", ".join(f"{op} {n} ({w})" for op, (n, w) in counts.items())
        plan = f"merge={cfg.merge} extra={cfg.extra_slots}"
        print(f"{ring.name:12s} {name:10s} {plan}: {shown}, vector spills {spills}")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("isa", help="avx2, avx512 or a VLEN-specialised RVV backend (rvv128...)")
    parser.add_argument("rings", nargs="*", help=f"presets (default all: {', '.join(PRESETS)})")
    args = parser.parse_args()
    unknown = [r for r in args.rings if r not in PRESETS]
    if unknown:
        parser.error(f"not a preset: {', '.join(unknown)} (presets: {', '.join(PRESETS)})")
    isa = args.isa
    if isa not in ("avx2", "avx512") and not re.fullmatch(r"rvv\d+(m\d)?", isa):
        parser.error(f"not a tunable ISA: {isa} (avx2, avx512, rvv128, rvv256m1, ...)")
    names = args.rings or list(PRESETS)
    if isa.startswith("rvv"):
        for name in names:
            count_rvv(PRESETS[name], isa)
        return
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
