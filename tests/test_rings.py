"""Ring validation, presets and the arithmetic helpers constants are computed with."""

from __future__ import annotations

import pytest

from nttgen import RingError, UnknownNameError, get_ring, make_ring
from nttgen.arith import (
    bitrev,
    factorize,
    is_prime,
    multiplicative_order,
    smallest_root_of_unity,
)
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.rings import PRESETS, custom_ring


def test_is_prime_matches_trial_division() -> None:
    def slow(m: int) -> bool:
        return m >= 2 and all(m % d for d in range(2, int(m**0.5) + 1))

    for m in range(-5, 5000):
        assert is_prime(m) == slow(m), m
    assert is_prime(2147483137) and is_prime(8380417) and not is_prime(2147483137 * 3)


def test_factorize_and_order() -> None:
    assert factorize(3328) == {2: 8, 13: 1}
    assert factorize(8380416) == {2: 13, 3: 1, 11: 1, 31: 1}
    assert multiplicative_order(17, 3329) == 256
    assert multiplicative_order(1753, 8380417) == 512


def test_bitrev() -> None:
    assert [bitrev(i, 3) for i in range(8)] == [0, 4, 2, 6, 1, 5, 3, 7]


def test_smallest_roots_reproduce_fips() -> None:
    assert smallest_root_of_unity(256, 3329) == 17  # FIPS 203
    assert smallest_root_of_unity(512, 8380417) == 1753  # FIPS 204
    with pytest.raises(ValueError, match="does not divide"):
        smallest_root_of_unity(512, 3329)


@pytest.mark.parametrize(
    "name,n,q,bits,depth,root",
    [
        ("mlkem", 256, 3329, 16, 7, 17),
        ("mldsa", 256, 8380417, 32, 8, 1753),
        ("kyber-r1", 256, 7681, 16, 8, 62),
        ("newhope512", 512, 12289, 16, 9, 49),
        ("newhope1024", 1024, 12289, 16, 10, 7),
    ],
)
def test_presets(name: str, n: int, q: int, bits: int, depth: int, root: int) -> None:
    r = PRESETS[name]
    assert (r.n, r.q, r.lane.bits, r.depth, r.root) == (n, q, bits, depth, root)
    assert multiplicative_order(r.root, q) == 2 << depth
    assert r.c_name.isidentifier()


def test_mlkem_standard_order_is_fips203() -> None:
    r = PRESETS["mlkem"]
    # FIPS 203: pair i is a mod (X^2 - zeta^(2*BitRev7(i)+1)), zeta = 17
    assert [r.factor_root(i) for i in range(4)] == [
        pow(17, 2 * bitrev(i, 7) + 1, 3329) for i in range(4)
    ]
    assert "FIPS 203" in r.order_doc


@pytest.mark.parametrize(
    "n,q,rule",
    [
        (300, 3329, "not a power of two"),
        (8, 17, "outside the supported range"),
        (8192, 12289, "outside the supported range"),
        (256, 3330, "not an odd prime"),
        (256, 2, "not an odd prime"),
        (256, 3331, "neither a primitive 512th root"),
        (256, (1 << 31) + 11, "too large"),
    ],
)
def test_invalid_rings_name_the_rule(n: int, q: int, rule: str) -> None:
    with pytest.raises(RingError, match=rule):
        make_ring(n, q)


def test_errors_suggest_nearest_valid_choice() -> None:
    with pytest.raises(RingError, match="nearest: 256 or 512"):
        make_ring(300, 3329)
    with pytest.raises(RingError, match=r"nearest valid q: 3329, 7681"):
        make_ring(256, 3331)
    with pytest.raises(RingError, match=r"nearest primes with an NTT for n=256: 3329, 7681"):
        make_ring(256, 3330)


def test_complete_forced_on_incomplete_prime() -> None:
    with pytest.raises(RingError, match=r"use an incomplete NTT of depth 7"):
        make_ring(256, 3329, complete=True)
    assert make_ring(256, 7681, complete=False).base_degree == 2


def test_lane_choice() -> None:
    assert make_ring(256, 7681).lane == I16
    assert make_ring(256, 40961).lane == I32  # q > 2^15
    assert make_ring(256, 7681, lane_bits=32).lane == I32
    with pytest.raises(RingError, match="does not fit 16-bit lanes"):
        make_ring(256, 40961, lane_bits=16)
    with pytest.raises(RingError, match="lanes are 16 or 32 bits"):
        make_ring(256, 7681, lane_bits=8)


def test_custom_names_round_trip() -> None:
    r = custom_ring(512, 12289)
    assert r.name == "n512_q12289" and get_ring(r.name) == r
    r32 = custom_ring(256, 3329, 32)
    assert r32.name == "n256_q3329_l32" and get_ring(r32.name).lane == I32
    presets = (
        "mlkem, mldsa, kyber-r1, newhope512, newhope1024, sntrup761, falcon512, falcon1024, "
        "ntrulpr761;"
    )
    with pytest.raises(UnknownNameError, match=f"presets are {presets}"):
        get_ring("frodo")


@pytest.mark.parametrize("ring", list(PRESETS.values()), ids=lambda r: r.name)
def test_arith_constants(ring) -> None:  # type: ignore[no-untyped-def]
    a = Arith(ring.q, ring.lane)
    assert (a.q * a.qinv) % a.beta == 1
    assert 0 < a.barrett_v <= ring.lane.max
    assert abs(a.barrett_v - (1 << (ring.lane.bits + a.barrett_k)) / a.q) <= 0.5
    z, zq = a.twisted(5)
    assert (z - 5 * a.beta) % a.q == 0 and (z * a.qinv - zq) % a.beta == 0
    assert abs(z) <= a.q // 2
