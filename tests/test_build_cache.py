"""The build cache: one build per content key, however many processes ask at once."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from nttgen import build_cache
from nttgen.build_cache import STORE_ENV, cached_build, stop_storing, stored


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


def test_stored_results_are_computed_once_per_key_and_only_when_enabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the store enabled a result is computed once per key and read back equal; other
    arguments are another key; disabled (the default for users) or stopped (after a change
    in place), it is computed on every call."""
    monkeypatch.setattr(build_cache, "_store_off_in_this_process", False)
    calls: list[int] = []

    def compute(x: int) -> dict[str, list[int]]:
        calls.append(x)
        return {"value": [x, x * x]}

    def ask(x: int) -> dict[str, list[int]]:
        return stored(tmp_path, "square", (x,), lambda: compute(x))

    monkeypatch.delenv(STORE_ENV, raising=False)
    assert ask(3) == ask(3) == {"value": [3, 9]} and calls == [3, 3]
    monkeypatch.setenv(STORE_ENV, "1")
    calls.clear()
    assert ask(3) == ask(3) == {"value": [3, 9]} and ask(4) == {"value": [4, 16]}
    assert calls == [3, 4]
    stop_storing()
    assert ask(3) == {"value": [3, 9]} and calls == [3, 4, 3]
