"""The benchmark tables: median ticks per call, ISAs side by side, ratios to portable C; and,
for ISAs under QEMU, dynamic instructions per call."""

from __future__ import annotations

import json
from collections.abc import Collection
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..emit.isa import isa_class
from ..lanes import I16
from ..textui import Table
from . import ALIGN_FLAGS, BenchResult, column, op_label, paired_ratio
from .icount import SCALAR_LABEL, CountResult


def bench_table(
    results: list[BenchResult],
    isas: list[str],
    *,
    samples: int,
    batch: int,
    compilers: dict[str, str] | None = None,
    cpu: str | None = None,
) -> Table:
    """One row per (ring, op): the median ticks of each ISA of ``isas`` and, beside each SIMD
    ISA, its speed-up over the portable C (when ``c`` is among ``isas``). The title names the
    unit, ``cpu`` (the processor), each ISA's compiler (``compilers``), the flags and the
    sample counts; a row whose ISA has no code for the ring shows ``-``."""
    from . import bench_cpu  # here: the package imports this module

    unit = results[0].unit.upper() if results else "TSC"
    built = ", ".join(f"{i}: {c}" for i, c in (compilers or {}).items())
    pinned = bench_cpu()
    title = f"Median {unit} ticks per call (lower is better)"
    title += f" on {cpu}" if cpu else ""
    title += f", pinned to CPU {pinned}" if pinned is not None else ""
    title += f"; {built}" if built else ""
    title += f"; -O3 {' '.join(ALIGN_FLAGS)}; {samples} samples of {batch} calls"
    columns = ["ring", "op"]
    right = set()
    for isa in isas:
        columns.append(isa)
        right.add(isa)
        if isa != "c" and "c" in isas:
            columns.append(f"c/{isa}")
            right.add(f"c/{isa}")
    speedups = any(c.startswith("c/") for c in columns)
    caption = "c/<isa>: how many times faster than the portable C." if speedups else ""
    t = Table(title, columns, right, caption)
    rows: dict[tuple[str, str], dict[str, BenchResult]] = {}
    for r in results:
        rows.setdefault((r.ring, r.label), {})[r.isa] = r
    for (ring, label), by_isa in rows.items():
        cells = [ring, label]
        for isa in isas:
            r = by_isa.get(isa)
            cells.append(f"{r.median:,.0f}" if r else "-")
            if isa != "c" and "c" in isas:
                base = by_isa.get("c")
                cells.append(f"{base.median / r.median:.2f}x" if r and base and r.median else "-")
        t.add_row(*cells)
    return t


def count_table(counts: list[CountResult], isas: list[str]) -> Table:
    """One row per (ring, op) for ISAs that run under QEMU: dynamic instructions per call
    of each ISA, of the portable C compiled -O3 for the same machine (and scalar), the ratios,
    the static op count of the SIMD program and, for RISC-V Vector, the vector work
    (:mod:`nttgen.bench.icount`: each vector instruction counted per register of its group)."""
    targets = sorted({c.target for c in counts})
    compilers = sorted({f"{c.isa}: {c.compiler}" for c in counts})
    simd = [i for i in isas if i != "c"]
    numeric = [*simd, "c -O3", *(f"c/{i}" for i in simd), "c scalar"]
    grouped = [i for i in simd if isa_class(i).arch == "riscv64"]
    for isa in simd:
        numeric += [f"scalar/{isa}", f"{isa} static ops"]
    numeric += [f"{isa} vector work" for isa in grouped]
    work_note = (
        "; vector work = the instructions with each vector one counted per register of its group"
        if grouped
        else ""
    )
    t = Table(
        f"Dynamic instructions per call under QEMU ({', '.join(targets)}; -O3; "
        f"{'; '.join(compilers)}); static ops = vector ops, loads and stores of the program"
        + work_note,
        ["ring", "target", "op", *numeric],
        set(numeric),
    )
    rows: dict[tuple[str, str, str], dict[str, CountResult]] = {}
    for c in counts:
        rows.setdefault((c.ring, c.target, c.label), {})[c.isa] = c
    for (ring, target, label), by in rows.items():
        base, scalar = by.get("c"), by.get(SCALAR_LABEL)

        def cell(x: CountResult | None) -> str:
            return f"{x.instructions:,}" if x else "-"

        def ratio(num: CountResult | None, den: CountResult | None) -> str:
            ok = num and den and den.instructions
            return f"{num.instructions / den.instructions:.2f}x" if ok else "-"  # type: ignore[union-attr]

        cells = [ring, target, label, *(cell(by.get(i)) for i in simd), cell(base)]
        cells += [ratio(base, by.get(i)) for i in simd]
        cells.append(cell(scalar))
        for i in simd:
            x = by.get(i)
            cells += [ratio(scalar, x), f"{x.static_ops:,}" if x else "-"]
        cells += [f"{by[i].vector_work:,}" if i in by else "-" for i in grouped]
        t.add_row(*cells)
    return t


def ratio_pairs(isas: list[str], compilers: list[str]) -> list[tuple[str, str, str]]:
    """The comparisons of ``nttgen bench --compare``, as (heading, numerator column,
    denominator column) over columns named by :func:`nttgen.bench.column`: each SIMD ISA
    against the next narrower one timed (``avx512/avx2``), per compiler, and each ISA's
    build by every other compiler against its build by the first (``avx2 gcc/clang-19``)."""
    ccs: list[str | None] = list(compilers) or [None]
    # widest first (16-bit lanes per vector), as the front end orders them
    simd = sorted((i for i in isas if i != "c"), key=lambda i: -isa_class(i).lanes_for(I16))
    pairs = []
    for cc in ccs:
        suffix = f" ({cc})" if cc and len(ccs) > 1 else ""
        for wide, narrow in pairwise(simd):
            pairs.append((f"{wide}/{narrow}{suffix}", column(wide, cc), column(narrow, cc)))
    first = ccs[0]
    for isa in isas:
        for cc in ccs[1:]:
            pairs.append((f"{isa} {cc}/{first}", column(isa, cc), column(isa, first)))
    return pairs


def compare_ratios(
    results: list[BenchResult], isas: list[str], compilers: list[str]
) -> list[dict[str, Any]]:
    """For each (ring, op) and each pair of :func:`ratio_pairs` timed in ``results``, in their
    order: {"ring", "op", "k", "pair": the pair's heading, "ratio": how many times as long the
    first takes as the second (below 1: the first is faster)}, the median of the ratios of
    samples timed back to back (:func:`~nttgen.bench.paired_ratio`)."""
    pairs = ratio_pairs(isas, compilers)
    rows: dict[tuple[str, str, int], dict[str, BenchResult]] = {}
    for r in results:
        rows.setdefault((r.ring, r.op, r.k), {})[r.isa] = r
    out = []
    for (ring, op, k), by_column in rows.items():
        for head, top, bottom in pairs:
            a, b = by_column.get(top), by_column.get(bottom)
            if a and b and b.median:
                ratio = paired_ratio(a, b)
                out.append({"ring": ring, "op": op, "k": k, "pair": head, "ratio": ratio})
    return out


def compare_table(
    results: list[BenchResult], isas: list[str], compilers: list[str], cpu: str | None = None
) -> Table:
    """One row per (ring, op), one column per pair of :func:`ratio_pairs`: the ratios of
    :func:`compare_ratios`, "-" where a pair was not timed."""
    heads = [h for h, _, _ in ratio_pairs(isas, compilers)]
    title = "Ratios of ticks per call, samples timed back to back (below 1: the first is faster)"
    title += f" on {cpu}" if cpu else ""
    t = Table(title, ["ring", "op", *heads], set(heads))
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for r in results:
        rows.setdefault((r.ring, r.label), {})
    for c in compare_ratios(results, isas, compilers):
        rows[(c["ring"], op_label(c["op"], c["k"]))][c["pair"]] = c["ratio"]
    for (ring, label), ratios in rows.items():
        t.add_row(ring, label, *(f"{ratios[h]:.2f}" if h in ratios else "-" for h in heads))
    return t


def medians_by_kernel(
    path: Path, ops: Collection[str], cc: str
) -> dict[tuple[str, str, str], float]:
    """The median ticks of a ``nttgen bench --json`` file by (ring, ISA, op), for the ops in
    ``ops``: of the compiler ``cc`` where the run timed several (columns ``avx2 gcc``), and of
    the one compiler otherwise. The ring is the preset's name without its aliases."""
    out: dict[tuple[str, str, str], float] = {}
    for rec in json.loads(path.read_text())["results"]:
        isa, *named = rec["isa"].split(" ")
        if rec["op"] in ops and named in ([], [cc]):
            # a preset with aliases is labelled "name (alias, ...)"
            out[(rec["ring"].split(" ")[0], isa, rec["op"])] = rec["median"]
    return out
