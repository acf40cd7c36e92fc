"""Dead-code elimination on the IR: drop pure statements whose results nothing uses.

Loads, vocabulary ops and register reads are pure; stores, calls, register writes and comments
are kept. Loops whose bodies become empty are dropped. Programs can thus be written plainly
(e.g. a chunk helper that loads a root vector its caller may not need) without dead code in
the output.
"""

from __future__ import annotations

from .ir import Comment, Function, Load, Loop, Op, Stmt, Value, VarGet, walk


def stmt_uses(s: Stmt) -> tuple[Value, ...]:
    """The values statement ``s`` reads: an op's arguments, the value a store or an
    assignment writes, a register's initial value; none for the others."""
    if isinstance(s, Op):
        return s.args
    value = getattr(s, "value", None)
    if isinstance(value, Value):
        return (value,)
    init = getattr(s, "init", None)
    if isinstance(init, Value):
        return (init,)
    return ()


def _results(s: Stmt) -> tuple[Value, ...]:
    if isinstance(s, Op):
        return s.results
    if isinstance(s, Load | VarGet):
        return (s.result,)
    return ()


def _pure(s: Stmt) -> bool:
    return isinstance(s, Op | Load | VarGet)


def eliminate_dead_code(fn: Function) -> int:
    """Remove dead statements from ``fn`` in place; return how many were removed."""
    removed = 0
    while True:
        used: set[int] = set()
        for s in walk(fn.body):
            for v in stmt_uses(s):
                used.add(v.id)
        n = _prune(fn.body, used)
        if n == 0:
            return removed
        removed += n


def _prune(body: list[Stmt], used: set[int]) -> int:
    removed = 0
    keep: list[Stmt] = []
    for s in body:
        if isinstance(s, Loop):
            removed += _prune(s.body, used)
            if not any(not isinstance(b, Comment) for b in s.body):
                removed += 1
                continue
        elif _pure(s) and not any(r.id in used for r in _results(s)):
            removed += 1
            continue
        keep.append(s)
    body[:] = keep
    return removed
