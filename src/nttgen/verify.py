"""Differential verification of a ring's compiled kernels (used by ``nttgen verify``).

Checks, each on random and extreme inputs:

* ``polymul`` equals the schoolbook product over exact integers;
* ``ntt`` equals direct evaluation at the roots, in the standard order;
* ``intt(ntt(a)) == a`` and ``intt(basemul(ntt a, ntt b)) == a*b``;
* every C entry point agrees bit for bit with the exact evaluator on the same inputs, and the
  evaluator in checked mode sees no lane overflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .api import Kernel
from .dsl.ir import Buffer, ScalarParam
from .generate import kernel_set
from .interp.evaluate import evaluate
from .reference import schoolbook


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
    n: int, q: int, rng: np.random.Generator, trials: int
) -> Iterator[tuple[str, np.ndarray]]:
    """Named inputs in [-(q-1), q-1]: extremes first (zeros, all q-1, all -(q-1), alternating
    signs, impulses at both ends), then ``trials`` random ones."""
    m = q - 1
    yield "zeros", np.zeros(n, dtype=np.int64)
    yield "all q-1", np.full(n, m, dtype=np.int64)
    yield "all -(q-1)", np.full(n, -m, dtype=np.int64)
    yield "alternating", np.where(np.arange(n) % 2 == 0, m, -m).astype(np.int64)
    for i in (0, 1, n - 1):
        e = np.zeros(n, dtype=np.int64)
        e[i] = m
        yield f"impulse x^{i}", e
    for t in range(trials):
        yield f"random {t}", rng.integers(-m, m + 1, size=n, dtype=np.int64)


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
    """Run every check on a loaded kernel; return one result per check."""
    rng = np.random.default_rng(seed)
    n, q = k.n, k.q
    ks = kernel_set(k.ring, k.isa)
    results: list[CheckResult] = []

    def polymul_vs_schoolbook() -> Iterator[str | None]:
        cases = list(coefficient_cases(n, q, rng, trials))
        for (na, a), (nb, b) in zip(cases, cases[1:] + cases[:1], strict=True):
            got = k.polymul(a, b)
            if not np.array_equal(got, schoolbook(a, b, q)):
                yield f"polymul differs from the schoolbook product for a = {na}, b = {nb}"
            yield None

    def ntt_vs_evaluation() -> Iterator[str | None]:
        for name, a in coefficient_cases(n, q, rng, trials):
            ref = ks.alg.reference_ntt([int(x) % q for x in a])
            if list(k.ntt(a)) != ref:
                yield f"ntt differs from evaluation at the roots for {name}"
            yield None

    def roundtrips() -> Iterator[str | None]:
        cases = list(coefficient_cases(n, q, rng, trials))
        for (na, a), (_, b) in zip(cases, cases[1:] + cases[:1], strict=True):
            ah = k.ntt(a)
            if not np.array_equal(k.intt(ah), np.mod(a, q)):
                yield f"intt(ntt(a)) != a for {na}"
            prod = k.intt(k.basemul(ah, k.ntt(b)))
            if not np.array_equal(prod, schoolbook(a, b, q)):
                yield f"intt(basemul(ntt a, ntt b)) != a*b for {na}"
            yield None

    def basemul_acc_sum() -> Iterator[str | None]:
        for kk in (1, 2, 3, 5):
            A = rng.integers(-(q - 1), q, size=(kk, n))
            B = rng.integers(-(q - 1), q, size=(kk, n))
            want = np.mod(sum(schoolbook(A[i], B[i], q) for i in range(kk)), q)
            got = k.intt(k.basemul_acc(k.ntt(A), k.ntt(B)))
            if not np.array_equal(got, want):
                yield f"basemul_acc with k = {kk} differs from the sum of products"
            yield None

    def c_vs_evaluator() -> Iterator[str | None]:
        for name, fn in ks.functions.items():
            if fn.internal:
                continue  # reached through polymul
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
                    ks.arith,
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

    results.append(_run("polymul = schoolbook product (exact integers)", polymul_vs_schoolbook))
    results.append(_run("ntt = evaluation at the roots (standard order)", ntt_vs_evaluation))
    results.append(_run("intt(ntt a) = a; intt(basemul) = a*b", roundtrips))
    results.append(_run("basemul_acc = sum of k products", basemul_acc_sum))
    results.append(_run("compiled C = evaluator, bit for bit (checked)", c_vs_evaluator))
    return results
