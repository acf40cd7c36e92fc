"""Python sources are ruff-clean and ruff-formatted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
