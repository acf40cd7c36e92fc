"""The statement schedule (nttgen.dsl.schedule): a list schedule by critical path under a
live-vector limit reorders each straight-line run and changes nothing else. Checked: every
kernel of scheduled SIMD builds computes what the recorded order computes (exact evaluator,
random and extreme inputs) and keeps its contracts; the order is a permutation that defines
every value before its use and keeps each buffer's loads and stores in order; the limit
lowers the peak of live vectors; the result is deterministic; and the schedule really moves
statements (else these tests would pass on a no-op)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from nttgen.dsl.ir import Function, Load, Loop, Op, Stmt, Store, Table, walk
from nttgen.dsl.schedule import list_schedule, schedule_body
from nttgen.generate import default_config
from nttgen.interp.bounds import analyse
from nttgen.interp.evaluate import evaluate
from nttgen.programs.kernels import build_kernels
from nttgen.reference import schoolbook_batch
from nttgen.rings import PRESETS, Ring, make_ring

CASES = [
    (PRESETS["mlkem"], "avx2"),
    (PRESETS["mldsa"], "avx2"),
    (PRESETS["newhope1024"], "avx2"),
    (PRESETS["mlkem"], "avx512"),
    (make_ring(128, 7681), "neon"),
]
IDS = [f"{r.name}-{i}" for r, i in CASES]


def _operands(ring: Ring, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = ring.q
    a = rng.integers(-(q - 1), q, size=(rows, ring.n))
    b = rng.integers(-(q - 1), q, size=(rows, ring.n))
    a[0], b[0] = q - 1, q - 1
    a[1], b[1] = -(q - 1), q - 1
    a[2] = np.where(np.arange(ring.n) % 2 == 0, q - 1, -(q - 1))
    return a, b


@pytest.mark.parametrize("ring,isa", CASES, ids=IDS)
def test_scheduled_kernels_compute_what_the_recorded_order_computes(ring: Ring, isa: str) -> None:
    # NEON keeps the recorded order by default; the schedule must still be right there
    config = replace(default_config(ring, isa), schedule="critical_path")
    assert config.live_limit
    ks = build_kernels(ring, config)
    rec = build_kernels(ring, replace(config, schedule="recorded"))
    a, b = _operands(ring, 6, 11)
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
    for name, fn in ks.functions.items():
        assert analyse(fn, ks.arith) == fn.contract.outputs == rec.functions[name].contract.outputs
        if name in ("ntt", "intt"):
            x = evaluate(fn, ks.arith, {"a": a}, checked=True)["a"]
            y = evaluate(rec.functions[name], rec.arith, {"a": a}, checked=True)["a"]
            assert np.array_equal(x, y), name
        if name == "basemul":
            hat = evaluate(ks.functions["ntt"], ks.arith, {"a": a}, checked=True)["a"]
            x = evaluate(fn, ks.arith, {"a": hat, "b": hat[::-1]}, checked=True)["r"]
            y = evaluate(rec.functions[name], rec.arith, {"a": hat, "b": hat[::-1]}, checked=True)
            assert np.array_equal(x, y["r"])


def _runs(body: list[Stmt]) -> list[list[Stmt]]:
    """The straight-line runs of a body and of its loops' bodies (comments dropped)."""
    out: list[list[Stmt]] = [[]]
    for s in body:
        if isinstance(s, Op | Load | Store):
            out[-1].append(s)
        elif isinstance(s, Loop):
            out.extend(_runs(s.body))
            out.append([])
        elif not hasattr(s, "text"):
            out.append([])
    return [r for r in out if r]


def _check_order(run: list[Stmt]) -> None:
    """Every operand defined earlier in the run (or outside it); per buffer, no load moves
    across a store and no store across a load or store."""
    seen: set[int] = set()
    defined_here = {v.id for s in run for v in _defs(s)}
    for s in run:
        for v in _uses(s):
            assert v not in defined_here or v in seen, f"{s} uses a value before it is defined"
        seen.update(v.id for v in _defs(s))


def _defs(s: Stmt) -> list:  # type: ignore[type-arg]
    if isinstance(s, Op):
        return list(s.results)
    return [s.result] if isinstance(s, Load) else []


def _uses(s: Stmt) -> list[int]:
    if isinstance(s, Op):
        return [a.id for a in s.args]
    return [s.value.id] if isinstance(s, Store) else []


def _memory_trace(run: list[Stmt]) -> dict[str, list[object]]:
    """Per buffer (tables excepted), its accesses in order: each store, and the loads between
    two stores as one unordered group."""
    out: dict[str, list[object]] = {}
    for s in run:
        if isinstance(s, Load) and not isinstance(s.src, Table):
            seq = out.setdefault(s.src.name, [])
            if seq and isinstance(seq[-1], frozenset):
                seq[-1] = seq[-1] | {_key(s)}
            else:
                seq.append(frozenset({_key(s)}))
        elif isinstance(s, Store):
            out.setdefault(s.dst.name, []).append(_key(s))
    return out


@pytest.mark.parametrize("ring,isa", CASES[:2], ids=IDS[:2])
def test_the_schedule_is_a_legal_permutation_that_moves_statements(ring: Ring, isa: str) -> None:
    config = default_config(ring, isa)
    ks = build_kernels(ring, config)
    rec = build_kernels(ring, replace(config, schedule="recorded"))
    moved = 0
    for name, fn in ks.functions.items():
        before = _runs(rec.functions[name].body)
        after = _runs(fn.body)
        assert len(before) == len(after), name
        for x, y in zip(before, after, strict=True):
            assert sorted(map(_key, x)) == sorted(map(_key, y)), name
            _check_order(y)
            assert _memory_trace(x) == _memory_trace(y), name
            moved += sum(_key(s) != _key(t) for s, t in zip(x, y, strict=True))
    assert moved > 500, "the schedule should reorder the transforms (hundreds of moves each)"


def _key(s: Stmt) -> str:
    """A statement's identity across two builds of the same kernel (ids are deterministic)."""
    return repr(s)


def _peak_live(run: list[Stmt]) -> int:
    last_use: dict[int, int] = {}
    for i, s in enumerate(run):
        for v in _uses(s):
            last_use[v] = i
    free = {
        v.id
        for s in run
        if (isinstance(s, Op) and s.kind == "const")
        or (isinstance(s, Load) and isinstance(s.src, Table))
        for v in _defs(s)
    }
    live, peak = set(), 0
    for i, s in enumerate(run):
        live.update(v.id for v in _defs(s) if v.id in last_use and v.id not in free)
        peak = max(peak, len(live))
        live -= {v for v in live if last_use[v] <= i}
    return peak


def test_the_live_limit_lowers_the_peak_of_live_vectors() -> None:
    """The fused ML-KEM core: every a_hat vector must be loaded before the first store, so
    some point holds 32 data vectors whatever the order; the limit keeps the schedule near
    that floor where the pure critical-path order goes far above the recorded order."""
    config = replace(default_config(PRESETS["mlkem"], "avx2"), schedule="recorded")
    core = build_kernels(PRESETS["mlkem"], config).functions["mul_core"]
    stmts = [s for s in core.body if isinstance(s, Op | Load | Store)]
    recorded = _peak_live(stmts)
    unlimited = _peak_live(list_schedule(stmts))
    limited = _peak_live(list_schedule(stmts, 12))
    assert limited < recorded < unlimited
    assert limited <= 34


def test_x86_kernels_are_scheduled_and_the_others_keep_the_recorded_order() -> None:
    ring = PRESETS["mlkem"]
    assert {isa: default_config(ring, isa).schedule for isa in ("c", "avx2", "avx512", "neon")} == {
        "c": "recorded",
        "avx2": "critical_path",
        "avx512": "critical_path",
        "neon": "recorded",
    }
    assert default_config(ring, "rvv128").schedule == "recorded"


def test_the_schedule_is_deterministic() -> None:
    config = default_config(PRESETS["kyber-r1"], "avx2")
    one = build_kernels(PRESETS["kyber-r1"], config).functions["mul_core"]
    two = build_kernels(PRESETS["kyber-r1"], config).functions["mul_core"]
    assert [_key(s) for s in walk(one.body)] == [_key(s) for s in walk(two.body)]


def test_a_load_never_moves_across_a_store_to_its_buffer() -> None:
    """A hand-made run: the load after the store has the longest chain ahead, so a schedule
    that ignored memory order would hoist it above the store."""
    from nttgen.dsl.builder import Builder
    from nttgen.plan.constants import Arith

    ring = PRESETS["mlkem"]
    S = Builder("t", Arith(ring.q, ring.lane), 16)
    a = S.inout("a", 32, (-100, 100))
    x = S.load(a, 0)
    S.store(a, 16, S.add(x, x))
    y = S.load(a, 16)  # reads what the store wrote
    z = y
    for _ in range(6):
        z = S.mulhi(z, S.const(7))
    S.store(a, 0, z)
    fn: Function = S.finish()
    body = schedule_body(fn.body, 12)
    kinds = [type(s).__name__ for s in body if isinstance(s, Load | Store)]
    assert kinds == ["Load", "Store", "Load", "Store"]
    got = evaluate(fn, Arith(ring.q, ring.lane), {"a": np.arange(32)[None, :]})["a"]
    assert got[0, 16] == 0 and got[0, 17] == 2
