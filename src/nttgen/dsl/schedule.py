"""Statement order of kernels: a list schedule by critical path.

Programs record a network layer by layer, in the order that is easiest to write. The C
compiler schedules within roughly the order it is given (its machine scheduler looks at a
window, not at a whole unrolled transform), and the transforms are latency-bound: a butterfly
waits for its Montgomery product, which waits for the previous layer. Reordering each
straight-line run of statements so that, among the statements whose operands are ready, the one
with the longest chain of latencies still ahead of it comes first (classic list scheduling)
starts the long chains early and fills their waits with independent work.

Only the order changes: every value, every op and the memory semantics stay, so the exact
evaluator and the bounds analysis see the same computation. Loops, calls and mutable registers
are barriers: each straight-line run between them (and each loop body) is scheduled on its own.

A pure critical-path order keeps too many values live: with 16 AVX2 registers the compiler
then spills around every butterfly. So the schedule also counts live vectors (constants and
table loads excepted: x86 folds them into the instruction that uses them) and, at a limit the
build configuration gives (the ISA's registers less a margin), prefers ready statements that
start no new value. Measured (AVX2, clang-19, one harness each, 2026-11-23; recorded order ->
list schedule at 12 live vectors): ML-KEM polymul 379.6 -> 351.5 ticks, inverse NTT 114.4 ->
107.6; Kyber-r1 polymul 400.9 -> 368.7; ML-DSA polymul 1,167 -> 1,126; NewHope-1024 polymul
2,135 -> 2,036; AVX-512 ML-KEM polymul 396.5 -> 371.8 (28 live). Without a limit ML-KEM's
polymul measured 388, and the opposite order (each store's dependency cone depth first, the
fewest live values) 426: spills are cheap on this core, parallelism is what the transforms
lack, up to the point where the register file runs out.
"""

from __future__ import annotations

from typing import Literal

from .ir import Comment, Function, Load, Loop, Op, Stmt, Store, Table

# Latency in cycles of each IR op as the SIMD emitters expand it (x86 and Arm cores agree to
# within a cycle or two; only the relative order of chains matters here): a multiply 3,
# a Montgomery product multiply -> multiply -> subtract, a Barrett reduction
# multiply -> add -> shift -> multiply -> subtract, a load from L1 about 4.
OP_LATENCY = {
    "mullo": 3,
    "mulhi": 3,
    "montmul": 7,
    "shoupmul": 7,
    "montmul_var": 10,
    "montmul_twist": 7,
    "barrett": 9,
    "barrett_coarse": 7,
    "cond_add_q": 3,
    "shuffle": 2,
    "zip": 2,
    "const": 0,
}
LOAD_LATENCY = 4

_Straight = Op | Load | Store

Schedule = Literal["recorded", "critical_path"]


def _latency(s: Stmt) -> int:
    if isinstance(s, Op):
        return OP_LATENCY.get(s.kind, 1)
    return LOAD_LATENCY if isinstance(s, Load) else 0


def _dependences(stmts: list[_Straight]) -> list[set[int]]:
    """For each statement, the earlier statements it must follow: the producers of its
    operands and, per buffer, memory order (a load follows the stores before it, a store the
    loads and stores before it; tables are read-only)."""
    producer: dict[int, int] = {}
    last_store: dict[int, int] = {}
    since_store: dict[int, list[int]] = {}  # accesses of a buffer since (and with) its last store
    deps: list[set[int]] = []
    for i, s in enumerate(stmts):
        d: set[int] = set()
        if isinstance(s, Op):
            d = {producer[a.id] for a in s.args if a.id in producer}
            for r in s.results:
                producer[r.id] = i
        elif isinstance(s, Load):
            producer[s.result.id] = i
            if not isinstance(s.src, Table):
                if id(s.src) in last_store:
                    d = {last_store[id(s.src)]}
                since_store.setdefault(id(s.src), []).append(i)
        else:
            d = set(since_store.get(id(s.dst), []))
            if s.value.id in producer:
                d.add(producer[s.value.id])
            since_store[id(s.dst)] = [i]
            last_store[id(s.dst)] = i
        deps.append(d)
    return deps


def list_schedule(stmts: list[_Straight], limit: int | None = None) -> list[_Straight]:
    """``stmts`` (straight-line) reordered: repeatedly the ready statement with the longest
    latency path to the end of the run, ties in recorded order (so the result is
    deterministic). With a ``limit``, while that many values are live a ready statement that
    does not add a live value goes first."""
    deps = _dependences(stmts)
    users: list[list[int]] = [[] for _ in stmts]
    for i, d in enumerate(deps):
        for j in sorted(d):
            users[j].append(i)
    height = [0] * len(stmts)
    for i in reversed(range(len(stmts))):
        height[i] = _latency(stmts[i]) + max((height[u] for u in users[i]), default=0)
    defined = {v for s in stmts for v in _defs(s)}  # values born in this run
    # constants and table loads need no register of their own (x86 folds them into the
    # instruction that uses them; elsewhere they are cheap to reload): they do not count
    free = {
        v
        for s in stmts
        if (isinstance(s, Op) and s.kind == "const")
        or (isinstance(s, Load) and isinstance(s.src, Table))
        for v in _defs(s)
    }
    uses_left: dict[int, int] = {}
    for s in stmts:
        for v in _uses(s):
            if v in defined:
                uses_left[v] = uses_left.get(v, 0) + 1
    waiting = [len(d) for d in deps]
    ready = [i for i in range(len(stmts)) if not waiting[i]]
    live = 0
    order: list[_Straight] = []

    def growth(i: int) -> int:
        s = stmts[i]
        born = sum(1 for v in _defs(s) if uses_left.get(v, 0) and v not in free)
        dies = sum(
            1 for v in set(_uses(s)) if v not in free and uses_left.get(v, 0) == _uses(s).count(v)
        )
        return born - dies

    while ready:
        pressed = limit is not None and live >= limit
        i = min(ready, key=lambda j: (pressed and growth(j) > 0, -height[j], j))
        ready.remove(i)
        live += growth(i)
        s = stmts[i]
        for v in _uses(s):
            if v in uses_left:
                uses_left[v] -= 1
        order.append(s)
        for u in users[i]:
            waiting[u] -= 1
            if not waiting[u]:
                ready.append(u)
    assert len(order) == len(stmts)
    return order


def _defs(s: _Straight) -> list[int]:
    if isinstance(s, Op):
        return [r.id for r in s.results]
    return [s.result.id] if isinstance(s, Load) else []


def _uses(s: _Straight) -> list[int]:
    if isinstance(s, Op):
        return [a.id for a in s.args]
    return [s.value.id] if isinstance(s, Store) else []


def schedule_body(body: list[Stmt], limit: int | None = None) -> list[Stmt]:
    """``body`` with each straight-line run list-scheduled (:func:`list_schedule`) and each
    loop body scheduled recursively; other statements stay where they are, as barriers. A
    run's comments move to its start (they describe the run, not one statement)."""
    out: list[Stmt] = []
    run: list[_Straight] = []
    notes: list[Stmt] = []

    def flush() -> None:
        out.extend(notes)
        out.extend(list_schedule(run, limit))
        run.clear()
        notes.clear()

    for s in body:
        if isinstance(s, Comment):
            notes.append(s)
        elif isinstance(s, _Straight):
            run.append(s)
        else:
            flush()
            if isinstance(s, Loop):
                s.body = schedule_body(s.body, limit)
            out.append(s)
    flush()
    return out


def schedule(fn: Function, limit: int | None = None) -> Function:
    """Schedule ``fn``'s body in place (see :func:`schedule_body`) and return it."""
    fn.body = schedule_body(fn.body, limit)
    return fn
