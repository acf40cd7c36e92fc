"""The interval analysis refuses what could overflow, and the checked evaluator catches any
lane that wraps; the DSL has no data-dependent control flow or indexing."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ALL_RINGS, ring_id
from nttgen import BoundsError
from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import (
    Affine,
    Call,
    CallEach,
    Comment,
    Count,
    Load,
    Loop,
    LoopVar,
    Op,
    Store,
    VarDef,
    VarGet,
    VarSet,
    walk,
)
from nttgen.dsl.vocab import VOCABULARY
from nttgen.errors import LaneOverflowError
from nttgen.generate import kernel_set
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16
from nttgen.plan.constants import Arith

AR = Arith(3329, I16)


def test_overflowing_add_is_refused_with_op_and_range() -> None:
    S = Builder("demo", AR, 1)
    a = S.inout("a", 4, (0, 20000))
    with S.tag("layer 3"):
        x = S.load(a, 0)
        with pytest.raises(
            BoundsError, match=r"demo \(layer 3\): add can overflow: .*\[0, 40000\]"
        ):
            S.add(x, x)


def test_output_contract_is_enforced() -> None:
    S = Builder("demo", AR, 1)
    a = S.inout("a", 1, (0, 5000))
    S.store(a, 0, S.barrett(S.load(a, 0)))
    with pytest.raises(
        BoundsError, match=r"output a lies in \[.*\], which breaks its contract \[0, 3328\]"
    ):
        S.finish(require={"a": (0, 3328)})


def test_cross_iteration_dependence_is_refused() -> None:
    S = Builder("demo", AR, 1)
    a = S.inout("a", 8, (0, 10))

    def body(i: LoopVar) -> None:
        S.store(a, Affine.of(i) + 1, S.load(a, i))

    with pytest.raises(BoundsError, match="read by one loop iteration and written by another"):
        S.loop(7, body)


def test_unreduced_loop_carried_value_is_refused() -> None:
    S = Builder("demo", AR, 1)
    k = S.scalar("k")
    a = S.input("a", 1, (0, 3328), per=k)
    r = S.output("r", 1)
    acc = S.var(S.load(a, 0))

    def body(i: LoopVar) -> None:
        S.set(acc, S.add(S.get(acc), S.load(a, Affine.of(i) + 1)))

    with pytest.raises(BoundsError):
        S.loop(Count(-1, k), body)
    del r


def test_call_contract_is_checked() -> None:
    ks = kernel_set(ALL_RINGS[0], "c")
    S = Builder("caller", ks.arith, 1)
    a = S.inout("a", ks.ring.n, (-30000, 30000))
    with pytest.raises(BoundsError, match="whose a must lie in"):
        S.call(ks.functions["ntt"], a=a)


def test_checked_evaluator_catches_wrapping() -> None:
    """Inputs outside a kernel's contract make a lane wrap: checked mode reports it, unchecked
    mode silently wraps (which is why contracts matter)."""
    ks = kernel_set(ALL_RINGS[0], "c")
    fn = ks.functions["ntt"]
    big = np.full((1, ks.ring.n), 32767)
    with pytest.raises(LaneOverflowError, match="overflowed"):
        evaluate(fn, ks.arith, {"a": big}, checked=True)
    evaluate(fn, ks.arith, {"a": big}, checked=False)


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_ir_has_no_data_dependent_control_or_indexing(ring) -> None:  # type: ignore[no-untyped-def]
    """Constant time by construction: every memory index is affine in loop counters, every loop
    count is a constant or a public size parameter, and the only statements are straight-line
    ops from the vocabulary (none of which branches)."""
    ks = kernel_set(ring, "c")
    for fn in ks.functions.values():
        counters: set[LoopVar] = set()
        for s in walk(fn.body):
            if isinstance(s, Loop):
                counters.add(s.var)
                assert isinstance(s.count, Count)
                assert s.count.param is None or s.count.param in fn.params
            elif isinstance(s, Load | Store):
                assert isinstance(s.index, Affine)
                assert all(v in counters for v in s.index.loop_vars)
            elif isinstance(s, Op):
                assert s.kind in VOCABULARY
            elif isinstance(s, CallEach):
                assert s.count in fn.params  # a public count, like a loop's
            else:
                assert isinstance(s, VarDef | VarSet | VarGet | Call | Comment)
