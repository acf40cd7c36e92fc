"""The interval analysis is proven, and confronted with the worst inputs we can find.

* Every transfer-function application made while analysing every kernel of every ring is proven:
  exhaustively for 16-bit lanes, with z3 for 32-bit lanes (see nttgen.proofs).
* The provers reject false claims (negative controls for each method).
* Inputs built to maximise growth never make the checked evaluator overflow, stay inside the
  proven bounds, and come close to them (the analysis is tight, not merely safe).
"""

from __future__ import annotations

import pytest

from conftest import ALL_RINGS, ring_id
from nttgen.adversary import maximise_growth
from nttgen.generate import kernel_set
from nttgen.interp.bounds import Application
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.proofs import applications, montgomery_exact_16, prove, z3_montgomery_exact
from nttgen.rings import PRESETS


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_every_transfer_application_is_proven(ring) -> None:  # type: ignore[no-untyped-def]
    ks = kernel_set(ring, "c")
    apps = applications(ks.functions.values(), ks.arith)
    assert apps
    failed = [p for p in (prove(a, ks.arith) for a in apps) if not p.ok]
    assert not failed, failed[:3]


def test_montgomery_exactness() -> None:
    for q in (3329, 7681, 12289, 32257):
        assert montgomery_exact_16(q)
    assert z3_montgomery_exact(8380417, 32)
    assert z3_montgomery_exact(2147483137, 32)


@pytest.mark.parametrize("arith", [Arith(3329, I16), Arith(8380417, I32)], ids=["16", "32"])
def test_false_claims_are_refuted(arith: Arith) -> None:
    q = arith.q
    top = arith.lane.max
    bad = [
        Application("add", ((0, 10), (0, 10)), (0, 19)),
        Application("sub", ((0, 10), (0, 10)), (-9, 10)),
        Application("barrett", ((-top, top),), (-(q // 4), q // 4)),
        Application("cond_add_q", ((-q, q - 1),), (1, q - 1)),
        Application("montmul", ((-top, top), (q // 2, q // 2)), (-(q // 4), q // 4)),
        Application("montmul_var", ((-q, q), (-q, q)), (-(q // 8), q // 8)),
    ]
    for app in bad:
        assert not prove(app, arith).ok, app


@pytest.mark.parametrize("name", ["mlkem", "kyber-r1", "mldsa", "newhope512"])
def test_worst_case_inputs(name: str) -> None:
    ks = kernel_set(PRESETS[name], "c")
    for op in ("ntt", "intt", "basemul", "reduce"):
        w = maximise_growth(ks.functions[op], ks.arith, sweeps=2)  # checked: raises on overflow
        assert w.peak <= w.bound, (op, w.peak, w.bound)
        if op == "ntt" and ks.ring.lane.bits == 16:
            # the forward transform is linear in its inputs until the first reduction, so the
            # search steers it well: the bound must be near what it finds (tight, not just safe)
            assert w.peak >= 0.6 * w.bound, (op, w.peak, w.bound)
