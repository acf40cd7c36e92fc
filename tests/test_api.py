"""The Python API: every preset and the extreme custom rings through the compiled C, the FIPS
203/204 oracles, and input validation."""

from __future__ import annotations

import numpy as np
import pytest

import nttgen
from conftest import ALL_ISAS, EMULATED_ISAS, SIMD_ISAS, require_isa, ring_isa_cases
from nttgen import InputError, IsaUnavailableError, RingError, UnknownNameError
from nttgen.reference import schoolbook
from nttgen.verify import verify_kernel


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_verify_every_ring(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """The full differential check, for every ring on every ISA that supports it: schoolbook
    product, evaluation at the roots, round trips, multiply-accumulate, and every C entry point
    bit for bit against the checked evaluator, on extreme and random inputs."""
    require_isa(isa)
    k = nttgen.load(ring, isa)
    results = verify_kernel(k, trials=6, seed=ring.q % 1000)
    failures = [f"{r.name}: {r.failure}" for r in results if not r.ok]
    assert not failures
    assert all(r.cases >= 4 for r in results)


SMALLEST = [(32, 97, isa) for isa in ALL_ISAS] + [(16, 97, isa) for isa in ALL_ISAS]


@pytest.mark.parametrize("n,q,isa", SMALLEST, ids=[f"n{n}-{isa}" for n, _, isa in SMALLEST])
def test_the_smallest_rings_an_isa_admits_verify(n: int, q: int, isa: str) -> None:
    """A ring of exactly two vectors per polynomial (no loop left in its base multiplications)
    builds and passes the full check on every ISA that admits it; an ISA too wide for it says
    so in one line."""
    from nttgen.emit.isa import isa_class
    from nttgen.rings import make_ring

    ring = make_ring(n, q)
    why = isa_class(isa).unsupported(ring.n, ring.lane)
    if why:
        with pytest.raises(IsaUnavailableError, match="is too small"):
            nttgen.load(ring, isa)
        return
    require_isa(isa)
    results = verify_kernel(nttgen.load(ring, isa), trials=4, seed=n)
    assert not [f"{r.name}: {r.failure}" for r in results if not r.ok]


@pytest.mark.parametrize("isa", ALL_ISAS)
def test_mlkem_matches_kyber_py(isa: str) -> None:
    from kyber_py.polynomials.polynomials import PolynomialRing as KR

    require_isa(isa)
    k = nttgen.load("mlkem", isa)
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


@pytest.mark.parametrize("isa", ALL_ISAS)
def test_mldsa_matches_dilithium_py(isa: str) -> None:
    from dilithium_py.polynomials.polynomials import PolynomialRing as DR

    require_isa(isa)
    k = nttgen.load("mldsa", isa)
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
    from nttgen import cpu

    assert nttgen.load("mlkem", "auto").isa == cpu.usable_isas()[0]
    assert nttgen.load(n=16, q=97).isa == "c"  # too small for any SIMD layout
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
        nttgen.load("frodo")
    with pytest.raises(UnknownNameError, match="unknown ISA"):
        nttgen.load("mlkem", "sse9")
    with pytest.raises(InputError, match="both n and q"):
        nttgen.load(n=256)


# the strip-mined RVV code keeps the standard order: it has no conversions (tested below)
@pytest.mark.parametrize("isa", [i for i in SIMD_ISAS + EMULATED_ISAS if i != "rvv"])
def test_native_order_conversions(isa: str) -> None:
    """The C kernels that move the NTT domain between the ISA's native order and the standard
    order agree with the order the plan reports, and invert each other."""
    require_isa(isa)
    for name in ("mlkem", "mldsa", "newhope512"):
        k = nttgen.load(name, isa)
        x = np.random.default_rng(1).integers(-30000, 30000, k.n)
        (std,) = k.raw("to_standard", x)
        assert np.array_equal(std, k._from_native(x))
        (back,) = k.raw("from_standard", std)
        assert np.array_equal(back, x)


def test_strip_mined_code_keeps_the_standard_order() -> None:
    require_isa("rvv")
    k = nttgen.load("mlkem", "rvv")
    assert k._native_is_standard and "to_standard" not in k.manifest["functions"]


@pytest.mark.parametrize("isa", SIMD_ISAS)  # NEON holds even n = 16 in two vectors
def test_isa_refuses_rings_too_small(isa: str) -> None:
    require_isa(isa)
    with pytest.raises(IsaUnavailableError, match="too small"):
        nttgen.load(n=16, q=97, isa=isa)


def test_unknown_cpu_feature_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("NTTGEN_ISA", "c")
    with pytest.raises(IsaUnavailableError, match="cannot run on this CPU"):
        nttgen.load("mlkem", "avx2")


@pytest.mark.parametrize("ring", ["mlkem", "mldsa", "kyber-r1"])
def test_the_cached_inner_product_is_the_inner_product(ring: str) -> None:
    """basemul_acc_cached(A, B, basemul_cache(B)) equals basemul_acc(A, B), single and batched,
    on every ISA this machine runs, for k up to past a group of products."""
    from nttgen import cpu

    for isa in cpu.usable_isas():
        k = nttgen.load(ring, isa)
        rng = np.random.default_rng(11)
        lo, hi = k.ring.coefficient_range
        for kk in (1, 2, 4, 7):
            A = k.ntt(rng.integers(lo, hi + 1, (kk, k.n)))
            B = k.ntt(rng.integers(lo, hi + 1, (kk, k.n)))
            cache = k.basemul_cache(B)
            assert cache.shape == (kk, k.n // (2 if ring == "mlkem" else 1))
            want = k.basemul_acc(A, B)
            assert np.array_equal(k.basemul_acc_cached(A, B, cache), want), (isa, kk)
        both = k.basemul_acc_cached(np.stack([A, A]), np.stack([B, B]), np.stack([cache, cache]))
        assert np.array_equal(both, np.stack([want, want]))


def test_a_cache_of_the_wrong_shape_is_refused_in_one_line() -> None:
    k = nttgen.load("mlkem", "c")
    A = np.zeros((3, 256), dtype=np.int64)
    cache = k.basemul_cache(A)
    for bad in (cache[:2], cache[:, :64], cache[0], np.zeros((3, 256), dtype=np.int64)):
        with pytest.raises(InputError, match=r"^cache: expected shape \(3, 128\)"):
            k.basemul_acc_cached(A, A, bad)
    with pytest.raises(InputError, match="cache: expected an integer array"):
        k.basemul_acc_cached(A, A, cache.astype(float))
    with pytest.raises(InputError, match=r"basemul_acc_cached: cache: values \(the C contract\)"):
        k.basemul_acc_cached(A, A, cache + 5000)
