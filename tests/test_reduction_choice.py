"""Which reduction each function of an x^n + 1 kernel set takes (KernelSet._either_reduction):
with 16-bit SIMD lanes every transform and product is built with Barrett's exact reductions and
with the lazy policy's coarse ones, and the cheaper build by interp.cost.rank is kept. The
portable C, which publishes the ring's contract, keeps Barrett's; with 32-bit lanes only a q near
a power of two has a coarse reduction."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nttgen.dsl.ir import Function
from nttgen.generate import default_config, kernel_set
from nttgen.interp.cost import count_ops, rank
from nttgen.programs.kernels import build_kernels
from nttgen.rings import get_ring, make_ring

CHOSEN = ("ntt_from", "basemul_acc", "basemul_acc_cached", "intt")


def _reductions(fn: Function) -> dict[str, int]:
    counts = count_ops(fn, {"k": 3})
    return {op: counts.get(op, 0) for op in ("barrett", "barrett_coarse")}


@pytest.mark.parametrize("ring", ["kyber-r1", "newhope512"])
def test_each_function_keeps_the_cheaper_reduction(ring: str) -> None:
    """Every function of the AVX2 set ranks no worse than the same function built with
    Barrett's reductions alone (the choice is the ranking's, not a fixed one), and the inverse
    and the inner products did take the coarse form, which the forward NTT did not."""
    r = get_ring(ring)
    contract = kernel_set(r, "c").published
    config = default_config(r, "avx2")
    assert config.coarse_reductions
    chosen = kernel_set(r, "avx2").functions
    exact = build_kernels(r, replace(config, coarse_reductions=False), contract).functions
    for name in CHOSEN:
        assert rank(chosen[name]) <= rank(exact[name]), name
    assert _reductions(chosen["intt"])["barrett_coarse"] > 0
    assert _reductions(chosen["basemul_acc"])["barrett_coarse"] > 0
    assert _reductions(chosen["ntt_from"])["barrett_coarse"] == 0
    # and where it took the coarse form, the exact one ranked worse
    assert rank(chosen["intt"]) < rank(exact["intt"])


@pytest.mark.parametrize("ring", ["mlkem", "newhope512", "mldsa"])
def test_the_portable_c_keeps_barrett(ring: str) -> None:
    """The reference set (portable C) never reduces coarsely, so the ring's published contract
    is Barrett's."""
    r = get_ring(ring)
    assert not default_config(r, "c").coarse_reductions
    for name, fn in kernel_set(r, "c").functions.items():
        assert _reductions(fn)["barrett_coarse"] == 0, name


def test_32_bit_lanes_reduce_coarsely_only_near_a_power_of_two() -> None:
    """ML-DSA's q = 2^23 - 2^13 + 1 has a rounding-shift reduction, which its AVX2 inner
    product takes for its final reduction (and ranks no worse for it); q = 7681 in 32-bit
    lanes has none, and its AVX2 set keeps Barrett's."""
    mldsa = get_ring("mldsa")
    config = default_config(mldsa, "avx2")
    assert config.coarse_reductions
    chosen = kernel_set(mldsa, "avx2").functions
    contract = kernel_set(mldsa, "c").published
    exact = build_kernels(mldsa, replace(config, coarse_reductions=False), contract).functions
    assert _reductions(chosen["basemul_acc"]) == {"barrett": 0, "barrett_coarse": 32}
    assert _reductions(exact["basemul_acc"]) == {"barrett": 32, "barrett_coarse": 0}
    assert rank(chosen["basemul_acc"]) < rank(exact["basemul_acc"])
    far = make_ring(256, 7681, lane_bits=32)
    assert not default_config(far, "avx2").coarse_reductions
