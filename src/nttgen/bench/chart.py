"""The benchmark chart: a PNG with one panel per ring, grouped bars per op, one colour per ISA.

Drawn with matplotlib's Agg renderer on a standalone :class:`~matplotlib.figure.Figure` (no
pyplot, no global backend state). The PNG is deterministic: a fixed size and dpi, the bundled
font, and no software/version metadata, so the same results give byte-identical files.
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..errors import NttgenError
from . import BenchResult

PANEL_SIZE = (7.0, 4.2)  # inches per panel (width, height)
MAX_COLUMNS = 2
DPI = 100
PNG_METADATA: dict[str, str | None] = {"Software": None}  # no matplotlib version in the file
# One fixed colour per ISA position (matplotlib's "tab10" cycle), the same in every panel.
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def chart_title(
    results: list[BenchResult],
    *,
    samples: int,
    batch: int,
    cpu: str | None = None,
    compilers: dict[str, str] | None = None,
) -> str:
    """The chart's title: the unit, the processor (``cpu``), each ISA's compiler and the sample
    and batch counts of the run."""
    unit = results[0].unit.upper() if results else "TSC"
    title = f"nttgen bench: median {unit} ticks per call"
    title += f" on {cpu}" if cpu else ""
    built = ", ".join(f"{i}: {c}" for i, c in (compilers or {}).items())
    return title + f"\n({built + '; ' if built else ''}{samples} samples of {batch} calls)"


def build_figure(results: list[BenchResult], isas: list[str], *, title: str) -> Figure:
    """Draw ``results`` as a figure and return it (nothing is written).

    One panel per ring (in the order the rings first appear in ``results``), one group of bars
    per op label (``BenchResult.label``, e.g. ``basemul_acc k=3``), one bar per ISA of
    ``isas`` (in that order, with the same colour in every panel; an ISA without a result for
    an op leaves a gap). The y axis is the median ticks per call on a log scale, each bar is
    labelled with its value, and the figure has ``title`` and a legend of the ISAs.
    """
    if not results:
        raise NttgenError("no benchmark results to chart")
    by_ring: dict[str, dict[str, dict[str, BenchResult]]] = {}
    for r in results:
        by_ring.setdefault(r.ring, {}).setdefault(r.label, {})[r.isa] = r
    ncols = min(MAX_COLUMNS, len(by_ring))
    nrows = math.ceil(len(by_ring) / ncols)
    fig = Figure(
        figsize=(PANEL_SIZE[0] * ncols, PANEL_SIZE[1] * nrows + 0.8),
        dpi=DPI,
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    width = 0.8 / max(1, len(isas))
    for ax, (ring, rows) in zip(axes, by_ring.items(), strict=False):
        labels = list(rows)
        values = [r.median for by_isa in rows.values() for r in by_isa.values() if r.median > 0]
        for i, isa in enumerate(isas):
            xs = [j for j, lab in enumerate(labels) if isa in rows[lab]]
            ys = [rows[labels[j]][isa].median for j in xs]
            offset = (i - (len(isas) - 1) / 2) * width
            bars = ax.bar(
                [x + offset for x in xs],
                ys,
                width,
                color=COLOURS[i % len(COLOURS)],
            )
            ax.bar_label(bars, labels=[f"{y:,.0f}" for y in ys], rotation=90, fontsize=7, padding=2)
        ax.set_title(ring)
        ax.set_yscale("log")
        if values:  # whole decades, with room above the tallest bar for its rotated value
            low = 10 ** math.floor(math.log10(min(values) / 2))
            ax.set_ylim(low, 10 ** math.ceil(math.log10(max(values) * 5)))
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("median ticks per call")
        ax.grid(axis="y", which="major", alpha=0.3)
        ax.set_axisbelow(True)
    for ax in axes[len(by_ring) :]:
        ax.set_visible(False)
    handles = [Patch(color=COLOURS[i % len(COLOURS)], label=isa) for i, isa in enumerate(isas)]
    fig.legend(handles=handles, loc="outside lower center", ncols=max(1, len(isas)), title="ISA")
    fig.suptitle(title)
    return fig


def write_chart(results: list[BenchResult], isas: list[str], path: Path, *, title: str) -> None:
    """Write the chart of ``results`` (see :func:`build_figure`) to ``path`` as a PNG.

    Raises :class:`NttgenError` naming the path when it cannot be written (e.g. its directory
    does not exist).
    """
    fig = build_figure(results, isas, title=title)
    try:
        fig.savefig(path, format="png", dpi=DPI, metadata=PNG_METADATA)
    except OSError as e:
        raise NttgenError(f"cannot write the chart to {path}: {e.strerror or e}") from e
