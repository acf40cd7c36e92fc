"""NTRU Prime rings Z_q[x]/(x^p - x - 1): presets, custom rings, the Python multiplication API
through every pipeline, and the ``nttgen plans`` command.

Products are checked against an exact-integer schoolbook product reduced by x^p = x + 1 and
against ``galois`` over GF(q), on random, all-extreme and sparse inputs.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import nttgen
from nttgen.errors import InputError, RingError, UnknownNameError
from nttgen.ntru_rings import (
    NTRU_PRESETS,
    get_ntru_ring,
    make_ntru_ring,
    parse_ntru_modulus,
    polymul,
    polymul_small,
)
from nttgen.plan.maps import PIPELINE_NAMES, NoRootOfUnityError, NoSquareRootError
from nttgen.rings import get_ring
from test_ringmaps import ref_ntru as schoolbook  # exact integers, x^p = x + 1, centred

SNTRUP = NTRU_PRESETS["sntrup761"]
NTTGEN = [sys.executable, "-m", "nttgen"]


def inputs(p: int, q: int, seed: int) -> dict[str, tuple[list[int], list[int]]]:
    """Named operand pairs: random, all-extreme (every coefficient +-(q-1)/2 and beyond the
    centred range), sparse, small."""
    rng = random.Random(seed)
    h = (q - 1) // 2
    sparse_a, sparse_b = [0] * p, [0] * p
    for _ in range(4):
        sparse_a[rng.randrange(p)] = rng.randrange(-h, h + 1)
        sparse_b[rng.randrange(p)] = rng.randrange(-h, h + 1)
    sparse_a[p - 1] = sparse_b[p - 1] = h  # the top coefficients meet in x^(2p-2)
    return {
        "random": (
            [rng.randrange(-h, h + 1) for _ in range(p)],
            [rng.randrange(q) for _ in range(p)],
        ),
        "extreme+": ([h] * p, [h] * p),
        "extreme+-": ([h] * p, [-h] * p),
        "wide": ([q - 1] * p, [-(q - 1)] * p),  # not reduced: taken mod q
        "sparse": (sparse_a, sparse_b),
    }


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_presets_multiply_through_every_pipeline(pipeline: str) -> None:
    for name, (a, b) in inputs(761, 4591, 1).items():
        got = polymul(SNTRUP, a, b, pipeline)
        assert got == schoolbook(a, b, 761, 4591), name
        assert all(-2295 <= x <= 2295 for x in got)


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_polymul_small_through_every_pipeline(pipeline: str) -> None:
    rng = random.Random(2)
    ring = get_ntru_ring("ntrulpr761")  # the alias names sntrup761's ring
    cases = {
        "random": [rng.choice((-1, 0, 1)) for _ in range(761)],
        "all+1": [1] * 761,
        "all-1": [-1] * 761,
        "weight-286": [0] * 761,
    }
    for i in rng.sample(range(761), 286):  # sntrup761's fixed weight w = 286
        cases["weight-286"][i] = rng.choice((-1, 1))
    a = [rng.randrange(-2295, 2296) for _ in range(761)]
    for name, s in cases.items():
        assert polymul_small(ring, a, s, pipeline) == schoolbook(a, s, 761, 4591), name
    assert polymul_small(ring, [2295] * 761, [-1] * 761, pipeline) == schoolbook(
        [2295] * 761, [-1] * 761, 761, 4591
    )


def test_products_agree_with_galois() -> None:
    galois = pytest.importorskip("galois")
    gf = galois.GF(4591)
    f = galois.Poly.Degrees([761, 1, 0], [1, 4590, 4590], field=gf)
    a, b = inputs(761, 4591, 3)["random"]
    c = (
        galois.Poly([x % 4591 for x in a], field=gf, order="asc")
        * galois.Poly([x % 4591 for x in b], field=gf, order="asc")
    ) % f
    want = [int(x) for x in c.coeffs[::-1]] + [0] * 761
    assert polymul(SNTRUP, a, b) == [(x + 2295) % 4591 - 2295 for x in want[:761]]


def test_presets() -> None:
    for name in ("sntrup761", "ntrulpr761"):
        ring = get_ntru_ring(name)
        assert (ring.p, ring.q, ring.modulus_poly, ring.half) == (761, 4591, "x^761 - x - 1", 2295)
        assert ring.pipeline_names == PIPELINE_NAMES
        assert ring.default_pipeline == "good-rader-bruun"  # fewest additions and multiplications
        assert ring.summary()["output_range"] == [-2295, 2295]


@pytest.mark.parametrize(
    ("p", "q", "pipelines"),
    [
        (653, 4621, ("schoenhage-nussbaumer",)),
        (857, 5167, PIPELINE_NAMES),
    ],
)
def test_custom_rings_choose_from_the_factors_of_q_minus_1(
    p: int, q: int, pipelines: tuple[str, ...]
) -> None:
    ring = make_ntru_ring(p, q)
    assert ring.name == f"p{p}_q{q}" and get_ntru_ring(ring.name) == ring
    assert ring.pipeline_names == pipelines
    for pipeline in pipelines:
        for name, (a, b) in inputs(p, q, 4).items():
            if name in ("random", "extreme+-"):
                assert polymul(ring, a, b, pipeline) == schoolbook(a, b, p, q), (pipeline, name)


def test_a_refused_pipeline_names_its_rule() -> None:
    ring = make_ntru_ring(653, 4621)
    a = [1] * 653
    with pytest.raises(NoSquareRootError, match=r"q=4621 = 1 \(mod 4\)"):
        polymul(ring, a, a, "good-schoenhage-bruun")
    with pytest.raises(NoRootOfUnityError, match="Rader"):
        polymul(ring, a, a, "good-rader-bruun")
    with pytest.raises(UnknownNameError, match="expected one of"):
        polymul(ring, a, a, "fft")


@pytest.mark.parametrize(
    ("p", "q", "rule"),
    [
        (760, 4591, "p=760 is not prime"),
        (761, 4590, "not an odd prime|not prime"),
        (761, 40961, "q < 2\\^15"),
        (761, 2, "odd prime"),
    ],
)
def test_bad_parameters_are_refused(p: int, q: int, rule: str) -> None:
    with pytest.raises(RingError, match=rule):
        make_ntru_ring(p, q)


def test_modulus_text() -> None:
    assert parse_ntru_modulus("x^761 - x - 1") == 761
    assert parse_ntru_modulus("  x ^ 653-x-1 ") == 653
    for bad in ("x^761 + x + 1", "x^761 - 1", "x^761 - x^2 - 1", "y^761 - y - 1", ""):
        with pytest.raises(RingError, match="shape x\\^p - x - 1"):
            parse_ntru_modulus(bad)


def test_bad_inputs_are_refused() -> None:
    a = [0] * 761
    with pytest.raises(InputError, match="expected p = 761 coefficients, got 760"):
        polymul(SNTRUP, a[:-1], a)
    with pytest.raises(InputError, match=r"integers; b\[3\] = 1.5"):
        polymul(SNTRUP, a, [0, 0, 0, 1.5, *a[4:]])
    with pytest.raises(InputError, match=r"s\[5\] = 2"):
        polymul_small(SNTRUP, a, [0] * 5 + [2] + [0] * 755)
    with pytest.raises(UnknownNameError, match="p<P>_q<Q>"):
        get_ntru_ring("sntrup653")


def test_one_lookup_reads_every_family_and_each_family_only_its_own() -> None:
    assert nttgen.get_ring("sntrup761") is SNTRUP
    assert nttgen.get_ring("ntrulpr761") is SNTRUP
    assert nttgen.get_ring("p653_q4621") == make_ntru_ring(653, 4621)
    assert nttgen.get_ring("mlkem") is get_ring("mlkem")
    with pytest.raises(UnknownNameError, match=r"n<N>_q<Q> or p<P>_q<Q>"):
        nttgen.get_ring("sntrup653")
    with pytest.raises(UnknownNameError, match=r"unknown x\^n \+ 1 ring 'sntrup761'"):
        get_ring("sntrup761")


# -- the command line --------------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NTTGEN, *args], capture_output=True, text=True, timeout=600)


def test_plans_command(tmp_path: Path) -> None:
    p = run("plans", "--ring", "sntrup761", "--json", str(tmp_path / "plans.json"))
    assert p.returncode == 0, p.stderr
    for name in PIPELINE_NAMES:
        assert name in p.stdout
    assert "Phi_17(x^96)" in p.stdout and "192 x deg 8" in p.stdout
    (rec,) = json.loads((tmp_path / "plans.json").read_text())
    rows = {r["pipeline"]: r for r in rec["pipelines"]}
    grb = SNTRUP.pipeline("good-rader-bruun")
    assert rows["good-rader-bruun"]["ops"] == grb.cost_breakdown()
    assert rows["good-rader-bruun"]["default"] is True


def test_plans_command_custom_ring_and_refusals() -> None:
    p = run("plans", "--q", "4621", "--f", "x^653 - x - 1")
    assert p.returncode == 0, p.stderr
    assert "*schoenhage-nussbaumer" in p.stdout
    assert "refused: good-schoenhage-bruun: q=4621 = 1 (mod 4)" in p.stdout.replace("\n", " ")
    for args, rule in (
        (("--q", "4621", "--f", "x^653 + x + 1"), "not of the shape x^p - x - 1"),
        (("--q", "4621"), "needs both --q Q and --f"),
        (("--ring", "p760_q4591"), "p=760 is not prime"),
        (("--ring", "kyber"), "unknown NTRU Prime ring"),
    ):
        p = run("plans", *args)
        assert p.returncode == 2 and rule in p.stderr and p.stderr.count("\n") == 1, (args, p)


def test_generate_writes_an_ntru_prime_ring_or_refuses_clearly(tmp_path: Path) -> None:
    p = run("generate", "--ring", "sntrup761", "--isa", "avx2", "-o", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "nttgen_sntrup761_avx2.c").exists()
    p = run("generate", "--q", "5167", "--f", "x^857 - x - 1", "-o", str(tmp_path))
    assert p.returncode == 0 and (tmp_path / "nttgen_p857_q5167_c.h").exists(), p.stderr
    for args, rule in (
        (("--ring", "sntrup761", "--isa", "rvv256"), "not yet for rvv256"),
        (
            ("--q", "4621", "--f", "x^653 - x - 1", "--pipeline", "good-rader-bruun"),
            "good-rader-bruun: needs a prime r >= 5",
        ),
        (("--ring", "sntrup761", "--pipeline", "fft"), "unknown pipeline 'fft'"),
        (("--ring", "sntrup761", "--dispatch", "--pipeline", "all"), "default pipeline alone"),
    ):
        p = run("generate", *args, "-o", str(tmp_path))
        assert p.returncode == 2 and rule in p.stderr and p.stderr.count("\n") == 1, (args, p)
    p = run("generate", "--ring", "sntrup761", "--isa", "avx2", "--dispatch", "-o", str(tmp_path))
    assert p.returncode == 0, p.stderr
    for suffix in ("h", "c", "json"):  # the front end, over portable C and AVX2
        assert (tmp_path / f"nttgen_sntrup761.{suffix}").exists()
    p = run("list")
    assert p.returncode == 0 and "sntrup761" in p.stdout and "ntrulpr761" in p.stdout
