"""polymul's fused core (nttgen.programs.fused): where the transform fits one chunk of
registers, polymul is the first NTT into r and one function that runs b's NTT, the base
multiplication and the inverse without touching memory in between (or, with ``fuse_forwards``,
one function that runs both NTTs, the base multiplication and the inverse). Checked by the exact
evaluator against the schoolbook product and against the unfused polymul on random and
extreme inputs, for the SIMD plans that fuse (complete and incomplete NTTs, 16- and 32-bit
lanes, the largest q of each lane width), and refused where it cannot apply."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nttgen.dsl.ir import Call, Load, Store, walk
from nttgen.generate import default_config, kernel_set
from nttgen.interp.bounds import analyse
from nttgen.interp.evaluate import evaluate
from nttgen.programs.build_config import BuildConfig
from nttgen.programs.fused import whole_pass
from nttgen.programs.kernels import build_kernels
from nttgen.reference import schoolbook_batch
from nttgen.rings import PRESETS, Ring, make_ring
from nttgen.verify import coefficient_cases

FUSED_CASES = [  # (ring, ISA whose plan it takes)
    (PRESETS["mlkem"], "avx2"),
    (PRESETS["mlkem"], "avx512"),
    (PRESETS["kyber-r1"], "avx2"),
    (PRESETS["mldsa"], "avx512"),
    (PRESETS["newhope512"], "avx512"),
    (make_ring(256, 32257), "avx2"),
    (make_ring(256, 2147483137), "avx512"),
    (make_ring(128, 7681), "neon"),
    (make_ring(32, 97), "rvv128"),
    (make_ring(16, 97), "rvv128m1"),
]


def _inputs(ring: Ring, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random, all-extreme (+-(q-1)), alternating-extreme and sparse operands."""
    rng = np.random.default_rng(seed)
    a = np.stack([x for _, x in coefficient_cases(ring.n, ring.q, rng, 3)])
    top = np.full(ring.n, ring.q - 1)
    alternating = np.where(np.arange(ring.n) % 2 == 0, ring.q - 1, -(ring.q - 1))
    sparse = np.zeros(ring.n, dtype=np.int64)
    sparse[ring.n - 1] = -(ring.q - 1)
    a = np.vstack([a, top, -top, alternating, sparse])
    b = np.vstack([np.roll(a, 1, axis=0)[:-4], top, top, -alternating, sparse])
    return a, b


@pytest.mark.parametrize("both", [False, True], ids=["core", "both"])
@pytest.mark.parametrize("ring,isa", FUSED_CASES, ids=[f"{r.name}-{i}" for r, i in FUSED_CASES])
def test_fused_polymul_is_the_schoolbook_product(ring: Ring, isa: str, both: bool) -> None:
    config = replace(default_config(ring, isa), fuse_forwards=both)
    ks = build_kernels(ring, config)
    fn = ks.functions
    core, other = ("mul_both", "mul_core") if both else ("mul_core", "mul_both")
    assert core in fn and other not in fn and "intt_reduce" not in fn, "this plan should fuse"
    assert not fn["polymul"].locals, "the fused polymul needs no scratch array"
    calls = [s.callee.name for s in walk(fn["polymul"].body) if isinstance(s, Call)]
    assert calls == ([core] if both else ["ntt_from", core])
    a, b = _inputs(ring, 7)
    got = evaluate(fn["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
    unfused = build_kernels(ring, replace(config, fuse_polymul=False))
    assert "mul_core" not in unfused.functions
    ref = evaluate(unfused.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, ref)
    for f in fn.values():
        assert analyse(f, ks.arith) == f.contract.outputs


def test_the_core_reads_all_of_r_before_writing_it() -> None:
    """r holds a_hat on entry and the product on exit: safe only because every load from r
    comes before the first store to it."""
    ks = kernel_set(PRESETS["mlkem"], "avx2")
    core = ks.functions["mul_core"]
    r = core.param("r")
    stmts = list(walk(core.body))
    loads = [i for i, s in enumerate(stmts) if isinstance(s, Load) and s.src is r]
    stores = [i for i, s in enumerate(stmts) if isinstance(s, Store) and s.dst is r]
    assert loads and stores and max(loads) < min(stores)


def test_the_core_takes_extreme_a_hat() -> None:
    """The core alone at the ends of its a_hat contract (any NTT output) and of b's."""
    ring = PRESETS["mlkem"]
    ks = kernel_set(ring, "avx2")
    core = ks.functions["mul_core"]
    lo, hi = core.param("r").contract  # type: ignore[union-attr]
    rng = np.random.default_rng(11)
    r = np.where(rng.integers(0, 2, size=(4, ring.n)) == 0, lo, hi)
    b = np.where(rng.integers(0, 2, size=(4, ring.n)) == 0, -(ring.q - 1), ring.q - 1)
    out = evaluate(core, ks.arith, {"r": r, "b": b}, checked=True)["r"]
    assert out.min() >= 0 and out.max() <= ring.q - 1


@pytest.mark.parametrize(
    "name,config,why",
    [
        ("mlkem", BuildConfig(lanes=1), "the last pass loops over chunks"),
        ("mldsa", BuildConfig(lanes=8, merge=(2, 3, 3)), "the last pass loops over chunks"),
        ("mlkem", BuildConfig(lanes=16, merge=(4, 3), gathers=True), "a pass gathers"),
    ],
)
def test_plans_that_cannot_fuse_keep_the_four_calls(
    name: str, config: BuildConfig, why: str
) -> None:
    ring = PRESETS[name]
    ks = build_kernels(ring, config)
    assert whole_pass(ks.passes) is None, why
    assert "mul_core" not in ks.functions
    assert {"ntt_from", "basemul", "intt_reduce"} <= set(ks.functions)


def test_whole_pass_runs_every_layer_once() -> None:
    ks = kernel_set(PRESETS["kyber-r1"], "avx2")
    whole = whole_pass(ks.passes)
    assert whole is not None and not whole.loops
    assert whole.layers == tuple(range(PRESETS["kyber-r1"].depth))
    assert whole.order_out == ks.order
