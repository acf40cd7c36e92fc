"""The transforms of k polynomials (``ntt_vec``, ``intt_vec``): each polynomial comes out as the
single transform leaves it, by the exact evaluator on every ring and ISA and compiled against
exact arithmetic; the paired bodies exist where the tuning asks for them; the statement that
calls a transform per group of polynomials refuses malformed groups."""

from __future__ import annotations

import numpy as np
import pytest

import nttgen
from conftest import require_isa, ring_isa_cases
from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import CallEach, Function, ScalarParam, walk
from nttgen.generate import default_config, kernel_set
from nttgen.interp.cost import count_ops
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16
from nttgen.plan.constants import Arith
from nttgen.plan.ntt import NttAlgebra
from nttgen.rings import PRESETS
from nttgen.verify import range_cases

KS = (1, 2, 3, 5)  # one, a pair, a pair and one left over, two pairs and one


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_vec_transforms_leave_each_polynomial_as_the_single_one(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """ntt_vec and intt_vec have the single transforms' contracts, evaluate (checked: no lane
    overflow) to the single transform of each polynomial on the ends of the contract and on
    random inputs, and count k single calls' ops."""
    ks = kernel_set(ring, isa)
    rng = np.random.default_rng(7)
    for op in ("ntt", "intt"):
        vec, one = ks.functions[f"{op}_vec"], ks.functions[op]
        assert vec.contract.inputs == one.contract.inputs
        assert vec.contract.outputs == one.contract.outputs
        lo, hi = one.contract.inputs["a"]
        for k in KS:
            for name, A in range_cases(ring.n * k, lo, hi, rng, 1):
                got = evaluate(vec, ks.arith, {"a": A[None]}, {"k": k}, checked=True)["a"][0]
                rows = A.reshape(k, ring.n)
                want = [
                    evaluate(one, ks.arith, {"a": r[None]}, {}, checked=True)["a"][0] for r in rows
                ]
                assert np.array_equal(got, np.concatenate(want)), f"{op}_vec k = {k}, {name}"
        single = count_ops(one)
        assert count_ops(vec, {"k": 5}) == {key: 5 * v for key, v in single.items()}


@pytest.mark.parametrize("ring,isa", ring_isa_cases(("c", "avx2", "avx512")))
def test_paired_bodies_follow_the_tuning(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """Where the configuration pairs the transforms, ntt_vec and intt_vec call a body of two
    polynomials for each pair and the single transform for the one left over; elsewhere the
    single transform for each polynomial."""
    ks = kernel_set(ring, isa)
    paired = default_config(ring, isa).paired_transforms
    for op in ("ntt", "intt"):
        (stmt,) = [s for s in walk(ks.functions[f"{op}_vec"].body) if isinstance(s, CallEach)]
        widths = [w for _, w in stmt.calls]
        assert widths == ([2, 1] if paired else [1])
        assert stmt.calls[-1][0] is ks.functions[op]
        if paired:
            assert ks.functions[f"{op}_pair"].internal


def test_the_presets_with_short_transforms_are_paired_on_x86() -> None:
    """The measured choice (see nttgen.tuning): ML-KEM and Kyber-r1 pair their transforms on
    AVX2 and AVX-512; rings whose transforms are loops of several passes do not."""
    for ring in ("mlkem", "kyber-r1"):
        for isa in ("avx2", "avx512"):
            assert default_config(PRESETS[ring], isa).paired_transforms, (ring, isa)
    for ring in ("mldsa", "newhope512", "newhope1024"):
        assert not default_config(PRESETS[ring], "avx512").paired_transforms, ring
    assert not default_config(PRESETS["mlkem"], "c").paired_transforms


@pytest.mark.parametrize("isa", ["c", "avx2", "avx512"])
@pytest.mark.parametrize("ring", ["mlkem", "kyber-r1", "mldsa"])
def test_compiled_batches_equal_exact_transforms(ring: str, isa: str) -> None:
    """The Python API runs a batch through ntt_vec / intt_vec: every row equals the NTT by
    definition (evaluation at the roots), and intt brings every row back, for batches of one
    to five polynomials with extreme rows (all q - 1, all -(q - 1), alternating) among random
    ones."""
    require_isa(isa)
    k = nttgen.load(ring, isa=isa)
    assert {"ntt_vec", "intt_vec"} <= set(k.ops)
    alg = NttAlgebra(PRESETS[ring])
    q, n = k.q, k.n
    rng = np.random.default_rng(3)
    extremes = [np.full(n, q - 1), np.full(n, -(q - 1)), np.where(np.arange(n) % 2, q - 1, 1 - q)]
    for rows in KS:
        A = rng.integers(-(q - 1), q, size=(rows, n))
        A[: min(rows, 3)] = extremes[: min(rows, 3)]
        hat = k.ntt(A)
        for a, h in zip(A, hat, strict=True):
            assert list(h) == alg.reference_ntt([int(x) % q for x in a])
        assert np.array_equal(k.intt(hat), np.mod(A, q))


def _transform(name: str, polys: int) -> Function:
    """An in-place function of ``polys`` arrays of 8 lanes that changes nothing."""
    S = Builder(name, Arith(3329, I16), 1)
    for i in range(polys):
        S.inout("ab"[i], 8, (0, 1))
    return S.finish()


def test_groups_of_polynomials_are_checked() -> None:
    """call_each takes widths falling strictly to 1, callees with one array per polynomial of
    their group, and an array of count polynomials; anything else is refused."""
    one = _transform("one", 1)
    two = _transform("two", 2)
    S = Builder("vec", Arith(3329, I16), 1)
    k = ScalarParam("k", 1, "polynomials")
    a = S.inout("a", 8, (0, 1), per=k)
    S.fn.params.append(k)
    with pytest.raises(ValueError, match="fall strictly to 1"):
        S.call_each(k, [(two, 2)], a)
    with pytest.raises(ValueError, match="fall strictly to 1"):
        S.call_each(k, [(one, 1), (one, 1)], a)
    with pytest.raises(TypeError, match="must take 2 arrays"):
        S.call_each(k, [(one, 2), (one, 1)], a)
    other = ScalarParam("m", 1, "another count")
    with pytest.raises(ValueError, match="holds k polynomial"):
        S.call_each(other, [(one, 1)], a)
    S.call_each(k, [(two, 2), (one, 1)], a)
    fn = S.finish()
    assert fn.contract.outputs["a"] == (0, 1)
    got = evaluate(fn, Arith(3329, I16), {"a": np.ones((1, 24), np.int64)}, {"k": 3})
    assert np.array_equal(got["a"][0], np.ones(24))
