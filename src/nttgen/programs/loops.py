"""Loop nests over the loop runs of a layout (shared by the transforms and base multiplication)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..dsl.builder import Builder
from ..dsl.ir import Affine, LoopVar
from ..plan.layout import LoopRun


def run_bases(runs: Sequence[LoopRun]) -> list[int]:
    """The base address of every iteration of a loop nest, in execution order (the first run
    is the outermost loop)."""
    bases = [0]
    for run in runs:
        bases = [b + (v << run.start) for b in bases for v in range(run.count)]
    return bases


def nest_loops(
    S: Builder,
    runs: Sequence[LoopRun],
    body: Callable[[Affine, Affine], None],
    *,
    hint: str,
    base: Affine | None = None,
) -> None:
    """Emit one loop per run, the first outermost, and call ``body(addr, it)`` innermost, where
    ``addr`` = base + sum(counter << run.start) is the address of the iteration and ``it`` its
    number in execution order (mixed radix: the index of its entry in :func:`run_bases`)."""

    def nest(k: int, addr: Affine, it: Affine) -> None:
        if k == len(runs):
            body(addr, it)
            return
        run = runs[k]
        mult = 1
        for r in runs[k + 1 :]:
            mult *= r.count

        def inner(v: LoopVar) -> None:
            nest(k + 1, addr + Affine.of(v) * (1 << run.start), it + Affine.of(v) * mult)

        S.loop(run.count, inner, hint=hint)

    nest(0, base if base is not None else Affine(0), Affine(0))
