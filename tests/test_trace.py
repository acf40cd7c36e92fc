"""Traced ring maps: the trace of a map's forward transform, evaluated, equals
the map itself, and it skips the zero padding."""

from __future__ import annotations

import random

import pytest

from nttgen.plan.maps import PIPELINE_NAMES, build_pipeline
from nttgen.plan.maps.trace import trace_map

Q = 4591


@pytest.mark.parametrize("name", PIPELINE_NAMES)
def test_traced_forward_equals_the_map(name: str) -> None:
    pipe = build_pipeline(name, 761, Q)
    trace, outs = trace_map(pipe.forward, Q, 761)
    rng = random.Random(name)
    a = [rng.randrange(Q) for _ in range(761)]
    flat = [x for part in outs for x in part]
    want = [x for part in pipe.forward(a) for x in part]
    assert trace.evaluate(a, flat) == want
    counts = trace.counts()
    counted = pipe.tree.forward_cost()
    # the trace never does more than the counted loops (it skips the zero padding)
    assert counts.get("add", 0) + counts.get("sub", 0) <= counted["add"]
    assert counts.get("mulc", 0) <= counted["mul_const"] + counted["scale"]


def test_pruned_and_hoisted_traces_compute_the_same() -> None:
    """``pruned`` keeps exactly the nodes the chosen outputs depend on; ``hoisted`` moves a
    tail of nodes up to just after their operands. Both keep a valid evaluation order and
    the outputs' values."""
    pipe = build_pipeline("good-rader-bruun", 761, Q)
    gt = pipe.tree.root
    trace, outs = trace_map(lambda xs: gt.forward(list(xs) + [0] * 54), Q, 48)
    keep = [part[0] for part in outs[6:]]  # drop the first six pieces
    small = trace.pruned(keep)
    assert len(small.nodes) < len(trace.nodes)
    needed = {o.id for o in keep if not isinstance(o, int)}
    for node in reversed(small.nodes):  # every node kept is needed
        assert node.id in needed
        needed.update(a.id for a in node.args if not isinstance(a, int))
    rng = random.Random(3)
    a = [rng.randrange(Q) for _ in range(48)]
    assert small.evaluate(a, keep) == trace.evaluate(a, keep)
    start = len(trace.nodes)
    tail = [keep[i] - keep[i + 1] for i in range(0, len(keep) - 1, 2)]
    moved = trace.hoisted(start)
    assert sorted(n.id for n in moved.nodes) == sorted(n.id for n in trace.nodes)
    where = {n.id: i for i, n in enumerate(moved.nodes)}
    for t in tail:  # right after its later operand
        assert where[t.id] == max(where[x.id] for x in t.args) + 1
    assert moved.evaluate(a, tail) == trace.evaluate(a, tail)
