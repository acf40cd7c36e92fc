"""The inverse NTT's last layer by Montgomery products where the others are Shoup products.

Shoup products (32-bit lanes on x86, ``shoup2`` on NEON) leave results in about [0, q + q/4),
so an inverse whose last layer multiplies by them needs a reduction of every output to meet a
bound below q; Montgomery products leave centred results. The generator therefore also tries
the ``gs`` inverse with its last layer (the one carrying the final factor) by Montgomery pairs
(:class:`nttgen.programs.intt_variants.InttVariant`, ``centred_last``) and keeps it where the
analysis ranks it cheaper.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nttgen.generate import default_config, kernel_set
from nttgen.interp.cost import count_ops
from nttgen.interp.evaluate import evaluate
from nttgen.programs.intt_variants import INTT_THRESHOLDS, intt_variants
from nttgen.programs.kernels import build_kernels
from nttgen.rings import PRESETS


def test_centred_variants_come_with_shoup_products_only() -> None:
    """Without Shoup products no variant is centred; with them, one per threshold, each a
    ``gs`` inverse with the factor in its last layer."""
    q = PRESETS["mldsa"].q
    assert not any(v.centred_last for v in intt_variants(q, ("gs", "dit")))
    centred = [v for v in intt_variants(q, ("gs", "dit"), shoup=True) if v.centred_last]
    assert len(centred) == len(INTT_THRESHOLDS)
    assert all(v.network == "gs" and not v.scale_first for v in centred)
    assert not any(v.centred_last for v in intt_variants(q, ("dit",), shoup=True))


@pytest.mark.parametrize("isa", ["avx2", "avx512", "neon"])
def test_mldsa_inverse_needs_no_final_reduction(isa: str) -> None:
    """ML-DSA's inverse with Shoup products takes the centred last layer: Montgomery
    products there, no reduction anywhere, and outputs inside what ML-DSA's flows accept."""
    ring = PRESETS["mldsa"]
    ks = kernel_set(ring, isa)
    assert ks.arith.const_mul != "montgomery"
    fn = ks.functions["intt"]
    assert fn.info["variant"].centred_last
    counts = count_ops(fn)
    assert counts["montmul"] > 0 and counts["reductions"] == 0
    lo, hi = fn.contract.outputs["a"]
    assert -(ring.q - 5) <= lo and hi <= ring.q - 5


@pytest.mark.parametrize("isa", ["avx2", "neon"])
def test_centred_inverse_inverts_the_ntt(isa: str) -> None:
    """ntt(intt(x)) = beta * x (mod q) for inputs at the ends of the inverse's contract and
    random ones, evaluated exactly in checked mode (no lane wraps); and the Shoup-only inverse
    (the centred variants left out) agrees with it mod q."""
    ring = PRESETS["mldsa"]
    ks = kernel_set(ring, isa)
    intt, ntt = ks.functions["intt"], ks.functions["ntt"]
    lo, hi = intt.contract.inputs["a"]
    rng = np.random.default_rng(7)
    x = rng.integers(lo, hi + 1, size=(8, ring.n))
    x[0], x[1], x[2] = lo, hi, np.where(np.arange(ring.n) % 2, lo, hi)
    y = evaluate(intt, ks.arith, {"a": x}, checked=True)["a"]
    z = evaluate(ntt, ks.arith, {"a": y}, checked=True)["a"]
    assert np.array_equal(z % ring.q, (x * ks.arith.beta) % ring.q)
    # the same inverse built without Shoup products in its last layer
    plain = build_kernels(
        ring,
        replace(default_config(ring, isa), intt_networks=("dit",)),
        kernel_set(ring, "c").published,
    )
    assert not plain.functions["intt"].info["variant"].centred_last
    y2 = evaluate(plain.functions["intt"], plain.arith, {"a": x}, checked=True)["a"]
    assert np.array_equal(y % ring.q, y2 % ring.q)
