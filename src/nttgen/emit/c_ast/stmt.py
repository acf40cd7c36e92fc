"""C statements inside a function body (printed by :mod:`nttgen.emit.c_ast.top`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .expr import Apply, Call, Expr


# ------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class Decl:
    """ctype name = init; (``const`` adds the qualifier, ``array`` makes it name[array])."""

    ctype: str
    name: str
    init: Expr | None = None
    const: bool = False
    array: int | str | None = None  # a length, or a C expression of macros
    align: str | None = None


@dataclass(frozen=True)
class Assign:
    """target = value;"""

    target: Expr
    value: Expr


@dataclass(frozen=True)
class ExprStmt:
    """expr;"""

    expr: Expr


@dataclass(frozen=True)
class For:
    """for (size_t var = 0; cond; ++var) { body } (without ``++var`` when not ``increment``:
    the body steps the counter)."""

    var: str
    cond: Expr
    body: tuple[Stmt, ...]
    increment: bool = True


@dataclass(frozen=True)
class Return:
    """return expr;"""

    expr: Expr


@dataclass(frozen=True)
class Comment:
    """A // comment line."""

    text: str


@dataclass(frozen=True)
class Blank:
    """An empty line."""


@dataclass(frozen=True)
class PP:
    """A preprocessor line inside a function body (printed at column 0)."""

    text: str


@dataclass(frozen=True)
class Part:
    """``goto label; label:;``: the statements after it start a new basic block in an
    unoptimised build, and nothing changes in an optimised one (see :func:`split_long_runs`)."""

    label: str


@dataclass(frozen=True)
class DeclList:
    """ctype name, name, ...; (several variables of one type, none initialised)."""

    ctype: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class OpAssign:
    """target op= value; (op: + - * / % << >> & ^ |)."""

    op: str
    target: Expr
    value: Expr


@dataclass(frozen=True)
class CallStmt:
    """A call as a statement; where it does not fit, its arguments are bin-packed after the
    open parenthesis, or, where one would still overflow, on the next lines at a continuation
    indent of 4, as clang-format does."""

    call: Call | Apply


@dataclass(frozen=True)
class Break:
    """break;"""


@dataclass(frozen=True)
class If:
    """if (cond) { body } [else { orelse }]. A condition that does not fit breaks after the
    operators of its :class:`Logic` chain, operands bin-packed after ``if (`` (an operand is
    never broken inside: one longer than a line overflows)."""

    cond: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] | None = None


@dataclass(frozen=True)
class While:
    """while (cond) { body }"""

    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Asm:
    """``__asm__ volatile("template" : outputs : inputs);``: each operand a (constraint,
    expression) pair."""

    template: str
    outputs: tuple[tuple[str, Expr], ...] = ()
    inputs: tuple[tuple[str, Expr], ...] = ()
    volatile: bool = True


@dataclass(frozen=True)
class IfDef:
    """``#ifdef macro`` ... ``#endif`` around statements (the directives at column 0)."""

    macro: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Commented:
    """A statement with a trailing ``/* text */``: after its opening line when it has a body,
    after its last line otherwise; on a line of its own before the statement where it would
    pass the column limit."""

    stmt: Stmt
    text: str


Stmt = (
    Decl | Assign | ExprStmt | For | Return | Comment | Blank | PP | Part
    | DeclList | OpAssign | CallStmt | Break | If | While | Asm | IfDef | Commented
)  # fmt: skip

# Straight-line statements per basic block in the bodies nttgen prints. clang 19 selects
# AArch64 instructions at -O0 with GlobalISel, whose Localizer pass is quadratic in the
# length of a block (LLVM stopped running it at -O0 in 2026): one unrolled block of a large
# kernel took minutes (sntrup761's Good-Schoenhage-Bruun NEON file: 170 s at -O0 against
# 14 s at -O3). Blocks of this many statements bring -O0 back to seconds; the -O2 and -O3
# objects are the same bytes with or without the parts.
PART_STATEMENTS = 128


def split_long_runs(body: Sequence[Stmt], prefix: str = "part") -> tuple[Stmt, ...]:
    """``body`` with a :class:`Part` (labels ``<prefix>_1``, ``<prefix>_2``, ...) before every
    :data:`PART_STATEMENTS`-th statement of each run of straight-line statements, in loop
    bodies too; a body without such a run comes back unchanged."""
    count = 0

    def split(stmts: Sequence[Stmt]) -> tuple[Stmt, ...]:
        nonlocal count
        out: list[Stmt] = []
        run = 0
        for st in stmts:
            if isinstance(st, For):
                st = For(st.var, st.cond, split(st.body), st.increment)
                run = 0
            elif isinstance(st, Decl | Assign | ExprStmt):
                if run == PART_STATEMENTS:
                    count += 1
                    out.append(Part(f"{prefix}_{count}"))
                    run = 0
                run += 1
            out.append(st)
        return tuple(out)

    return split(body)
