"""The benchmark tables: median ticks per call, ISAs side by side, ratios to portable C; and,
for ISAs under QEMU, dynamic instructions per call."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from . import ALIGN_FLAGS, BenchResult
from .icount import SCALAR_LABEL, CountResult


def print_table(
    console: Console,
    results: list[BenchResult],
    isas: list[str],
    *,
    samples: int,
    batch: int,
    compilers: dict[str, str] | None = None,
) -> None:
    """Print one row per (ring, op) with a column per ISA and its ratio to portable C."""
    from . import bench_cpu  # here: the package imports this module

    unit = results[0].unit if results else "tsc"
    built = ", ".join(f"{i}: {c}" for i, c in (compilers or {}).items())
    cpu = bench_cpu()
    where = "" if cpu is None else f"; CPU {cpu}"
    t = Table(
        title=(
            f"median {unit} ticks per call ({samples} samples of {batch} calls; "
            f"-O3 {' '.join(ALIGN_FLAGS)}" + (f"; {built}" if built else "") + where + ")"
        )
    )
    t.add_column("ring")
    t.add_column("op")
    for isa in isas:
        t.add_column(isa, justify="right")
        if isa != "c" and "c" in isas:
            t.add_column(f"c/{isa}", justify="right")
    t.add_column("reductions", justify="right")
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
        cells.append(reductions_cell(by_isa, isas))
        t.add_row(*cells)
    console.print(t)


def reductions_cell(by_isa: dict[str, BenchResult], isas: list[str]) -> str:
    """The reductions column of one row: the count where every ISA's program has the same,
    else each ISA's own (an NTRU Prime ring's ISAs run different programs: the AVX2 one
    reduces far fewer coefficients than the portable C)."""
    counts = {isa: by_isa[isa].reductions for isa in isas if isa in by_isa}
    if len(set(counts.values())) == 1:
        return f"{next(iter(counts.values())):,}"
    return " / ".join(f"{isa} {n:,}" for isa, n in counts.items())


def print_count_table(console: Console, counts: list[CountResult], isas: list[str]) -> None:
    """Print one row per (ring, op) for ISAs that run under QEMU: dynamic instructions per call
    of each ISA, of the portable C compiled -O3 for the same machine (and scalar), the ratios,
    and the static op count of the SIMD program."""
    if not counts:
        return
    targets = sorted({c.target for c in counts})
    compilers = sorted({f"{c.isa}: {c.compiler}" for c in counts})
    t = Table(
        title=(
            f"dynamic instructions per call under QEMU ({', '.join(targets)}; -O3; "
            f"{'; '.join(compilers)}); static ops = vector ops, loads and stores of the program"
        )
    )
    for col in ("ring", "target", "op"):
        t.add_column(col)
    simd = [i for i in isas if i != "c"]
    for isa in simd:
        t.add_column(isa, justify="right")
    t.add_column("c -O3", justify="right")
    for isa in simd:
        t.add_column(f"c/{isa}", justify="right")
    t.add_column("c scalar", justify="right")
    for isa in simd:
        t.add_column(f"scalar/{isa}", justify="right")
        t.add_column(f"{isa} static ops", justify="right")
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
        t.add_row(*cells)
    console.print(t)
