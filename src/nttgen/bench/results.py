"""What a benchmark run yields: its results, their statistics, and its JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

K_OPS = ("basemul_acc", "basemul_acc_cached", "ntt_vec", "intt_vec")
"""The ops timed for each k of ``--k`` (the others take no count)."""


def op_label(op: str, k: int) -> str:
    """The op with its k where it takes one, e.g. ``basemul_acc k=3``."""
    return f"{op} k={k}" if op in K_OPS else op


@dataclass
class BenchResult:
    """One measurement: median (and quartiles) of ticks per call, and the samples they come
    from in the order taken (left out of the JSON; see :func:`paired_ratio`)."""

    ring: str
    isa: str
    op: str
    k: int
    median: float
    q1: float
    q3: float
    unit: str
    reductions: int
    samples: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def label(self) -> str:
        """The op with its k, e.g. ``basemul_acc k=3``."""
        return op_label(self.op, self.k)


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """The first quartile, median and third quartile of a non-empty sequence (the elements at
    a quarter, half and three quarters of its sorted order)."""
    v = sorted(values)
    return v[len(v) // 4], v[len(v) // 2], v[(3 * len(v)) // 4]


def paired_ratio(a: BenchResult, b: BenchResult) -> float:
    """How many times as long ``a`` takes as ``b``: the median over samples s of a's sample s
    divided by b's, where the two were timed back to back in one harness (so the ratio is
    nearly free of the clock's and other tenants' changes), else the ratio of the medians."""
    if a.samples and len(a.samples) == len(b.samples):
        return quartiles([x / y for x, y in zip(a.samples, b.samples, strict=True) if y > 0])[1]
    return a.median / b.median


def results_json(
    results: list[BenchResult],
    meta: dict[str, object],
    counts: Sequence[Any] = (),
    ratios: Sequence[dict[str, Any]] = (),
) -> str:
    """Results without their samples (and the instruction counts of emulated ISAs and the
    ratios of ``--compare``, if any) and how they were measured, as JSON."""
    rows = [{k: v for k, v in asdict(r).items() if k != "samples"} for r in results]
    data: dict[str, object] = {"meta": meta, "results": rows}
    if counts:
        data["instruction_counts"] = [asdict(c) for c in counts]
    if ratios:
        data["ratios"] = list(ratios)
    return json.dumps(data, indent=2) + "\n"
