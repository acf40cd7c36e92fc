"""Python sources are ruff-clean and ruff-formatted; the checked-in generated C is
clang-formatted (the emitter's own layout must agree with clang-format's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import require_tool

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_check() -> None:
    p = _ruff("check", "src", "tests", "scripts")
    assert p.returncode == 0, p.stdout + p.stderr


def test_ruff_format() -> None:
    p = _ruff("format", "--check", "src", "tests", "scripts")
    assert p.returncode == 0, p.stdout + p.stderr


def test_generated_c_is_clang_formatted() -> None:
    """``make lint``'s clang-format check of every checked-in generated file, so that the test
    command catches a layout the emitter gets wrong (a long nested call, say)."""
    require_tool("clang-format-19")
    files = sorted(str(p) for p in (ROOT / "generated").glob("*/*.[ch]"))
    assert files
    p = subprocess.run(
        ["clang-format-19", "--dry-run", "--Werror", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
