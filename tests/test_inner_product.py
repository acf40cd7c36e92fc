"""The Module-LWE inner product (basemul_acc) and its cached form, run by the exact evaluator on
every ring and ISA: the sum of the base products for k below, at and beyond a group of
products, on extreme and random inputs; a cache from any values in its contract never
overflows; the capped loops the grouping is built from."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ALL_RINGS, ring_id, ring_isa_cases
from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import Affine, Count, Function, Loop, LoopVar, Op, ScalarParam, walk
from nttgen.generate import kernel_set
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import LaneType
from nttgen.plan.constants import Arith
from nttgen.programs.kernels import KernelSet
from nttgen.rings import get_ring
from nttgen.verify import range_cases


def _caps(fn: Function) -> list[int]:
    """The caps of the capped loops of ``fn`` (each group's loop over products)."""
    return [s.count.cap for s in walk(fn.body) if isinstance(s, Loop) and s.count.cap is not None]


def _group(fn: Function, products_outer: bool) -> int:
    """The number of products each group of ``fn`` sums without a reduction: the cap of its
    loop over a group's products, which in the register form follows the group's first."""
    caps = _caps(fn)
    if not caps:
        return 1
    assert len(set(caps)) == 1, caps
    return caps[0] + (0 if products_outer else 1)


def _operands(fn: Function, k: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Inputs of ``fn`` with k products: each case of :func:`nttgen.verify.range_cases`
    (both ends of each contract, alternating, random) for a and b."""
    rng = np.random.default_rng(seed)
    cases: list[dict[str, np.ndarray]] = []
    ins = [b for b in fn.buffers if b.role == "in" and b.name in ("a", "b")]
    per = {b.name: list(range_cases(b.length * k, *b.contract, rng, 2)) for b in ins}  # type: ignore[misc]
    for i in range(len(per["a"])):
        cases.append({name: per[name][i][1][None] for name in per})
    return cases


def _k_values(group: int) -> list[int]:
    return sorted({1, 2, group, group + 1, 2 * group + 1} - {0})


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_inner_products_are_the_sum_of_base_products(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """basemul_acc and basemul_acc_cached (with the caches basemul_cache makes) equal the sum of
    the k base products mod q, with no lane overflow (checked mode), for k up to two groups
    and one product; both stay in their output contract."""
    ks = kernel_set(ring, isa)
    acc, cached = ks.functions["basemul_acc"], ks.functions["basemul_acc_cached"]
    q, n = ring.q, ring.n
    for k in _k_values(min(_group(acc, ks.config.products_outer), 8)):
        for fn in (acc, cached):
            for case in _operands(fn, k, seed=k):
                A, B = case["a"].reshape(k, n), case["b"].reshape(k, n)
                want = sum(
                    _run(ks, "basemul", {"a": A[i][None], "b": B[i][None]}) for i in range(k)
                )
                if fn is cached:
                    caches = [_run(ks, "basemul_cache", {"b": B[i][None]}) for i in range(k)]
                    case = {**case, "cache": np.concatenate(caches)[None]}
                got = evaluate(fn, ks.arith, case, {"k": k}, checked=True)["r"][0]
                assert np.array_equal(got % q, want % q), (k, fn.name)
                lo, hi = fn.contract.outputs["r"]
                assert lo <= got.min() and got.max() <= hi


def _run(ks: KernelSet, op: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The one output of ``op`` on one operand set, evaluated in checked mode."""
    fn = ks.functions[op]
    (out,) = [b.name for b in fn.buffers if b.role == "out"]
    return evaluate(fn, ks.arith, inputs, checked=True)[out][0]


@pytest.mark.parametrize("ring,isa", ring_isa_cases(("c", "avx2", "neon")))
def test_any_cache_in_its_contract_never_overflows(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """A cache the caller got wrong (any values in the cache's contract, not basemul_cache's)
    gives a wrong residue but never a lane overflow: the analysis does not trust it."""
    ks = kernel_set(ring, isa)
    fn = ks.functions["basemul_acc_cached"]
    rng = np.random.default_rng(5)
    k = 3
    cache = next(b for b in fn.buffers if b.name == "cache")
    for (_, c), case in zip(
        range_cases(cache.length * k, *cache.contract, rng, 2),  # type: ignore[misc]
        _operands(fn, k, seed=9),
        strict=False,
    ):
        evaluate(fn, ks.arith, {**case, "cache": c[None]}, {"k": k}, checked=True)


@pytest.mark.parametrize(
    "name,isa,group,wide",
    [
        ("mlkem", "avx2", 3, True),  # the sum of three exact products fits 32 bits
        ("mlkem", "avx512", 3, True),
        ("mldsa", "avx2", 16, False),  # 32-bit lanes: capped at GROUP_LIMIT
        ("newhope512", "avx2", 3, False),  # q = 12289 in 16-bit lanes: three products
        ("n256_q31489", "avx2", 1, False),  # one exact product's reduction leaves int16
    ],
)
def test_group_sizes_follow_the_bounds(name: str, isa: str, group: int, wide: bool) -> None:
    """G is the analysis's: as many products as fit their lanes unreduced, never more."""
    ks = kernel_set(get_ring(name), isa)
    fn = ks.functions["basemul_acc"]
    ops = {s.kind for s in walk(fn.body) if isinstance(s, Op)}
    assert ("madd" in ops) == wide
    assert _group(fn, ks.config.products_outer) == group


def _group_loops(body: list, depth: int = 0) -> list[int]:  # type: ignore[type-arg]
    """The loop depth of each loop over groups (a runtime count in steps of G) in ``body``."""
    found = []
    for s in body:
        if isinstance(s, Loop):
            if s.count.param is not None and s.count.step > 1:
                found.append(depth)
            found += _group_loops(s.body, depth + 1)
    return found


@pytest.mark.parametrize(
    "name,isa,top",
    [
        ("mldsa", "avx2", True),  # G = 16: every scheme's k is one group
        ("mldsa", "neon", True),
        ("mlkem", "avx2", False),  # G = 3: k = 4 is common, the groups stay in registers
        ("newhope512", "neon", False),
    ],
)
def test_large_groups_leave_the_loop_over_chunks(name: str, isa: str, top: bool) -> None:
    """Where one group holds every k the schemes use, the later groups are passes over r
    after the loop over chunks (outermost), not a loop nested in it."""
    ks = kernel_set(get_ring(name), isa)
    for op in ("basemul_acc", "basemul_acc_cached"):
        depths = _group_loops(ks.functions[op].body)
        assert depths, op
        assert all((d == 0) == top for d in depths), (op, depths)


def test_reductions_happen_once_per_group() -> None:
    """Per coefficient, ML-DSA's AVX2 inner product reduces once for any k up to its group
    (16), where one reduction per product was needed before grouping."""
    from nttgen.interp.cost import count_ops

    ks = kernel_set(get_ring("mldsa"), "avx2")
    fn = ks.functions["basemul_acc"]
    n = ks.ring.n
    for k in (1, 5, 16):
        assert count_ops(fn, {"k": k})["reductions"] == n
    assert count_ops(fn, {"k": 17})["reductions"] > n


def _capped_sum(cap: int) -> Function:
    """r = sum of up to ``cap`` + 1 rows of a (k rows given): one row, then a capped loop."""
    S = Builder("capped", Arith(3329, LaneType(16)), 1, "test")
    k = ScalarParam("k", 1, "rows")
    a = S.input("a", 1, (-100, 100), per=k)
    r = S.output("r", 1)
    S.fn.params.append(k)
    acc = S.var(S.load(a, Affine(0)))

    def more(j: LoopVar) -> None:
        S.set(acc, S.add(S.get(acc), S.load(a, Affine.of(j) + 1)))

    S.loop(Count(-1, k, cap=cap), more)
    S.store(r, Affine(0), S.get(acc))
    return S.finish()


def test_a_capped_loop_is_analysed_exactly() -> None:
    """A runtime loop of at most ``cap`` trips is run ``cap`` times by the analysis (no
    widening): its sum's range is exactly (cap + 1) rows, and it stops at ``cap`` trips."""
    fn = _capped_sum(5)
    assert fn.contract.outputs["r"] == (-600, 600)
    rows = np.arange(1, 11)[None]
    assert evaluate(fn, fn_arith(), {"a": rows}, {"k": 10})["r"][0][0] == sum(range(1, 7))
    assert evaluate(fn, fn_arith(), {"a": rows[:, :3]}, {"k": 3})["r"][0][0] == 6


def fn_arith() -> Arith:
    return Arith(3329, LaneType(16))


@pytest.mark.parametrize(
    "count,param,env,trips",
    [
        (Count(0, None), 0, {}, 0),
        (Count(-1, ScalarParam("k")), 5, {}, 4),
        (Count(-3, ScalarParam("k"), step=3), 7, {}, 2),  # groups of 3 after the first 3
        (Count(-3, ScalarParam("k"), step=3), 3, {}, 0),
        (Count(-1, ScalarParam("k"), cap=2), 9, {}, 2),
        (Count(0, ScalarParam("k"), cap=4), 2, {}, 2),
    ],
)
def test_count_trips(count: Count, param: int, env: dict, trips: int) -> None:  # type: ignore[type-arg]
    if count.static:
        assert count.const == trips
    else:
        assert count.trips(param, env) == trips


@pytest.mark.parametrize("ring", [r for r in ALL_RINGS if r.name == "mlkem"], ids=ring_id)
def test_the_capped_loops_in_c_are_public_and_branch_free(ring) -> None:  # type: ignore[no-untyped-def]
    """The C of a capped loop joins its two conditions with a bitwise & (no short-circuit
    branch) over public counters only; where the ISA writes its trips out (x86), trip i is
    nested in the trip before it, guarded by the public count alone."""
    from nttgen.generate import generate

    text = generate(ring, "c").source
    loops = [ln.strip() for ln in text.splitlines() if "for (size_t" in ln and " & (" in ln]
    assert loops
    for ln in loops:
        assert "&&" not in ln and "k)" in ln
    fn = kernel_set(ring, "avx2").functions["basemul_acc"]
    text = generate(ring, "avx2").source
    body = text[text.index("_basemul_acc(") :]
    body = body[: body.index("\n}\n")]
    guards = [ln for ln in body.splitlines() if ln.strip().startswith("if (")]
    assert len(guards) == sum(_caps(fn))
    for depth, ln in enumerate(guards[: _caps(fn)[0]]):
        assert ln.strip() == f"if ({depth + 1} < k) {{", ln
        assert len(ln) - len(ln.lstrip()) == 8 + 4 * depth  # each inside the one before
