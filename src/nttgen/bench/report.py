"""The benchmark table: median ticks per call, ISAs side by side, ratios to portable C."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from . import ALIGN_FLAGS, BenchResult


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
    unit = results[0].unit if results else "tsc"
    built = ", ".join(f"{i}: {c}" for i, c in (compilers or {}).items())
    t = Table(
        title=(
            f"median {unit} ticks per call ({samples} samples of {batch} calls; "
            f"-O3 {' '.join(ALIGN_FLAGS)}" + (f"; {built}" if built else "") + ")"
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
        first = next(iter(by_isa.values()))
        cells.append(str(first.reductions))
        t.add_row(*cells)
    console.print(t)
