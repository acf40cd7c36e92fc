"""Broadcast constants read from memory where they are used, for ISAs whose instructions take a
memory operand (x86).

A program broadcasts its constants once, before the loops that use them (``const`` ops). Where
a function has more of them than the ISA has registers, no compiler keeps them all in
registers: gcc builds each from an immediate at the top and spills it, clang reads its own
copy from memory at each use. :func:`constants_from_memory` rewrites such a function so that
each use reads its constant from a table of broadcast vectors, next to the statement that uses
it: the load then folds into that instruction as its memory operand, and no register, no
build and no spill is spent on it. The values and every result stay the same.
"""

from __future__ import annotations

from dataclasses import replace

from ..dsl.dce import stmt_uses
from ..dsl.ir import (
    Affine,
    Function,
    Load,
    Loop,
    Op,
    Stmt,
    Store,
    Table,
    Value,
    VarDef,
    VarSet,
    walk,
)
from .isa.base import Isa

TABLE_NAME = "consts"


def broadcast_constants(fn: Function) -> dict[Value, int]:
    """Each nonzero ``const`` result of ``fn`` (a zero costs one register-clearing
    instruction anywhere) and its value, in program order."""
    out: dict[Value, int] = {}
    for s in walk(fn.body):
        if isinstance(s, Op) and s.kind == "const" and dict(s.attrs)["value"]:
            out[s.results[0]] = dict(s.attrs)["value"]
    return out


def constants_for(fn: Function, isa: Isa) -> Function:
    """``fn`` as the backend ``isa`` reads its broadcast constants: where it reads them
    from memory (:attr:`Isa.constants_in_memory`), :func:`constants_from_memory` with its
    register count; otherwise ``fn`` itself."""
    return constants_from_memory(fn, isa.registers) if isa.constants_in_memory else fn


def constants_from_memory(fn: Function, registers: int) -> Function:
    """``fn`` itself where its distinct nonzero broadcast constants fit in ``registers``;
    otherwise a copy in which those ``const`` ops are gone and every statement that reads
    one is preceded by an aligned load of it from a new table (``consts``: each distinct
    value repeated over ``fn.lanes`` lanes, in order of first appearance), one load per
    statement and constant. Same results, bounds and contract."""
    consts = broadcast_constants(fn)
    distinct = list(dict.fromkeys(consts.values()))
    if len(distinct) <= registers:
        return fn
    L = fn.lanes
    values = tuple(v for v in distinct for _ in range(L))
    doc = "broadcast constants, one vector each (read where they are used)"
    table = Table(TABLE_NAME, fn.lane, values, doc=doc, constants=True)
    next_id = 1 + max(
        (v.id for s in walk(fn.body) for v in _results(s)),
        default=0,
    )
    bounds = dict(fn.bounds)

    def load(c: Value) -> tuple[Load, Value]:
        nonlocal next_id
        fresh = Value(c.lane, c.hint, next_id)
        next_id += 1
        if c in fn.bounds:
            bounds[fresh] = fn.bounds[c]
        return Load(fresh, table, Affine(L * distinct.index(consts[c]))), fresh

    def rewrite(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, Op) and s.kind == "const" and s.results[0] in consts:
                continue
            if isinstance(s, Loop):
                out.append(replace(s, body=rewrite(s.body)))
                continue
            reads = stmt_uses(s)
            fresh: dict[Value, Value] = {}
            for c in dict.fromkeys(a for a in reads if a in consts):
                stmt, fresh[c] = load(c)
                out.append(stmt)
            if not fresh:
                out.append(s)
            elif isinstance(s, Op):
                out.append(replace(s, args=tuple(fresh.get(a, a) for a in s.args)))
            elif isinstance(s, Store):
                out.append(replace(s, value=fresh[s.value]))
            elif isinstance(s, VarDef):
                out.append(replace(s, init=fresh[s.init]))
            else:
                assert isinstance(s, VarSet)
                out.append(replace(s, value=fresh[s.value]))
        return out

    return replace(fn, body=rewrite(fn.body), tables=[*fn.tables, table], bounds=bounds)


def _results(s: Stmt) -> tuple[Value, ...]:
    if isinstance(s, Op):
        return s.results
    result = getattr(s, "result", None)
    return (result,) if isinstance(result, Value) else ()
