"""Differential verification of a ring's compiled kernels, for every ring family (used by
``nttgen verify``).

Which checks run follows from the operations the kernels define (:attr:`Kernel.ops`), never
from the ring's family; each runs on extreme and random inputs:

* ``polymul`` (every family) equals the ring's exact product (:meth:`reference_product`);
* ``polymul_small`` equals it for operands with coefficients in {-1, 0, 1};
* ``ntt`` equals direct evaluation at the roots, in the standard order;
* ``intt(ntt(a)) == a``, ``intt(basemul(ntt a, ntt b)) == a*b`` and ``basemul_acc`` is the sum
  of its products;
* ``ntt_vec`` and ``intt_vec`` of k polynomials leave each exactly as ``ntt`` and ``intt`` do;
* every C entry point agrees bit for bit with the exact evaluator on the same inputs (the ends
  of its input contract, random ones, and the inputs a search steered towards the largest
  intermediate values found, :func:`~nttgen.adversary.maximise_growth`), the evaluator in
  checked mode sees no lane overflow, and no intermediate value passes the analysis's bound.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .adversary import maximise_growth, searchable
from .api import Kernel
from .dsl.ir import Buffer, ScalarParam
from .emit.files import GeneratedFiles
from .errors import InputError, NttgenError
from .families import family_of, get_ring, ring_from_options
from .interp.evaluate import evaluate
from .plan.ntt import NttAlgebra
from .ring_family import RingSpec


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


# how many coefficients of each input the growth search tries per kernel: it costs one
# evaluation of that many inputs per contract end, and whole sweeps of the larger kernels
# (n = 1024, p = 761) took about 10 s each
SEARCHED = 64
WORST = "the worst case the growth search found"


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
    # blocks of one extreme then the other: each butterfly layer of span w sees hi beside lo
    for w in (4, 16, 64):
        if w < n:
            yield f"blocks of {w}", np.where(np.arange(n) // w % 2 == 0, hi, lo).astype(np.int64)
    for i in sorted({0, 1, n // 2, n - 1}):
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
    """Run one check's cases; its first failure, or an nttgen error on the way (a lane
    overflow seen by the checked evaluator, an input the kernel refuses), fails it."""
    cases = 0
    try:
        for outcome in body():
            cases += 1
            if outcome is not None:
                return CheckResult(name, cases, outcome)
    except NttgenError as e:
        return CheckResult(name, cases + 1, f"{type(e).__name__}: {e}")
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
        for kk in (1, 2, 3, 4, 5, 17):
            A = rng.integers(lo, hi + 1, size=(kk, n))
            B = rng.integers(lo, hi + 1, size=(kk, n))
            want = np.mod(sum(ring.reference_product(A[i], B[i]) for i in range(kk)), q)
            got = k.intt(k.basemul_acc(k.ntt(A), k.ntt(B)))
            if not np.array_equal(got, want):
                yield f"basemul_acc with k = {kk} differs from the sum of products"
            if "basemul_acc_cached" in k.ops:
                Bh = k.ntt(B)
                got = k.intt(k.basemul_acc_cached(k.ntt(A), Bh, k.basemul_cache(Bh)))
                if not np.array_equal(got, want):
                    yield f"basemul_acc_cached with k = {kk} differs from the sum of products"
            yield None

    def vec_vs_single() -> Iterator[str | None]:
        for op in ("ntt", "intt"):
            meta = k.manifest["functions"][op]["params"][0]
            lo, hi = meta["in_range"]
            for kk in (1, 2, 3, 4, 5):
                rows = [a for _, a in range_cases(n * kk, lo, hi, rng, max(trials // 4, 2))]
                for A in rows:
                    (got,) = k.raw(f"{op}_vec", A, k=kk)
                    want = np.concatenate([k.raw(op, x)[0] for x in A.reshape(kk, n)])
                    if not np.array_equal(got, want):
                        yield f"{op}_vec with k = {kk} differs from {op} of each polynomial"
                    yield None

    def c_vs_evaluator() -> Iterator[str | None]:
        for name, fn in writer.entry_points():
            # k = 5: more than one group of products for most rings (see inner_product)
            scalars = {p.name: 5 for p in fn.params if isinstance(p, ScalarParam)}
            ins = [p for p in fn.params if isinstance(p, Buffer) and p.role in ("in", "inout")]
            per_case: dict[str, list[np.ndarray]] = {}
            for buf in ins:
                length = buf.length * (scalars.get(buf.per_param.name, 1) if buf.per_param else 1)
                lo, hi = buf.contract  # type: ignore[misc]
                for cname, arr in range_cases(length, lo, hi, rng, max(trials // 4, 2)):
                    per_case.setdefault(cname, []).append(arr)
            if searchable(fn):
                # the inputs a search found to bring the kernel's intermediate values closest
                # to the analysis's bound; beyond the bound, the analysis is unsound
                worst = maximise_growth(fn, writer.arith, sweeps=1, coordinates=SEARCHED)
                if worst.peak > worst.bound:
                    yield (
                        f"{name}: an intermediate value reaches {worst.peak}, beyond the "
                        f"analysis's bound {worst.bound}"
                    )
                per_case[WORST] = [worst.inputs[b.name] for b in ins]
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
                    out_range = promised.get((name, p.name))
                    if out_range and not (out_range[0] <= g.min() and g.max() <= out_range[1]):
                        yield (
                            f"{name}: output {p.name} leaves its contract {out_range} on {cname}"
                        )
                yield None

    # what the files' manifest promises: each output's range, checked on every call above
    promised = {
        (fname, prm["name"]): tuple(prm["out_range"])
        for fname, meta in k.manifest["functions"].items()
        for prm in meta["params"]
        if prm.get("out_range")
    }

    def manifest_vs_generator() -> Iterator[str | None]:
        mine = json.loads(k.files.manifest)
        theirs = json.loads(family_of(ring).generate(ring, k.isa, k.variant).manifest)
        for key in ("ring", "arith", "functions", "native_order"):
            if mine.get(key) != theirs.get(key):
                yield f"the manifest's {key!r} differs from what nttgen generates for this ring"
            yield None

    checks: list[tuple[str, str, Callable[[], Iterator[str | None]]]] = [
        ("polymul", "polymul = exact product (integers mod q and f)",
         lambda: product_vs_reference("polymul", bounds)),
        ("polymul_small", "polymul_small = exact product (s in {-1, 0, 1})",
         lambda: product_vs_reference("polymul_small", (-1, 1))),
        ("ntt", "ntt = evaluation at the roots (standard order)", ntt_vs_evaluation),
        ("intt", "intt(ntt a) = a; intt(basemul) = a*b", roundtrips),
        ("basemul_acc", "basemul_acc(_cached) = sum of k products", basemul_acc_sum),
        ("ntt_vec", "ntt_vec, intt_vec = ntt, intt of each", vec_vs_single),
    ]  # fmt: skip
    results = [_run(title, body) for op, title, body in checks if op in k.ops]
    results.append(_run("compiled C = evaluator, bit for bit (checked)", c_vs_evaluator))
    results.append(_run("manifest = generator's contracts", manifest_vs_generator))
    return results


@dataclass(frozen=True)
class FileSetOnDisk:
    """One ISA's generated files found on disk: where, for which ring, ISA and program (the
    pipeline its manifest names, None for a family with one program: see
    :func:`variant_of`), and their text."""

    manifest_path: Path
    ring: RingSpec
    isa: str
    pipeline: str | None
    files: GeneratedFiles


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise InputError(f"{path}: missing (a manifest names it)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot be read ({getattr(e, 'strerror', None) or e})") from None


def _ring_of(manifest: dict[str, object], path: Path) -> RingSpec:
    """The ring a manifest describes: its preset or custom name, checked against its
    parameters (a custom x^n + 1 ring with forced 32-bit lanes has no name of its own)."""
    meta = manifest.get("ring")
    if not isinstance(meta, dict) or "name" not in meta or "q" not in meta:
        raise InputError(f"{path}: not an nttgen manifest (no ring)")
    ring = get_ring(str(meta["name"]))
    lanes = meta.get("lane_bits")
    if "n" in meta and lanes is not None and ring.summary().get("lane_bits") != lanes:
        ring = ring_from_options(int(meta["q"]), int(meta["n"]), None, int(lanes))
    return ring


def file_sets_on_disk(paths: Sequence[Path]) -> tuple[list[FileSetOnDisk], list[str]]:
    """The per-ISA file sets under ``paths`` (directories are searched for manifests,
    ``nttgen_*.json``; a file names its own set by any of its .h/.c/.json), and notes on what
    is not checked here (front ends and alias headers, whose ISA files are). Raises
    :class:`InputError` naming the path for one that does not exist, holds no generated files,
    or is not nttgen's."""
    manifests: list[Path] = []
    notes: list[str] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("nttgen_*.json"))
            if not found:
                raise InputError(f"{path}: no generated files here (no nttgen_*.json manifest)")
            manifests += found
            aliases = sorted(
                h for h in path.glob("nttgen_*.h") if not h.with_suffix(".json").exists()
            )
            if aliases:
                notes.append(
                    f"{len(aliases)} alias header(s) in {path} (such as {aliases[0].name}): "
                    "other names over the files checked here"
                )
        elif path.suffix in (".h", ".c", ".json") and path.with_suffix(".json").exists():
            manifests.append(path.with_suffix(".json"))
        elif path.exists():
            raise InputError(f"{path}: not a generated file set (no {path.stem}.json beside it)")
        else:
            raise InputError(f"{path}: no such file or directory")
    out: list[FileSetOnDisk] = []
    for m in dict.fromkeys(manifests):
        try:
            manifest = json.loads(_read(m))
        except json.JSONDecodeError as e:
            raise InputError(f"{m}: not valid JSON ({e.msg}, line {e.lineno})") from None
        if not isinstance(manifest, dict):
            raise InputError(f"{m}: not an nttgen manifest")
        if "isas" in manifest:
            over = [i.get("name", "?") if isinstance(i, dict) else str(i) for i in manifest["isas"]]
            notes.append(f"{m.stem}: a front end over {', '.join(over)}; its ISA files are "
                         "checked one by one")  # fmt: skip
            continue
        isa = manifest.get("isa")
        if not isinstance(isa, dict) or "name" not in isa or "functions" not in manifest:
            raise InputError(f"{m}: not an nttgen manifest (no isa or functions)")
        ring = _ring_of(manifest, m)
        stem = m.stem
        files = GeneratedFiles(
            stem,
            _read(m.with_suffix(".h")),
            _read(m.with_suffix(".c")),
            _read(m),
            str(manifest.get("generator", {}).get("command", "")),
        )
        pipeline = manifest.get("pipeline")
        out.append(FileSetOnDisk(m, ring, str(isa["name"]), pipeline and str(pipeline), files))
    return out, notes


def variant_of(ring: RingSpec, isa: str, pipeline: str | None) -> str | None:
    """The program variant that a manifest's ``pipeline`` names for ``ring`` on ``isa``: None
    where it is the ring's default (what ``nttgen generate`` writes without ``--pipeline``),
    else the pipeline itself."""
    if pipeline is None:
        return None
    default = json.loads(family_of(ring).generate(ring, isa).manifest).get("pipeline")
    return None if pipeline == default else pipeline
