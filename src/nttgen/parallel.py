"""Independent steps of a command (one ring, one ISA) run on every CPU, with progress.

Generating, compiling and checking a ring on one ISA does not depend on any other, and each
step is CPU-bound Python or a compiler: worker processes (forked, so they start at once and
share what the parent has loaded) run them side by side. Results come back in the order of the
steps, so the output does not depend on which worker finished first.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TypeVar

from .errors import NttgenError
from .textui import Progress

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """How many steps run at once by default: the CPUs this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_jobs(jobs: int | None) -> int:
    """``jobs`` (None: :func:`default_jobs`), refused unless at least 1."""
    if jobs is None:
        return default_jobs()
    if jobs < 1:
        raise NttgenError(f"--jobs {jobs}: give at least 1")
    return jobs


def run_steps(
    step: Callable[[T], R],
    items: Sequence[T],
    labels: Sequence[str],
    progress: Progress | None = None,
    jobs: int | None = None,
    costs: Sequence[float] | None = None,
) -> list[R]:
    """``[step(x) for x in items]``, at most ``jobs`` at a time in worker processes (inline
    when one job or one item); ``labels[i]`` names item i in ``progress``. Workers take the
    items of highest ``costs`` first (an estimate of each item's time; default: in order), so
    that a long item does not start last and run alone. The first step that raises stops the
    run: steps not yet started are dropped and its exception is raised here."""
    jobs = min(check_jobs(jobs), len(items))
    results: dict[int, R] = {}
    if jobs <= 1 or not hasattr(os, "fork"):
        for i, x in enumerate(items):
            if progress:
                progress.now(labels[i])
            results[i] = step(x)
            if progress:
                progress.finished(labels[i])
        return [results[i] for i in range(len(items))]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        waiting = list(range(len(items)))
        if costs is not None:
            waiting.sort(key=lambda i: -costs[i])
        running: dict[Future[R], int] = {}
        try:
            while waiting or running:
                while waiting and len(running) < jobs:
                    i = waiting.pop(0)
                    running[pool.submit(step, items[i])] = i
                if progress:
                    progress.now("running " + ", ".join(labels[i] for i in running.values()))
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    i = running.pop(future)
                    results[i] = future.result()
                    if progress:
                        progress.finished(labels[i], [labels[j] for j in running.values()])
        except BaseException:
            for future in running:
                future.cancel()
            raise
    return [results[i] for i in range(len(items))]
