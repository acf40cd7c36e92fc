"""The build cache: one build per content key, however many processes ask at once."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from nttgen.build_cache import cached_build


def _build_once(root: str, log: str) -> str:
    def build(directory: Path) -> None:
        with open(log, "a") as f:
            f.write("built\n")
        time.sleep(0.3)  # long enough for the other processes to arrive while it builds
        (directory / "out.txt").write_text("result")

    return str(cached_build(Path(root), "thing", ["source", "flags"], "out.txt", build))


def test_concurrent_callers_share_one_build(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        paths = pool.starmap(_build_once, [(str(tmp_path / "cache"), str(log))] * 4)
    assert len(set(paths)) == 1 and Path(paths[0]).read_text() == "result"
    assert log.read_text() == "built\n"
    # a later call with the same key reuses the build
    assert _build_once(str(tmp_path / "cache"), str(log)) == paths[0]
    assert log.read_text() == "built\n"


def test_a_failed_build_caches_nothing(tmp_path: Path) -> None:
    def fail(directory: Path) -> None:
        (directory / "out.txt").write_text("half")
        raise RuntimeError("compiler failed")

    with pytest.raises(RuntimeError, match="compiler failed"):
        cached_build(tmp_path, "thing", ["x"], "out.txt", fail)
    assert not list(tmp_path.glob("thing-*/out.txt"))
