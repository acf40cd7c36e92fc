"""Replay a recorded IR function into any interpreter.

An interpreter is any object with one method per vocabulary op (named as in
:data:`nttgen.dsl.vocab.VOCABULARY`, value operands positional, attributes as keywords) plus the
structural methods ``load``, ``store``, ``loop``, ``var_def``, ``var_set``, ``var_get``, ``call``,
``call_each`` and ``comment``. Each interpreter chooses its own representation of values: arrays
of lanes, intervals, C expressions or counts.
"""

from __future__ import annotations

from typing import Any

from .ir import (
    Call,
    CallEach,
    Comment,
    Function,
    Load,
    Loop,
    Op,
    Stmt,
    Store,
    Value,
    VarDef,
    VarGet,
    VarSet,
)


def replay(fn: Function, interp: Any) -> dict[Value, Any]:
    """Run every statement of ``fn`` through ``interp``; return the value environment."""
    env: dict[Value, Any] = {}
    run_block(fn.body, env, interp)
    return env


def run_block(body: list[Stmt], env: dict[Value, Any], interp: Any) -> None:
    """Replay a list of statements (used recursively for loop bodies)."""
    for s in body:
        if hasattr(interp, "stmt"):
            interp.stmt = s
        if isinstance(s, Op):
            if hasattr(interp, "tag"):
                interp.tag = s.tag
            out = getattr(interp, s.kind)(*(env[a] for a in s.args), **dict(s.attrs))
            if len(s.results) == 1:
                env[s.results[0]] = out
            else:
                for r, o in zip(s.results, out, strict=True):
                    env[r] = o
        elif isinstance(s, Load):
            env[s.result] = interp.load(s.src, s.index, broadcast=s.broadcast, lanes_at=s.lanes_at)
        elif isinstance(s, Store):
            interp.store(s.dst, s.index, env[s.value], lanes_at=s.lanes_at)
        elif isinstance(s, Loop):
            body = s.body
            interp.loop(
                s.var, s.count, lambda body=body: run_block(body, env, interp), unroll=s.unroll
            )
        elif isinstance(s, VarDef):
            interp.var_def(s.var, env[s.init])
        elif isinstance(s, VarSet):
            interp.var_set(s.var, env[s.value])
        elif isinstance(s, VarGet):
            env[s.result] = interp.var_get(s.var)
        elif isinstance(s, Call):
            interp.call(s)
        elif isinstance(s, CallEach):
            interp.call_each(s)
        elif isinstance(s, Comment):
            if hasattr(interp, "comment"):
                interp.comment(s.text)
        else:  # pragma: no cover
            raise TypeError(f"unknown statement {s!r}")
