"""The command line's plain-text output (tables, progress) and its parallel steps."""

from __future__ import annotations

import io
import os

import pytest

from nttgen.errors import NttgenError
from nttgen.parallel import check_jobs, run_steps
from nttgen.textui import Progress, Table


def test_a_table_wraps_text_columns_to_the_width_and_keeps_numbers_whole() -> None:
    """Left-aligned text wraps at spaces (never inside a hyphenated name); right-aligned
    numbers are padded, never wrapped; the title wraps too."""
    t = Table("a title " * 20, ["name", "what", "ticks"], {"ticks"})
    t.add_row("sntrup761", "pipelines: good-schoenhage-bruun, good-rader-bruun " * 2, "25,803")
    t.add_row("mlkem", "NTT", 906)
    text = t.render(60)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 60
    assert "good-schoenhage-bruun," in text and "schoenhage-\n" not in text
    assert any(line.endswith("25,803") for line in lines)
    assert any(line.startswith("mlkem") and line.endswith("   906") for line in lines)
    with pytest.raises(ValueError, match="a row of 2 cells in a table of 3"):
        t.add_row("x", "y")


def test_progress_in_a_log_is_one_line_per_step_with_n_of_m() -> None:
    """Piped output keeps every step (so a stalled run shows where) and ends with a count."""
    out = io.StringIO()
    p = Progress("verify", 2, out)
    p.now("mlkem c")
    p.finished("mlkem c")
    p.finished("mldsa c")
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[0/2] 0:00 verify mlkem c")
    assert lines[2].startswith("[2/2]") and lines[2].endswith("mldsa c done")
    assert lines[-1].startswith("verify: 2 of 2 in 0:0")


def _square(x: int) -> int:
    if x < 0:
        raise NttgenError(f"negative: {x}")
    return x * x + 0 * os.getpid()


def test_steps_run_in_workers_and_come_back_in_order() -> None:
    """Results in item order whichever worker finishes first, costs only reorder the work,
    and a step's error reaches the caller as itself."""
    items = list(range(7))
    out = io.StringIO()
    p = Progress("square", len(items), out)
    assert run_steps(_square, items, [str(i) for i in items], p, 2, [0, 9, 1, 8, 2, 7, 3]) == [
        i * i for i in items
    ]
    assert p.done == 7
    assert run_steps(_square, items, [str(i) for i in items], None, 1) == [i * i for i in items]
    with pytest.raises(NttgenError, match="negative: -3"):
        run_steps(_square, [1, -3, 2], ["a", "b", "c"], None, 2)
    assert check_jobs(None) >= 1
    with pytest.raises(NttgenError, match="--jobs 0: give at least 1"):
        check_jobs(0)
