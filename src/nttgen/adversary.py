"""Inputs built to maximise growth: a search for the worst case of a kernel's intermediate
values, to confront the interval analysis with the most demanding inputs one can find.

Starting from inputs at the ends of the input contract, a coordinate search flips one
coefficient at a time between the contract's ends (and 0) and keeps the change when the largest
|intermediate result| of the kernel grows. All candidate flips of one sweep are evaluated in one
batch by the exact evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dsl.ir import Buffer, Call, CallEach, Function, Op, walk
from .interp.evaluate import evaluate
from .plan.constants import Arith


@dataclass
class WorstCase:
    """The input found, the peak |intermediate| it reaches, and the analysis's bound on it."""

    inputs: dict[str, np.ndarray]
    peak: int
    bound: int


CHECKED_OPS = (
    "add", "sub", "montmul", "shoupmul", "montmul_var", "montmul_twist", "barrett",
    "barrett_coarse", "cond_add_q"
)  # fmt: skip


def analysis_peak(fn: Function) -> int:
    """The largest |result| the analysis allows for the ops the evaluator checks (the ones
    whose results must not wrap), in ``fn`` and the functions it calls."""
    peak = 0
    for s in walk(fn.body):
        if isinstance(s, Op) and s.kind in CHECKED_OPS:
            peak = max(peak, max(fn.bounds[r].magnitude for r in s.results))
        elif isinstance(s, Call):
            peak = max(peak, analysis_peak(s.callee))
        elif isinstance(s, CallEach):
            peak = max(peak, *(analysis_peak(callee) for callee, _ in s.calls))
    return peak


def _peak(fn: Function, arith: Arith, inputs: dict[str, np.ndarray]) -> np.ndarray:
    peaks: list[np.ndarray] = []
    evaluate(fn, arith, inputs, checked=True, peaks=peaks)
    return peaks[0]


def searchable(fn: Function) -> bool:
    """Whether :func:`maximise_growth` can search ``fn``'s inputs: every input buffer has a
    fixed length (none is sized by a run-time count such as basemul_acc's k)."""
    return all(b.per_param is None for b in fn.buffers if b.role in ("in", "inout"))


def maximise_growth(
    fn: Function,
    arith: Arith,
    *,
    sweeps: int = 2,
    seed: int = 0,
    coordinates: int | None = None,
) -> WorstCase:
    """Search inputs of ``fn`` (in-contract) that maximise its largest intermediate value (in
    ``fn`` and the functions it calls). Each sweep tries every coefficient, or ``coordinates``
    of them chosen at random per buffer (a cheaper search for large kernels). Every evaluation
    runs in checked mode, so an overflow anywhere raises
    :class:`~nttgen.errors.LaneOverflowError`."""
    rng = np.random.default_rng(seed)
    bufs = [b for b in fn.buffers if b.role in ("in", "inout") and b.per_param is None]
    cur = {b.name: _start(b, rng) for b in bufs}
    best = int(_peak(fn, arith, {k: v[None] for k, v in cur.items()})[0])
    for _ in range(sweeps):
        for b in bufs:
            lo, hi = b.contract  # type: ignore[misc]
            choices = np.array([lo, hi, 0], dtype=np.int64)
            tried = np.arange(b.length)
            if coordinates is not None and coordinates < b.length:
                tried = np.sort(rng.choice(b.length, coordinates, replace=False))
            for c in choices:
                cands = np.repeat(cur[b.name][None], len(tried), axis=0)
                cands[np.arange(len(tried)), tried] = c
                batch = {k: np.repeat(v[None], len(tried), axis=0) for k, v in cur.items()}
                batch[b.name] = cands
                peaks = _peak(fn, arith, batch)
                i = int(np.argmax(peaks))
                if peaks[i] > best:
                    best = int(peaks[i])
                    cur[b.name] = cands[i].copy()
    return WorstCase(cur, best, analysis_peak(fn))


def _start(b: Buffer, rng: np.random.Generator) -> np.ndarray:
    lo, hi = b.contract  # type: ignore[misc]
    return np.where(rng.integers(0, 2, b.length) == 1, hi, lo).astype(np.int64)
