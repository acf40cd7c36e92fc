"""The Python API refuses every call outside its contract with an nttgen error and answers every
call inside it correctly: `Kernel.raw` checks each argument against the C contract in the
manifest (no out-of-bounds read from Python), `load` and the high-level methods raise
`NttgenError` subclasses only, `load` compiles once however many threads ask, and the C runs
clean under AddressSanitizer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import nttgen
from nttgen import api
from nttgen.build_cache import cached_build
from nttgen.errors import CacheError, InputError, NttgenError, UnknownNameError
from nttgen.plan.ntt import NttAlgebra


def mlkem() -> nttgen.Kernel:
    return nttgen.load("mlkem", "c")


def sntrup() -> nttgen.Kernel:
    return nttgen.load("sntrup761", "c")


def zeros(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int16)


# ---------------------------------------------------------------- 1. raw against the contract
def test_raw_refuses_k_0_instead_of_reading_past_empty_arrays() -> None:
    """k = 0 with empty arrays passed the length check (0 = 256 * 0) and the C read the
    first product from beyond the buffers, returning heap garbage."""
    with pytest.raises(InputError, match=r"basemul_acc: k must be an integer >= 1, got 0"):
        mlkem().raw("basemul_acc", zeros(0), zeros(0), k=0)


@pytest.mark.parametrize(
    "call,match",
    [
        # the brief's call: three arrays for two inputs (r is an output)
        (lambda k: k.raw("basemul_acc", zeros(0), zeros(0), zeros(0), k=0), "k must be"),
        (lambda k: k.raw("basemul_acc", zeros(512), zeros(512), zeros(1), k=2), r"takes 2 array"),
        (lambda k: k.raw("basemul_acc", zeros(256), k=1), r"takes 2 array\(s\) \(a, b\), got 1"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256)), "basemul_acc needs k"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k=-1), ">= 1, got -1"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k=True), "got bool"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k=1.0), "got float"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k="1"), "got str"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k=2**70), "too large"),
        (lambda k: k.raw("basemul_acc", zeros(256), zeros(256), k=2), r"a needs 512 elements"),
        (lambda k: k.raw("ntt", zeros(256), k=1), "ntt takes no k"),
        (lambda k: k.raw("ntt"), r"ntt takes 1 array\(s\) \(a\), got 0"),
        (lambda k: k.raw("ntt", zeros(255)), r"ntt: a needs 256 elements, got shape \(255,\)"),
        (lambda k: k.raw("ntt", np.int16(0)), r"needs 256 elements, got shape \(\) \(a scalar\)"),
        (lambda k: k.raw("ntt", None), "ntt: a: expected an integer array, got None"),
        (lambda k: k.raw("ntt", "0" * 256), "expected an integer array, got dtype <U256"),
        (lambda k: k.raw("ntt", np.zeros(256)), "got dtype float64"),
        (lambda k: k.raw("ntt", np.zeros(256, bool)), "got dtype bool"),
        (lambda k: k.raw("ntt", np.zeros(256, object)), "got dtype object"),
        (lambda k: k.raw("ntt", [[0] * 3, [0]]), "numpy cannot read"),
        # the C contract of ntt's input (the bounds its proof assumes), with the array index
        (lambda k: k.raw("ntt", np.full(256, 3329)), r"\[-3328, 3328\].*\(a\[0\] = 3329\)"),
        (lambda k: k.raw("reduce", np.full(256, 1 << 15)), r"\[-32768, 32767\]"),
        (lambda k: k.raw("reduce", np.full(256, 2**64 - 1, np.uint64)), r"= 18446744073709551615"),
        (lambda k: k.raw("frobnicate"), "unknown operation 'frobnicate'"),
        (lambda k: k.raw(["ntt"]), "unknown operation"),
    ],
)
def test_raw_checks_every_argument(call: Callable[[nttgen.Kernel], Any], match: str) -> None:
    with pytest.raises(NttgenError, match=match) as info:
        call(mlkem())
    assert isinstance(info.value, InputError | UnknownNameError)
    assert "\n" not in str(info.value)


def test_raw_accepts_numpy_integers_any_int_dtype_and_leaves_inputs_alone() -> None:
    """Any integer dtype whose values fit the contract is copied exactly into the C type;
    numpy integers are sizes; a (k, n) block is k polynomials; inout arrays are not written."""
    k = mlkem()
    a = np.arange(512, dtype=np.uint16).reshape(2, 256) % 3329
    b = np.ones((2, 256), dtype=np.int8)
    (r,) = k.raw("basemul_acc", a, b, k=np.int64(2))
    (r2,) = k.raw("basemul_acc", a.astype(np.int64).reshape(-1), b.astype(np.int16), k=2)
    assert r.dtype == np.int16 and np.array_equal(r, r2)
    x = np.arange(256, dtype=np.int32)
    (y,) = k.raw("reduce", x)
    assert np.array_equal(x, np.arange(256)) and y is not x


# ---------------------------------------------------------------- 2. errors of the right kind
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"ring": None}, "ring must be a ring name"),
        ({"ring": 5}, "ring must be a ring name"),
        ({"ring": ["mlkem"]}, "ring must be a ring name"),
        ({"ring": "mldsa", "n": 256, "q": 3329}, "not both"),
        ({"ring": "mlkem", "n": 256, "q": 3329}, "not both"),
        ({"n": True, "q": 3329}, "n must be an integer, got bool"),
        ({"n": 256.0, "q": 3329}, "n must be an integer, got float"),
        ({"n": 256, "q": np.float64(3329)}, "q must be an integer"),
        ({"n": 256, "q": 2**70}, "too large"),
        ({"isa": None}, "isa must be"),
        ({"isa": "c", "arch": 5}, "arch must be"),
        ({"isa": "c", "vlen": "128"}, "vlen must be"),
        ({"ring": "sntrup761", "isa": "c", "pipeline": ["x"]}, "pipeline must be"),
    ],
)
def test_load_refuses_with_nttgen_errors(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(NttgenError, match=match) as info:
        nttgen.load(**kwargs)
    assert "\n" not in str(info.value)


def test_load_accepts_numpy_integers() -> None:
    k = nttgen.load(n=np.int64(256), q=np.int64(3329), isa="c")
    assert (k.n, k.q) == (256, 3329) and k is nttgen.load(n=256, q=3329, isa="c")


@pytest.mark.parametrize(
    "method,shapes",
    [
        ("polymul", [(0, 256), (0, 256)]),
        ("ntt", [(0, 256)]),
        ("intt", [(0, 256)]),
        ("basemul", [(0, 256), (0, 256)]),
        ("basemul_acc", [(0, 3, 256), (0, 3, 256)]),
    ],
)
def test_an_empty_batch_gives_an_empty_result(method: str, shapes: list[tuple[int, ...]]) -> None:
    out = getattr(mlkem(), method)(*(np.zeros(s, dtype=np.int64) for s in shapes))
    assert out.shape == (0, 256) and out.dtype == np.int64


def test_an_empty_ntru_batch_gives_an_empty_result() -> None:
    k = sntrup()
    assert k.polymul(np.zeros((0, 761), int), np.zeros((0, 761), int)).shape == (0, 761)
    assert k.polymul_small(np.zeros((0, 761), int), np.zeros((0, 761), int)).shape == (0, 761)


@pytest.mark.parametrize("cache", ["/proc/nttgen-x", "{tmp}/a-file/cache"])
def test_an_unusable_cache_is_a_one_line_error(
    cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NTTGEN_CACHE under /proc or below a file: a CacheError naming the directory and the
    setting, not a bare OSError (also for root, whom permissions do not stop)."""
    (tmp_path / "a-file").write_text("")
    path = cache.format(tmp=tmp_path)
    monkeypatch.setenv("NTTGEN_CACHE", path)
    monkeypatch.setattr(api, "_LOADED", {})  # compile again instead of reusing the kernel
    with pytest.raises(CacheError) as info:
        nttgen.load("n256_q7681", "c")
    message = str(info.value)
    assert "\n" not in message and path in message and "set NTTGEN_CACHE" in message
    assert isinstance(info.value, NttgenError | OSError)


# ---------------------------------------------------------------- 3. concurrency
def test_concurrent_first_loads_compile_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """8 threads load a kernel this process has not loaded: one compilation, one kernel."""
    monkeypatch.setattr(api, "_LOADED", {})
    monkeypatch.setattr(api, "_LOAD_LOCKS", {}, raising=False)  # absent before the fix
    calls: list[str] = []
    real = api.compile_kernel

    def counting(*args: Any, **kwargs: Any) -> Path:
        calls.append(threading.current_thread().name)
        time.sleep(0.2)  # wide enough for every other thread to arrive meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "compile_kernel", counting)
    start = threading.Barrier(8)
    kernels: list[nttgen.Kernel] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            start.wait()
            kernels.append(nttgen.load("n256_q7681", "c"))
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(calls) == 1 and len(kernels) == 8
    assert all(k is kernels[0] for k in kernels)
    a = np.arange(256) % 7681
    assert np.array_equal(kernels[0].polymul(a, a), kernels[0].ring.reference_product(a, a))


def test_concurrent_cache_builds_run_once(tmp_path: Path) -> None:
    """Threads asking cached_build for one key wait for a single build (the lock file)."""
    built: list[int] = []

    def build(directory: Path) -> None:
        built.append(1)
        time.sleep(0.2)
        (directory / "out.txt").write_text("done")

    paths: list[Path] = []
    threads = [
        threading.Thread(
            target=lambda: paths.append(cached_build(tmp_path, "x", ["k"], "out.txt", build))
        )
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [1] and len(set(paths)) == 1 and paths[0].read_text() == "done"


# ---------------------------------------------------------------- property: any input
FAULTS = ["kind", "shape", "dtype", "values"]


@st.composite
def arrays(
    draw: st.DrawFn, shape: tuple[int, ...], lo: int, hi: int, fault: str | None = None
) -> Any:
    """An argument of ``shape`` with values in [lo, hi] and an integer dtype, unless ``fault``
    breaks one aspect: ``kind`` (None, a string, a float, a scalar), ``shape`` (0-D, one
    element short or long, an extra axis), ``dtype`` (float, bool, object) or ``values``
    (one value just outside, or the dtype's extremes, or NaN). Integer dtypes too narrow for
    [lo, hi] get clipped values, so they stay valid. Sometimes a nested list instead."""
    if fault == "kind":
        return draw(st.sampled_from([None, "x" * 8, 0.0, float("nan"), 1.5, 7, np.int16(3)]))
    if fault == "shape":
        n = shape[-1] if shape else 1
        shape = draw(
            st.sampled_from(
                [(), (n - 1,), (n + 1,), (0,), (1, 1, 1, n), (n, 1), (*shape[:-1], n + 1)]
            )
        )
    ints = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
    others = [np.float32, np.float64, np.bool_, object]
    dtype = draw(st.sampled_from(others if fault == "dtype" else ints + [np.int64] * 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    v = rng.integers(lo, hi + 1, size=shape, dtype=np.int64)
    if draw(st.booleans()):  # both ends of the range, where lanes overflow if anywhere
        v = np.where(rng.integers(0, 2, size=shape) == 1, hi, lo)
    if fault == "values" and v.size:
        v.reshape(-1)[rng.integers(0, v.size)] = draw(st.sampled_from([lo - 1, hi + 1]))
    if dtype is object:
        arr = np.array(v, dtype=object)
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if fault == "values" and draw(st.booleans()):
            v = np.where(rng.integers(0, 2, size=shape) == 1, int(info.max), int(info.min))
        arr = np.clip(v, int(info.min), int(info.max)).astype(dtype)
    else:
        arr = np.asarray(v).astype(dtype)
        if dtype is not np.bool_ and arr.size and draw(st.booleans()):
            arr.reshape(-1)[0] = np.nan
    # a nested list of the same values: numpy reads it as int64 (or float for an empty one)
    return arr.tolist() if arr.ndim and draw(st.integers(0, 7)) == 0 else arr


def _int_array(x: Any) -> np.ndarray | None:
    """``x`` as an integer ndarray if the API must accept its type, else None."""
    if x is None or isinstance(x, str | float):
        return None
    arr = np.asarray(x)
    return arr if arr.dtype.kind in "iu" else None


def _in(arr: np.ndarray, lo: int, hi: int) -> bool:
    return arr.size == 0 or (lo <= int(arr.min()) and int(arr.max()) <= hi)


def _factor_products(ring: Any, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """sum_i A_i o B_i in the NTT domain (standard order): per factor x^b - root_j, exact, in
    [0, q). A, B: (k, n)."""
    q, b, n = ring.q, ring.base_degree, ring.n
    roots = [ring.factor_root(j) for j in range(n // b)]
    out = np.zeros(n, dtype=object)
    for x, y in zip(A.astype(object), B.astype(object), strict=True):
        for j, r in enumerate(roots):
            u, v = x[j * b : (j + 1) * b], y[j * b : (j + 1) * b]
            full = np.convolve(u, v)
            low = full[:b].copy()
            low[: b - 1] += full[b:] * r
            out[j * b : (j + 1) * b] += low
    return np.array([int(c) % q for c in out], dtype=np.int64)


def _reference_ntt(ring: Any, a: np.ndarray) -> np.ndarray:
    return np.array(NttAlgebra(ring).reference_ntt([int(c) for c in a]), dtype=np.int64)


def _expected_high_level(k: nttgen.Kernel, method: str, args: list[Any]) -> np.ndarray | None:
    """The exact result of a valid call, or None where the call breaks the contract."""
    arrs = [_int_array(x) for x in args]
    if any(a is None for a in arrs):
        return None
    core = 2 if method == "basemul_acc" else 1
    if any(a.ndim not in (core, core + 1) or a.shape[-1] != k.n for a in arrs):  # type: ignore[union-attr]
        return None
    lo, hi = k.ring.coefficient_range
    bounds = [(lo, hi), (-1, 1)] if method == "polymul_small" else [(lo, hi)] * 2
    if not all(_in(a, *bd) for a, bd in zip(arrs, bounds, strict=False)):  # type: ignore[arg-type]
        return None
    batches = [a[None] if a.ndim == core else a for a in arrs]  # type: ignore[union-attr]
    if any(b.shape != batches[0].shape for b in batches):
        return None
    if method == "basemul_acc" and batches[0].shape[1] < 1:
        return None
    single = all(a.ndim == core for a in arrs)  # type: ignore[union-attr]
    q, ring = k.q, k.ring
    rows = []
    for row in zip(*(b.astype(np.int64) for b in batches), strict=True):
        if method in ("polymul", "polymul_small"):
            rows.append(ring.reference_product(row[0], row[1]))
        elif method == "ntt":
            rows.append(_reference_ntt(ring, row[0]))
        elif method == "intt":
            # the NTT is a bijection: the one a in [0, q) with ntt(a) = a_hat mod q
            rows.append(np.mod(row[0], q))  # checked through ntt below
        elif method == "basemul":
            rows.append(_factor_products(ring, row[0][None], row[1][None]))
        else:
            rows.append(_factor_products(ring, row[0], row[1]))
    out = np.stack(rows) if rows else np.zeros((0, k.n), np.int64)
    return out[0] if single else out


HIGH_LEVEL = [
    ("mlkem", "polymul", 2), ("mlkem", "ntt", 1), ("mlkem", "intt", 1),
    ("mlkem", "basemul", 2), ("mlkem", "basemul_acc", 2),
    ("sntrup761", "polymul", 2), ("sntrup761", "polymul_small", 2),
    ("mlkem", "polymul_small", 2), ("sntrup761", "ntt", 1),  # ops the ring lacks
]  # fmt: skip


PROPERTY_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""Deterministic (the same examples every run) and bounded: each property test draws 100."""


@PROPERTY_SETTINGS
@given(data=st.data())
def test_high_level_methods_answer_right_or_refuse(data: st.DataObject) -> None:
    ring, method, arity = data.draw(st.sampled_from(HIGH_LEVEL))
    k = mlkem() if ring == "mlkem" else sntrup()
    lo, hi = k.ring.coefficient_range
    kk = data.draw(st.integers(1, 3))
    batch = data.draw(st.sampled_from([(), (0,), (1,), (2,), (3,)]))
    shape = (*batch, kk, k.n) if method == "basemul_acc" else (*batch, k.n)
    if method == "basemul_acc" and data.draw(st.integers(0, 9)) == 0:
        shape = (*batch, 0, k.n)  # k = 0: no products
    fault = data.draw(st.sampled_from([None] * 4 + FAULTS))
    at = data.draw(st.integers(0, arity - 1))
    args = []
    for i in range(arity):
        bounds = (-1, 1) if method == "polymul_small" and i == 1 else (lo, hi)
        args.append(data.draw(arrays(shape, *bounds, fault if i == at else None)))
    want = _expected_high_level(k, method, args) if method in k.ops else None
    event(f"{method} {'valid' if want is not None else 'invalid'}")
    try:
        got = getattr(k, method)(*args)
    except NttgenError:
        assert want is None, f"{method} refused a valid call"
        return
    assert want is not None, f"{method} accepted an invalid call"
    assert got.dtype == np.int64 and got.shape == want.shape
    if method == "intt":
        lo_out, hi_out = 0, k.q - 1
        assert _in(got, lo_out, hi_out)
        flat = got.reshape(-1, k.n)
        assert all(
            np.array_equal(_reference_ntt(k.ring, r), w)
            for r, w in zip(flat, want.reshape(-1, k.n), strict=True)
        )
    else:
        assert np.array_equal(got, want)


MONT = 1 << 16  # beta: mlkem's lanes are 16 bits


def _expected_raw(k: nttgen.Kernel, op: str, ins: list[np.ndarray], kk: int | None) -> Any:
    """A predicate on the outputs of a valid raw call (mlkem on c: the native order is the
    standard one), checking them mod q against the maths and against the out_range."""
    q, ring = k.q, k.ring
    beta_inv = pow(MONT, -1, q)
    x = [a.astype(np.int64).reshape(-1) for a in ins]

    def mod(v: np.ndarray) -> np.ndarray:
        return np.mod(v.astype(np.int64), q)

    if op in ("reduce", "reduce_centred", "reduce_partial"):
        return [mod(x[0])]  # each output is also checked against its out_range
    if op == "tomont":
        return [mod(x[0] * MONT)]
    if op == "frommont":
        return [mod(x[0] * beta_inv)]
    if op == "ntt":
        return [_reference_ntt(ring, x[0])]
    if op == "ntt_vec":
        return [np.concatenate([_reference_ntt(ring, row) for row in x[0].reshape(kk, -1)])]
    if op == "polymul":
        return [ring.reference_product(x[0], x[1])]
    if op == "basemul":
        return [mod(_factor_products(ring, x[0][None], x[1][None]) * beta_inv)]
    if op == "basemul_acc":
        A, B = x[0].reshape(kk, -1), x[1].reshape(kk, -1)
        return [mod(_factor_products(ring, A, B) * beta_inv)]
    if op == "basemul_cache":
        # factor j of the standard order is x^2 - g_j: the cache holds g_j * b1 (mod q)
        roots = np.array([NttAlgebra(ring).base_root(j) for j in range(k.n // 2)])
        return [mod(x[0][1::2] * roots)]
    if op == "basemul_acc_cached":
        # any cache c in its contract: a0 b0 + a1 c and a0 b1 + a1 b0, summed, times beta^-1
        A, B, C = x[0].reshape(kk, -1), x[1].reshape(kk, -1), x[2].reshape(kk, -1)
        out = np.zeros(k.n, dtype=object)
        out[0::2] = (A[:, 0::2] * B[:, 0::2] + A[:, 1::2] * C).sum(axis=0)
        out[1::2] = (A[:, 0::2] * B[:, 1::2] + A[:, 1::2] * B[:, 0::2]).sum(axis=0)
        return [mod(np.array([int(v) * beta_inv % q for v in out]))]
    if op in ("intt", "intt_vec"):
        return None  # checked by its inverse below
    return None  # to_standard / from_standard and unknown names: not on mlkem's c kernel


@PROPERTY_SETTINGS
@given(data=st.data())
def test_raw_ops_answer_right_or_refuse(data: st.DataObject) -> None:
    """Every raw op of mlkem (and sntrup761's), with arbitrary arrays and k: a valid call
    (exactly the manifest's contract) returns the right values within out_range; any other
    call raises an nttgen error, never a numpy/ctypes one, never garbage."""
    ring = data.draw(st.sampled_from(["mlkem"] * 4 + ["sntrup761"]))
    k = mlkem() if ring == "mlkem" else sntrup()
    op = data.draw(st.sampled_from([*k.ops] * 4 + ["nonsense"]))
    meta = k.manifest["functions"].get(op, {"params": []})
    params = meta["params"]
    ins = [p for p in params if p["kind"] != "size" and p["role"] != "out"]
    has_k = any(p["kind"] == "size" for p in params)
    kk: Any = data.draw(
        st.sampled_from([1, 2, 3, np.int32(2)] * 3 + [None, 0, -1, 2**64, True, 2.0])
        if has_k
        else st.sampled_from([None] * 10 + [1, 0])
    )
    good_k = isinstance(kk, int | np.integer) and not isinstance(kk, bool) and 1 <= kk <= 3
    k_len = int(kk) if good_k else 1
    count = max(len(ins) + data.draw(st.sampled_from([0] * 8 + [-1, 1])), 0)
    fault = data.draw(st.sampled_from([None] * 4 + FAULTS))
    at = data.draw(st.integers(0, max(count - 1, 0)))
    args = []
    for i in range(count):
        p = ins[i] if i < len(ins) else {"length": 256, "in_range": None, "elem": "int16_t"}
        lo, hi = p["in_range"] or (-(1 << 15), (1 << 15) - 1)
        per_k = k_len if p.get("times") else 1
        # a per-k input as k polynomials one after another, or as a (k, length) block
        shape = data.draw(st.sampled_from([(p["length"] * per_k,), (per_k, p["length"])]))
        args.append(data.draw(arrays(shape, lo, hi, fault if i == at else None)))

    # the contract, independently of the implementation
    valid = op in k.ops and count == len(ins) and (good_k if has_k else kk is None)
    arrs = [_int_array(a) for a in args]
    if valid:
        for p, a in zip(ins, arrs, strict=True):
            length = p["length"] * (k_len if p.get("times") else 1)
            bits = 16 if p["elem"] == "int16_t" else 32
            lo, hi = p["in_range"] or (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
            if a is None or a.ndim == 0 or a.size != length or not _in(a, lo, hi):
                valid = False
    event(f"raw {op} {'valid' if valid else 'invalid'}")
    try:
        got = k.raw(op, *args, k=kk)
    except NttgenError:
        assert not valid, f"raw {op} refused a valid call"
        return
    assert valid, f"raw {op} accepted an invalid call"
    outs = [p for p in params if p["kind"] != "size" and p["role"] in ("out", "inout")]
    assert len(got) == len(outs)
    for p, g in zip(outs, got, strict=True):
        lo, hi = p["out_range"]
        assert _in(g, lo, hi), f"{op}: {p['name']} outside its out_range"
    if ring == "sntrup761":
        a, b = (x.reshape(-1) for x in arrs)  # type: ignore[union-attr]
        assert np.array_equal(got[0], k.ring.reference_product(a, b))
        return
    want = _expected_raw(k, op, arrs, k_len)  # type: ignore[arg-type]
    if op in ("intt", "intt_vec"):
        # a <- beta * NTT^-1(a) for each polynomial: the NTT of out * beta^-1 is the input
        back = np.mod(got[0].astype(np.int64) * pow(MONT, -1, k.q), k.q).reshape(-1, k.n)
        forward = np.concatenate([_reference_ntt(k.ring, row) for row in back])
        assert np.array_equal(forward, np.mod(arrs[0].reshape(-1).astype(np.int64), k.q))
        return
    assert want is not None
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.mod(g.astype(np.int64), k.q), np.mod(w, k.q))


# ---------------------------------------------------------------- AddressSanitizer
ASAN_SCRIPT = """
import ctypes, sys
import numpy as np
import nttgen
from nttgen.errors import NttgenError

k = nttgen.load("mlkem", "c")
rng = np.random.default_rng(1)
for op, meta in k.manifest["functions"].items():
    params = meta["params"]
    kk = 3 if any(p["kind"] == "size" for p in params) else None
    ins = []
    for p in params:
        if p["kind"] != "size" and p["role"] != "out":
            lo, hi = p["in_range"]
            n = p["length"] * (kk if p["times"] else 1)
            ins.append(rng.integers(lo, hi + 1, n))
    k.raw(op, *ins, k=kk)
    # the calls that used to reach the C out of contract are refused before it
    for bad in ([np.zeros(0, np.int16)] * len(ins), [x[:-1] for x in ins]):
        try:
            k.raw(op, *bad, k=0 if kk else None)
        except NttgenError:
            pass
        else:
            sys.exit(f"{op} accepted a bad call")
a = rng.integers(-3328, 3329, (3, 256))
k.polymul(a, a); k.intt(k.basemul(k.ntt(a), k.ntt(a))); k.basemul_acc(a[None], a[None])
if sys.argv[1:] == ["control"]:
    # a direct call past raw's checks with too short buffers: ASan must report it
    e = k._entries["basemul_acc"]
    r, x = np.zeros(256, np.int16), np.zeros(2, np.int16)
    ptr = lambda v: v.ctypes.data_as(ctypes.POINTER(ctypes.c_int16))
    e.fn(ptr(r), ptr(x), ptr(x), 1)
print("clean")
"""


def test_kernels_run_clean_under_address_sanitizer(tmp_path: Path) -> None:
    """Every raw op and high-level method, on valid and refused inputs, in a process whose
    mlkem library is built with -fsanitize=address (NTTGEN_SANITIZE); the control run, which
    reads past a buffer on purpose, shows that ASan is live in that process."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    libasan = subprocess.run(
        [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if not libasan or not Path(libasan).is_absolute() or not Path(libasan).exists():
        pytest.skip("gcc has no libasan.so")
    script = tmp_path / "asan_run.py"
    script.write_text(textwrap.dedent(ASAN_SCRIPT))
    env = {
        **os.environ,
        "CC": gcc,
        "NTTGEN_SANITIZE": "address",
        "LD_PRELOAD": libasan,
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",  # CPython's arenas look leaked
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )

    clean = run()
    assert clean.returncode == 0 and clean.stdout.strip() == "clean", clean.stderr[-3000:]
    assert "AddressSanitizer" not in clean.stderr
    control = run("control")
    assert control.returncode != 0
    assert "AddressSanitizer: heap-buffer-overflow" in control.stderr


def test_an_unknown_sanitizer_is_a_setting_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from nttgen.build import sanitizer_flags
    from nttgen.errors import SettingError

    monkeypatch.setenv("NTTGEN_SANITIZE", "memory")
    with pytest.raises(SettingError, match="unknown sanitizer 'memory'"):
        sanitizer_flags()
    monkeypatch.setenv("NTTGEN_SANITIZE", "address, undefined")
    assert sanitizer_flags()[0] == "-fsanitize=address,undefined"
