"""The Python API: every preset and the extreme custom rings through the compiled C, the FIPS
203/204 oracles, and input validation."""

from __future__ import annotations

import numpy as np
import pytest

import nttgen
from conftest import ALL_RINGS, ring_id
from nttgen import InputError, RingError, UnknownNameError
from nttgen.reference import schoolbook
from nttgen.verify import verify_kernel


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_verify_every_ring(ring) -> None:  # type: ignore[no-untyped-def]
    """The full differential check: schoolbook product, evaluation at the roots, round trips,
    multiply-accumulate, and every C entry point bit for bit against the checked evaluator, on
    extreme and random inputs."""
    k = nttgen.load(ring, "c")
    results = verify_kernel(k, trials=6, seed=ring.q % 1000)
    failures = [f"{r.name}: {r.failure}" for r in results if not r.ok]
    assert not failures
    assert all(r.cases >= 4 for r in results)


def test_mlkem_matches_kyber_py() -> None:
    from kyber_py.polynomials.polynomials import PolynomialRing as KR

    k = nttgen.load("mlkem", "c")
    R = KR()
    rng = np.random.default_rng(7)
    for _ in range(5):
        a = rng.integers(0, 3329, 256)
        b = rng.integers(0, 3329, 256)
        fa = R([int(x) for x in a]).to_ntt()
        fb = R([int(x) for x in b]).to_ntt()
        ah, bh = k.ntt(a), k.ntt(b)
        assert list(ah) == fa.coeffs and list(bh) == fb.coeffs
        prod = fa * fb
        assert list(k.basemul(ah, bh)) == prod.coeffs
        # kyber-py transforms in place: take each result once, from a fresh object
        back = list(prod.from_ntt().coeffs)
        assert list(k.intt(k.basemul(ah, bh))) == back
        assert list(k.polymul(a, b)) == back


def test_mldsa_matches_dilithium_py() -> None:
    from dilithium_py.polynomials.polynomials import PolynomialRing as DR

    k = nttgen.load("mldsa", "c")
    R = DR()
    q = 8380417
    rng = np.random.default_rng(8)
    for _ in range(5):
        a = rng.integers(0, q, 256)
        b = rng.integers(0, q, 256)
        fa = R([int(x) for x in a]).to_ntt()
        fb = R([int(x) for x in b]).to_ntt()
        ah, bh = k.ntt(a), k.ntt(b)
        assert list(ah) == fa.coeffs and list(bh) == fb.coeffs
        prod = fa * fb
        assert list(k.basemul(ah, bh)) == prod.coeffs
        assert list(k.intt(k.basemul(ah, bh))) == prod.from_ntt().coeffs


def test_batches_and_shapes() -> None:
    k = nttgen.load("kyber-r1")
    rng = np.random.default_rng(9)
    a = rng.integers(-7680, 7681, (4, 256))
    b = rng.integers(-7680, 7681, (4, 256))
    c = k.polymul(a, b)
    assert c.shape == (4, 256) and c.dtype == np.int64
    assert all(np.array_equal(c[i], schoolbook(a[i], b[i], 7681)) for i in range(4))
    assert k.polymul(a[0], b[0]).shape == (256,)
    assert k.ntt(a).shape == (4, 256)
    A = rng.integers(0, 7681, (2, 3, 256))
    acc = k.basemul_acc(
        k.ntt(A.reshape(6, 256)).reshape(2, 3, 256), k.ntt(A.reshape(6, 256)).reshape(2, 3, 256)
    )
    assert acc.shape == (2, 256)
    assert k.basemul_acc(A[0], A[0]).shape == (256,)
    assert (k.n, k.q) == (256, 7681)
    assert k.polymul(a.astype(np.int8) // 64, b.astype(np.int8) // 64).shape == (
        4,
        256,
    )  # any int dtype


def test_auto_isa_and_custom_rings() -> None:
    assert nttgen.load("mlkem", "auto").isa in ("c",)
    k = nttgen.load(n=64, q=257)
    assert k.ring.name == "n64_q257"
    a = np.arange(64)
    assert np.array_equal(k.polymul(a, a), schoolbook(a, a, 257))
    assert nttgen.load("n64_q257") is k


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda k: k.polymul(np.zeros(256, dtype=float), np.zeros(256)),
            "integer array, got dtype float64",
        ),
        (
            lambda k: k.polymul(np.zeros(256, dtype=bool), np.zeros(256, dtype=int)),
            "integer array, got dtype bool",
        ),
        (
            lambda k: k.polymul(np.zeros(255, dtype=int), np.zeros(255, dtype=int)),
            r"shape \(n,\) or \(batch, n\) with n = 256",
        ),
        (
            lambda k: k.polymul(np.zeros((2, 2, 256), dtype=int), np.zeros((2, 2, 256), dtype=int)),
            "expected shape",
        ),
        (
            lambda k: k.polymul(np.full(256, 3329), np.zeros(256, dtype=int)),
            r"must lie in \[-3328, 3328\]",
        ),
        (
            lambda k: k.polymul(np.full(256, -3329), np.zeros(256, dtype=int)),
            r"got values in \[-3329, -3329\]",
        ),
        (
            lambda k: k.polymul(np.zeros((2, 256), dtype=int), np.zeros((3, 256), dtype=int)),
            "same shape",
        ),
        (
            lambda k: k.basemul_acc(np.zeros(256, dtype=int), np.zeros(256, dtype=int)),
            r"\(k, n\) or \(batch, k, n\)",
        ),
        (
            lambda k: k.basemul_acc(np.zeros((0, 256), dtype=int), np.zeros((0, 256), dtype=int)),
            "k >= 1",
        ),
        (lambda k: k.raw("frobnicate"), "unknown operation"),
    ],
)
def test_bad_input_raises_value_error(call, match: str) -> None:  # type: ignore[no-untyped-def]
    k = nttgen.load("mlkem")
    with pytest.raises(ValueError, match=match) as info:
        call(k)
    assert isinstance(info.value, InputError | UnknownNameError)


def test_bad_rings_and_isas() -> None:
    with pytest.raises(RingError, match="not a power of two"):
        nttgen.load(n=100, q=3329)
    with pytest.raises(UnknownNameError, match="unknown ring"):
        nttgen.load("kyber")
    with pytest.raises(UnknownNameError, match="unknown ISA"):
        nttgen.load("mlkem", "sse9")
    with pytest.raises(InputError, match="both n and q"):
        nttgen.load(n=256)
