"""Property tests over random rings: the generator either emits kernels that pass every
differential check and the checked evaluator, or refuses with a reason; never a wrong kernel."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nttgen
from nttgen import BoundsError, RingError
from nttgen.arith import is_prime
from nttgen.generate import kernel_set
from nttgen.interp.evaluate import evaluate
from nttgen.reference import schoolbook_batch
from nttgen.verify import verify_kernel


def _prime_at_or_above(start: int, modulus: int, limit: int) -> int | None:
    q = start - (start - 1) % modulus
    if q < start:
        q += modulus
    while q < limit:
        if is_prime(q):
            return q
        q += modulus
    return None


@st.composite
def valid_rings(draw):  # type: ignore[no-untyped-def]
    log_n = draw(st.integers(4, 9))
    n = 1 << log_n
    bits = draw(st.sampled_from((16, 32)))
    limit = 1 << (bits - 1)
    modulus = draw(st.sampled_from((n, 2 * n)))
    start = draw(st.integers(modulus + 1, limit - 1))
    q = _prime_at_or_above(start, modulus, limit) or _prime_at_or_above(modulus + 1, modulus, limit)
    if q is None:
        return None
    lane = bits if q < 1 << 15 and bits == 32 else None
    return (n, q, lane)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_rings())
def test_random_valid_rings_verify(params) -> None:  # type: ignore[no-untyped-def]
    if params is None:
        return
    n, q, lane = params
    try:
        ring = nttgen.custom_ring(n, q, lane)
    except RingError as e:  # refusal must name a rule
        assert str(e)
        return
    try:
        k = nttgen.load(ring, "c")
    except BoundsError as e:
        assert "overflow" in str(e) or "fit" in str(e)
        return
    failures = [
        f"{r.name}: {r.failure}" for r in verify_kernel(k, trials=2, seed=q % 97) if not r.ok
    ]
    assert not failures, (ring.name, failures)


@settings(max_examples=60, deadline=None)
@given(st.integers(-5, 5000), st.integers(-10, 1 << 32), st.sampled_from((None, 16, 32)))
def test_arbitrary_parameters_are_refused_or_correct(n: int, q: int, lane: int | None) -> None:
    """Any (n, q): a clear refusal, or kernels whose evaluated product is exact."""
    try:
        ring = nttgen.make_ring(n, q, lane_bits=lane)
    except RingError as e:
        msg = str(e)
        assert msg and ("n=" in msg or "q=" in msg or "lane" in msg)
        return
    ks = kernel_set(ring, "c")
    rng = np.random.default_rng(q % 1000)
    a = rng.integers(-(q - 1), q, size=(2, ring.n))
    b = rng.integers(-(q - 1), q, size=(2, ring.n))
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
