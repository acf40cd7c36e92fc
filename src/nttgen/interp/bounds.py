"""The independent bounds check: a finished function's ranges re-derived from its IR alone.

The interval interpreter itself (:class:`BoundsInterp`, with :class:`Application` and
:data:`State`) lives in :mod:`nttgen.dsl.bounds`, below the builder that drives it live while a
program is recorded; it is re-exported here. :func:`analyse` replays the recorded IR through a
fresh instance, so every range is derived again without the decisions made while recording.
"""

from __future__ import annotations

from ..dsl.bounds import FIXPOINT_ROUNDS, WIDEN_AFTER, Application, BoundsInterp, State
from ..dsl.ir import Function
from ..dsl.replay import replay
from ..plan.constants import Arith

__all__ = [
    "FIXPOINT_ROUNDS",
    "WIDEN_AFTER",
    "Application",
    "BoundsInterp",
    "State",
    "analyse",
]


class _Replayer(BoundsInterp):
    """BoundsInterp driven by :func:`nttgen.dsl.replay.replay`: records every value's range."""

    def __init__(self, arith: Arith, fn: Function) -> None:
        super().__init__(arith, fn.lanes, fn.name)
        self.fn = fn


def analyse(
    fn: Function, arith: Arith, log: set[Application] | None = None
) -> dict[str, tuple[int, int]]:
    """Re-derive, from the recorded IR alone, the proven range of every output buffer (its
    hull); raises :class:`BoundsError` if any op can overflow. Used to check that the IR the
    builder recorded is safe independently of the decisions made while recording it. When
    ``log`` is given, every transfer-function application is added to it."""
    interp = _Replayer(arith, fn)
    interp.log = log
    for buf in fn.buffers:
        interp.bind_buffer(buf)
    for buf in fn.locals:
        interp.bind_buffer(buf)
    replay(fn, interp)
    return {b.name: interp.buffer_hull(b) for b in fn.buffers if b.role in ("out", "inout")}
