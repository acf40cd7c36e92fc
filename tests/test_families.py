"""One path from a ring spec to a loaded kernel for every ring family: the registry, the one
loader and kernel class, verification, and the rule that nothing outside the family
implementations asks which family a ring belongs to."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nttgen
from nttgen.errors import InputError, UnknownNameError
from nttgen.families import FAMILIES, all_presets, family_of, get_ring, ring_from_options
from nttgen.outputs import dispatch_isas
from nttgen.verify import verify_kernel

SRC = Path(__file__).resolve().parent.parent / "src" / "nttgen"
RING_TYPES = {"Ring", "NtruPrimeRing"}
# the modules that define a family or implement one: the only places a ring's type is asked
FAMILY_MODULES = {"rings.py", "ntru_rings.py", "families.py"}


def test_every_preset_is_found_by_name_in_its_own_family() -> None:
    for fam in FAMILIES:
        for name, ring in fam.presets.items():
            assert get_ring(name) is ring
            assert family_of(ring) is fam
            assert fam.parse(name) is ring
            for other in FAMILIES:
                if other is not fam:
                    assert other.parse(name) is None
    assert list(all_presets()) == [n for fam in FAMILIES for n in fam.presets]


def test_custom_rings_from_options_and_their_refusals() -> None:
    assert ring_from_options(7681, n=256).name == "n256_q7681"
    assert ring_from_options(4621, f="x^653 - x - 1").name == "p653_q4621"
    with pytest.raises(InputError, match="--n names an x\\^n \\+ 1 ring"):
        ring_from_options(4621, n=256, f="x^653 - x - 1")
    with pytest.raises(InputError, match="needs both --n and --q"):
        ring_from_options(None, n=256)
    with pytest.raises(InputError, match="NTRU Prime lanes are 16 bits"):
        ring_from_options(4621, f="x^653 - x - 1", lane_bits=32)


def test_one_loader_serves_every_family() -> None:
    rng = np.random.default_rng(5)
    for name in ("mlkem", "sntrup761", "ntrulpr761"):
        k = nttgen.load(name, "c")
        assert isinstance(k, nttgen.Kernel)
        lo, hi = k.ring.coefficient_range
        a, b = rng.integers(lo, hi + 1, size=(2, k.n))
        assert np.array_equal(k.polymul(a, b), k.ring.reference_product(a, b))
        assert set(family_of(k.ring).ops) <= set(k.ops)
    s = nttgen.load("sntrup761", "c")
    a = rng.integers(-2295, 2296, size=(3, 761))
    t = rng.integers(-1, 2, size=(3, 761))
    got = s.polymul_small(a, t)
    assert got.shape == (3, 761)
    for i in range(3):
        assert np.array_equal(got[i], s.ring.reference_product(a[i], t[i]))
    assert "p=761" in repr(s)


def test_an_operation_the_family_lacks_is_refused_naming_what_it_has() -> None:
    s = nttgen.load("sntrup761", "c")
    with pytest.raises(UnknownNameError, match="sntrup761's kernels define polymul, polymul_small"):
        s.ntt(np.zeros(761, dtype=int))
    m = nttgen.load("mlkem", "c")
    with pytest.raises(UnknownNameError, match="unknown operation 'polymul_small'"):
        m.polymul_small(np.zeros(256, dtype=int), np.zeros(256, dtype=int))
    with pytest.raises(InputError, match="pipelines are for NTRU Prime rings"):
        nttgen.load("mlkem", "c", pipeline="schoenhage-nussbaumer")
    with pytest.raises(UnknownNameError, match="unknown pipeline 'fft'"):
        nttgen.load("sntrup761", "c", pipeline="fft")
    with pytest.raises(nttgen.IsaUnavailableError, match="not yet for rvv256"):
        nttgen.load("sntrup761", "rvv256")


def test_verify_checks_an_ntru_prime_kernel_and_catches_a_wrong_product(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k = nttgen.load("sntrup761", "c")
    results = verify_kernel(k, trials=2, seed=3)
    names = [r.name for r in results]
    assert len(names) == 4 and "polymul_small" in names[1], names
    assert all(r.ok and r.cases > 0 for r in results), results
    raw = k.raw

    def off_by_one(op: str, *arrays: np.ndarray, k: int | None = None) -> list[np.ndarray]:
        out = raw(op, *arrays, k=k)
        if op == "polymul":
            out[0][7] = out[0][7] + 1 if out[0][7] < 2295 else -2295
        return out

    monkeypatch.setattr(k, "raw", off_by_one)
    bad = {r.name: r for r in verify_kernel(k, trials=2, seed=3)}
    assert not bad[names[0]].ok and "polymul differs from the exact product" in str(
        bad[names[0]].failure
    )
    assert not bad[names[2]].ok  # the C against the evaluator, through raw
    assert bad[names[1]].ok  # polymul_small is another entry point


def test_front_end_isas_follow_the_family() -> None:
    sntrup = get_ring("sntrup761")
    assert dispatch_isas(sntrup, ["avx2", "rvv256", "neon"]) == ["c", "avx2", "neon"]
    assert dispatch_isas(get_ring("mlkem"), ["avx2"]) == ["c", "avx2"]


def test_cli_verify_takes_an_ntru_prime_ring() -> None:
    args = ["verify", "--ring", "sntrup761", "--isa", "c", "--trials", "2"]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "polymul_small" in p.stdout and "all checks passed" in p.stdout


def _asks_for_a_ring_type(node: ast.AST) -> bool:
    """Whether ``node`` is ``isinstance(x, T)`` with T (or a member of a tuple or union T) one
    of the ring classes."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"):
        return False
    if len(node.args) != 2:
        return False
    return any(getattr(n, "id", None) in RING_TYPES for n in ast.walk(node.args[1]))


def test_no_module_outside_the_families_asks_a_rings_type() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name in FAMILY_MODULES and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if _asks_for_a_ring_type(node):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")  # type: ignore[attr-defined]
    assert not offenders, "isinstance on a ring type outside the families: " + ", ".join(offenders)
