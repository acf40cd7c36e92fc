"""Plain-text output of the command line: tables that fit the terminal, and a progress line.

Written for a terminal 100 columns wide and for logs alike: no colour, no box-drawing
characters, nothing but printable text, so that output piped to a file reads as it does on
screen. A table wider than the width wraps the text of its widest left-aligned columns.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

DEFAULT_WIDTH = 100
"""Columns of output that is not a terminal (a log, a pipe)."""
GAP = "  "
MIN_WRAPPED = 8
"""The narrowest a wrapped column becomes before the table gives up and overflows."""


def output_width(stream: TextIO = sys.stdout) -> int:
    """The columns to lay text out in: the terminal's width (at most :data:`DEFAULT_WIDTH`
    wider tables are not easier to read), or :data:`DEFAULT_WIDTH` when ``stream`` is not a
    terminal."""
    if stream.isatty():
        return min(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, DEFAULT_WIDTH)
    return DEFAULT_WIDTH


@dataclass
class Table:
    """A titled table of text cells. ``right`` names the right-aligned (numeric) columns; the
    others wrap their text where the table is too wide, except those of ``whole``."""

    title: str
    columns: list[str]
    right: set[str] = field(default_factory=set)
    caption: str = ""
    whole: set[str] = field(default_factory=set)
    """Left-aligned columns whose cells never wrap (like the right-aligned ones)."""
    rows: list[list[str]] = field(default_factory=list)

    def add_row(self, *cells: object) -> None:
        """Append one row: one cell per column, in column order (converted with ``str``)."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)}")
        self.rows.append([str(c) for c in cells])

    def render(self, width: int = DEFAULT_WIDTH) -> str:
        """The table as lines of at most ``width`` columns where the text columns can wrap that
        far (each down to its longest word, and not below :data:`MIN_WRAPPED`): the title
        wrapped, a header row, a rule, the rows and the caption wrapped."""
        widths = [
            max([len(h), *(len(r[i]) for r in self.rows)]) for i, h in enumerate(self.columns)
        ]
        # a wrapped column keeps its longest word whole (a name, a polynomial term)
        floor = {
            i: max(
                MIN_WRAPPED, *(len(w) for c in [h, *(r[i] for r in self.rows)] for w in c.split())
            )
            for i, h in enumerate(self.columns)
            if h not in self.right | self.whole
        }
        while sum(widths) + len(GAP) * (len(widths) - 1) > width:
            i = max(floor, key=lambda j: widths[j] - floor[j], default=None)
            if i is None or widths[i] <= floor[i]:
                break
            widths[i] -= 1
        lines = _wrap(self.title, width) if self.title else []
        lines += self._row(self.columns, widths)
        lines.append(GAP.join("-" * w for w in widths))
        for row in self.rows:
            lines += self._row(row, widths)
        if self.caption:
            lines += _wrap(self.caption, width)
        return "\n".join(line.rstrip() for line in lines)

    def _row(self, cells: Sequence[str], widths: Sequence[int]) -> list[str]:
        """One row as lines: each left-aligned cell wrapped to its column's width."""
        parts = []
        for h, text, w in zip(self.columns, cells, widths, strict=True):
            keep = h in self.right or h in self.whole
            parts.append([text] if keep else _wrap(text, w) or [""])
        height = max(len(p) for p in parts)
        out = []
        for k in range(height):
            line = []
            for h, p, w in zip(self.columns, parts, widths, strict=True):
                text = p[k] if k < len(p) else ""
                line.append(text.rjust(w) if h in self.right else text.ljust(w))
            out.append(GAP.join(line))
        return out


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken at spaces only: a name such as
    ``good-schoenhage-bruun`` or a number stays whole (a longer word overflows)."""
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def print_table(table: Table, stream: TextIO | None = None) -> None:
    """Write ``table`` laid out for ``stream`` (default standard output), then a blank line."""
    out = stream or sys.stdout
    out.write(table.render(output_width(out)) + "\n\n")
    out.flush()


class Progress:
    """What runs now and how far a run has gone, on standard error: ``[3/14] 0:12 verify mlkem
    avx2``. On a terminal one line is rewritten in place (and cleared at the end); in a log
    each step is one line, so a run that stalls shows where."""

    def __init__(self, what: str, total: int, stream: TextIO | None = None) -> None:
        self.what = what
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.start = time.monotonic()

    def _elapsed(self) -> str:
        s = int(time.monotonic() - self.start)
        return f"{s // 60}:{s % 60:02d}"

    def _show(self, text: str) -> None:
        line = f"[{self.done}/{self.total}] {self._elapsed()} {self.what} {text}"
        if self.live:
            width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
            self.stream.write("\r\033[K" + line[: width - 1])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def now(self, text: str) -> None:
        """Say what runs now (the count unchanged)."""
        self._show(text)

    def finished(self, text: str, running: Sequence[str] = ()) -> None:
        """Count one step as done (``text``: which) and, on a terminal, say what still runs."""
        self.done += 1
        if self.live:
            self._show(f"{text} done" + (f"; running {', '.join(running)}" if running else ""))
        else:
            self._show(f"{text} done")

    def close(self) -> None:
        """End the progress display: clear the live line (a log keeps its lines)."""
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()
        else:
            self.stream.write(f"{self.what}: {self.done} of {self.total} in {self._elapsed()}\n")
            self.stream.flush()
