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
from nttgen.interp import transfer
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
    if arith.lane.bits == 16:
        # the coarse reduction's range is wider than the centred one (2160 for q = 3329)
        bad.append(Application("barrett_coarse", ((-top, top),), (-(q // 2), q // 2)))
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


@pytest.mark.parametrize("ring", [r for r in ALL_RINGS if r.lane.bits == 32], ids=ring_id)
def test_shoup_kernels_are_proven(ring) -> None:  # type: ignore[no-untyped-def]
    """x86 builds 32-bit rings with q < 2^27 with Shoup products by constants: every
    application their analysis makes is proven too, Shoup products among them. Larger q keep
    Montgomery products (Shoup's results, up to 1.25q, would not leave the sums room)."""
    ks = kernel_set(ring, "avx2")
    if ring.q >= 1 << 27:
        assert ks.arith.const_mul == "montgomery"
        return
    assert ks.arith.const_mul == "shoup"
    apps = applications(ks.functions.values(), ks.arith)
    assert any(a.kind == "shoupmul" for a in apps)
    failed = [p for p in (prove(a, ks.arith) for a in apps) if not p.ok]
    assert not failed, failed[:3]


@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=ring_id)
def test_neon_shoup2_kernels_are_proven(ring) -> None:  # type: ignore[no-untyped-def]
    """NEON builds ML-KEM and ML-DSA with Shoup products for the doubling high product
    (sqdmulh): every application of their analysis is proven, those products among them."""
    ks = kernel_set(ring, "neon")
    assert ks.arith.const_mul == "shoup2"
    apps = applications(ks.functions.values(), ks.arith)
    assert any(a.kind == "shoupmul" for a in apps)
    failed = [p for p in (prove(a, ks.arith) for a in apps) if not p.ok]
    assert not failed, failed[:3]


@pytest.mark.parametrize(
    "arith",
    [Arith(3329, I16), Arith(8380417, I32), Arith(3329, I16, "shoup2"),
     Arith(8380417, I32, "shoup2")],
    ids=["16", "32", "16-doubling", "32-doubling"],
)  # fmt: skip
def test_false_shoup_claims_are_refuted(arith: Arith) -> None:
    """The transfer function's range of a full-range Shoup product is proven; a claim that it
    stays in [0, q), or a range one shorter at either end, is refuted."""
    q, lane = arith.q, arith.lane
    full, z = (lane.min, lane.max), (q // 2, q // 2)
    lo, hi = transfer.shoupmul(full, arith)
    assert prove(Application("shoupmul", (full, z), (lo, hi)), arith).ok
    for bad in ((0, q - 1), (lo + 1, hi), (lo, hi - 1)):
        assert not prove(Application("shoupmul", (full, z), bad), arith).ok, bad
