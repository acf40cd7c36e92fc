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
