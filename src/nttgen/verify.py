"""Differential verification of a ring's compiled kernels, for every ring family (used by
``nttgen verify``).

Which checks run follows from the operations the kernels define (:attr:`Kernel.ops`), never
from the ring's family; each runs on extreme and random inputs:

* ``polymul`` (every family) equals the ring's exact product (:meth:`reference_product`);
* ``polymul_small`` equals it for operands with coefficients in {-1, 0, 1};
* ``ntt`` equals direct evaluation at the roots, in the standard order;
* ``intt(ntt(a)) == a``, ``intt(basemul(ntt a, ntt b)) == a*b`` and ``basemul_acc`` is the sum
  of its products;
* every C entry point agrees bit for bit with the exact evaluator on the same inputs, and the
  evaluator in checked mode sees no lane overflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .api import Kernel
from .dsl.ir import Buffer, ScalarParam
from .families import family_of
from .interp.evaluate import evaluate
from .plan.ntt import NttAlgebra


@dataclass
class CheckResult:
    """One verification check: its name, how many cases ran, and the first failure (if any)."""

    name: str
    cases: int
    failure: str | None = None

    @property
    def ok(self) -> bool:
        """Whether every case passed."""
        return self.failure is None


def coefficient_cases(
    n: int,
    q: int,
    rng: np.random.Generator,
    trials: int,
    bounds: tuple[int, int] | None = None,
) -> Iterator[tuple[str, np.ndarray]]:
    """Named inputs of n coefficients in ``bounds`` (default [-(q-1), q-1]): extremes first
    (zeros, all hi, all lo, alternating signs, impulses at both ends), then ``trials`` random
    ones."""
    lo, hi = bounds or (-(q - 1), q - 1)
    yield "zeros", np.zeros(n, dtype=np.int64)
    yield f"all {hi}", np.full(n, hi, dtype=np.int64)
    yield f"all {lo}", np.full(n, lo, dtype=np.int64)
    yield "alternating", np.where(np.arange(n) % 2 == 0, hi, lo).astype(np.int64)
    for i in (0, 1, n - 1):
        e = np.zeros(n, dtype=np.int64)
        e[i] = hi
        yield f"impulse x^{i}", e
    for t in range(trials):
        yield f"random {t}", rng.integers(lo, hi + 1, size=n, dtype=np.int64)


def range_cases(
    shape: int, lo: int, hi: int, rng: np.random.Generator, trials: int
) -> Iterator[tuple[str, np.ndarray]]:
    """Named inputs that fill a contract range [lo, hi]: both ends, mixed ends, random."""
    yield "all lo", np.full(shape, lo, dtype=np.int64)
    yield "all hi", np.full(shape, hi, dtype=np.int64)
    yield "lo/hi mixed", np.where(rng.integers(0, 2, shape) == 1, hi, lo).astype(np.int64)
    for t in range(trials):
        yield f"random {t}", rng.integers(lo, hi + 1, size=shape, dtype=np.int64)


def _run(name: str, body: Callable[[], Iterator[str | None]]) -> CheckResult:
    cases = 0
    for outcome in body():
        cases += 1
        if outcome is not None:
            return CheckResult(name, cases, outcome)
    return CheckResult(name, cases)


def verify_kernel(k: Kernel, trials: int = 20, seed: int = 1) -> list[CheckResult]:
    """Run every check that applies to a loaded kernel's operations; return one result per
    check, in the order of the module docstring."""
    rng = np.random.default_rng(seed)
    ring, n, q = k.ring, k.n, k.q
    bounds = ring.coefficient_range
    writer = family_of(ring).writer(ring, k.isa, k.variant)

    def cases() -> list[tuple[str, np.ndarray]]:
        return list(coefficient_cases(n, q, rng, trials, bounds))

    def product_vs_reference(op: str, second: tuple[int, int]) -> Iterator[str | None]:
        first = cases()
        others = first[1:] + first[:1]
        if second != bounds:
            others = list(coefficient_cases(n, q, rng, trials, second))
        for (na, a), (nb, b) in zip(first, others, strict=False):
            got = getattr(k, op)(a, b)
            if not np.array_equal(got, ring.reference_product(a, b)):
                yield f"{op} differs from the exact product for a = {na}, b = {nb}"
            yield None

    def ntt_vs_evaluation() -> Iterator[str | None]:
        alg = NttAlgebra(ring)  # type: ignore[arg-type]  # kernels with an ntt are x^n + 1's
        for name, a in cases():
            if list(k.ntt(a)) != alg.reference_ntt([int(x) % q for x in a]):
                yield f"ntt differs from evaluation at the roots for {name}"
            yield None

    def roundtrips() -> Iterator[str | None]:
        both = cases()
        for (na, a), (_, b) in zip(both, both[1:] + both[:1], strict=True):
            ah = k.ntt(a)
            if not np.array_equal(k.intt(ah), np.mod(a, q)):
                yield f"intt(ntt(a)) != a for {na}"
            prod = k.intt(k.basemul(ah, k.ntt(b)))
            if not np.array_equal(prod, ring.reference_product(a, b)):
                yield f"intt(basemul(ntt a, ntt b)) != a*b for {na}"
            yield None

    def basemul_acc_sum() -> Iterator[str | None]:
        lo, hi = bounds
        for kk in (1, 2, 3, 5):
            A = rng.integers(lo, hi + 1, size=(kk, n))
            B = rng.integers(lo, hi + 1, size=(kk, n))
            want = np.mod(sum(ring.reference_product(A[i], B[i]) for i in range(kk)), q)
            got = k.intt(k.basemul_acc(k.ntt(A), k.ntt(B)))
            if not np.array_equal(got, want):
                yield f"basemul_acc with k = {kk} differs from the sum of products"
            yield None

    def c_vs_evaluator() -> Iterator[str | None]:
        for name, fn in writer.entry_points():
            scalars = {p.name: 3 for p in fn.params if isinstance(p, ScalarParam)}
            ins = [p for p in fn.params if isinstance(p, Buffer) and p.role in ("in", "inout")]
            per_case: dict[str, list[np.ndarray]] = {}
            for buf in ins:
                length = buf.length * (scalars.get(buf.per_param.name, 1) if buf.per_param else 1)
                lo, hi = buf.contract  # type: ignore[misc]
                for cname, arr in range_cases(length, lo, hi, rng, max(trials // 4, 2)):
                    per_case.setdefault(cname, []).append(arr)
            for cname, arrays in per_case.items():
                want = evaluate(
                    fn,
                    writer.arith,
                    {b.name: a for b, a in zip(ins, arrays, strict=True)},
                    scalars,
                    checked=True,
                )
                got = k.raw(name, *arrays, k=scalars.get("k"))
                outs = [p for p in fn.buffers if p.role in ("out", "inout")]
                for p, g in zip(outs, got, strict=True):
                    if not np.array_equal(g.astype(np.int64), want[p.name][0]):
                        yield f"{name}: compiled C differs from the evaluator on {cname} ({p.name})"
                yield None

    checks: list[tuple[str, str, Callable[[], Iterator[str | None]]]] = [
        ("polymul", "polymul = exact product (integers mod q and f)",
         lambda: product_vs_reference("polymul", bounds)),
        ("polymul_small", "polymul_small = exact product (s in {-1, 0, 1})",
         lambda: product_vs_reference("polymul_small", (-1, 1))),
        ("ntt", "ntt = evaluation at the roots (standard order)", ntt_vs_evaluation),
        ("intt", "intt(ntt a) = a; intt(basemul) = a*b", roundtrips),
        ("basemul_acc", "basemul_acc = sum of k products", basemul_acc_sum),
    ]  # fmt: skip
    results = [_run(title, body) for op, title, body in checks if op in k.ops]
    results.append(_run("compiled C = evaluator, bit for bit (checked)", c_vs_evaluator))
    return results
