"""A small C AST and its pretty-printer.

Emitters build these nodes and never concatenate C text, so generated code can be inspected,
folded and printed in one canonical style (the repository's ``.clang-format`` accepts it as is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

INDENT = "    "
COLUMNS = 100


# ------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Name:
    """An identifier."""

    text: str


@dataclass(frozen=True)
class Int:
    """An integer literal."""

    value: int


@dataclass(frozen=True)
class Cast:
    """(ctype)expr."""

    ctype: str
    expr: Expr


@dataclass(frozen=True)
class Bin:
    """left op right."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Unary:
    """op expr, for op in - ~ & * !."""

    op: str
    expr: Expr


@dataclass(frozen=True)
class Call:
    """func(args...)."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Index:
    """base[index]."""

    base: Expr
    index: Expr


Expr = Name | Int | Cast | Bin | Unary | Call | Index

_PREC = {
    "*": 3, "/": 3, "%": 3,
    "+": 4, "-": 4,
    "<<": 5, ">>": 5,
    "<": 6, ">": 6, "<=": 6, ">=": 6,
    "==": 7, "!=": 7,
    "&": 8, "^": 9, "|": 10, "&&": 11, "||": 12,
}  # fmt: skip


def add(a: Expr, b: Expr) -> Expr:
    """a + b with constant folding."""
    if isinstance(a, Int) and isinstance(b, Int):
        return Int(a.value + b.value)
    if isinstance(b, Int) and b.value == 0:
        return a
    if isinstance(a, Int) and a.value == 0:
        return b
    if isinstance(b, Int) and b.value < 0:
        return Bin("-", a, Int(-b.value))
    return Bin("+", a, b)


def mul(a: Expr, k: int) -> Expr:
    """a * k with constant folding."""
    if isinstance(a, Int):
        return Int(a.value * k)
    if k == 1:
        return a
    if k == 0:
        return Int(0)
    return Bin("*", a, Int(k))


def format_expr(e: Expr) -> str:
    """Print an expression with the parentheses C (and -Wparentheses) needs."""
    if isinstance(e, Name):
        return e.text
    if isinstance(e, Int):
        if e.value == -(1 << 31):
            return "(-2147483647 - 1)"
        if e.value < 0:
            return f"-{-e.value}"
        return str(e.value)
    if isinstance(e, Cast):
        return f"({e.ctype}){_operand(e.expr, 2)}"
    if isinstance(e, Unary):
        return f"{e.op}{_operand(e.expr, 2)}"
    if isinstance(e, Call):
        return f"{e.func}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, Index):
        return f"{_operand(e.base, 1)}[{format_expr(e.index)}]"
    if isinstance(e, Bin):
        p = _PREC[e.op]
        left = _operand(e.left, p, parent=e.op)
        right = _operand(e.right, p - 1, parent=e.op)
        return f"{left} {e.op} {right}"
    raise TypeError(f"not an expression: {e!r}")


def _operand(e: Expr, prec: int, parent: str | None = None) -> str:
    s = format_expr(e)
    if isinstance(e, Int) and e.value < 0 and prec <= 3:
        return f"({s})"
    if isinstance(e, Bin):
        mine = _PREC[e.op]
        conventional = parent in ("+", "-") and e.op in ("*", "/", "%")
        if mine > prec or (parent is not None and e.op != parent and not conventional):
            return f"({s})"
    if isinstance(e, Cast) and prec < 2:
        return f"({s})"
    return s


# ------------------------------------------------------------------------- statements
@dataclass(frozen=True)
class Decl:
    """ctype name = init; (``const`` adds the qualifier, ``array`` makes it name[array])."""

    ctype: str
    name: str
    init: Expr | None = None
    const: bool = False
    array: int | None = None
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


Stmt = Decl | Assign | ExprStmt | For | Return | Comment | Blank | PP | Part

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


# ------------------------------------------------------------------------- top level
@dataclass(frozen=True)
class Param:
    """One function parameter; ``array`` prints it as name[array]."""

    ctype: str
    name: str
    array: str | None = None


@dataclass(frozen=True)
class FuncDef:
    """A function definition (or only its prototype when ``body`` is None)."""

    ret: str
    name: str
    params: tuple[Param, ...]
    body: tuple[Stmt, ...] | None
    storage: str = ""
    doc: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArrayDef:
    """A static const table, ``per_line`` values per line, with comments at row offsets."""

    ctype: str
    name: str
    values: tuple[int, ...]
    align: str | None = None
    per_line: int = 8
    notes: tuple[tuple[int, str], ...] = ()
    doc: tuple[str, ...] = ()


@dataclass(frozen=True)
class Directive:
    """A preprocessor line such as ``#include <stdint.h>``."""

    text: str


@dataclass(frozen=True)
class BlockComment:
    """A /* ... */ block, one entry per line."""

    lines: tuple[str, ...]


Top = FuncDef | ArrayDef | Directive | BlockComment | Blank | Comment


@dataclass
class Unit:
    """A translation unit: top-level items in order."""

    items: list[Top] = field(default_factory=list)

    def render(self) -> str:
        """The C text, ending with one newline."""
        out: list[str] = []
        for it in self.items:
            out.extend(_top(it))
        text = "\n".join(out).rstrip("\n") + "\n"
        return text


def _top(it: Top) -> list[str]:
    if isinstance(it, Directive):
        return [it.text]
    if isinstance(it, Blank):
        return [""]
    if isinstance(it, Comment):
        return _line_comment(it.text)
    if isinstance(it, BlockComment):
        return _block_comment(it.lines)
    if isinstance(it, ArrayDef):
        return _array(it)
    if isinstance(it, FuncDef):
        return _func(it)
    raise TypeError(f"not a top-level item: {it!r}")


def wrap_text(text: str, width: int, cont: str = "") -> list[str]:
    """Split ``text`` at spaces into lines of at most ``width`` characters (a longer word stays
    whole); continuation lines start with ``cont``, or with the text's own indentation plus two
    spaces when ``cont`` is empty."""
    if len(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip())]
    cont = cont or lead + "  "
    words = text.split()
    lines: list[str] = []
    cur = lead
    for w in words:
        sep = "" if cur.strip() == "" else " "
        if len(cur) + len(sep) + len(w) > width and cur.strip():
            lines.append(cur)
            cur = cont + w
        else:
            cur += sep + w
    lines.append(cur)
    return lines


def _block_comment(lines: Sequence[str], indent: str = "") -> list[str]:
    out = [f"{indent}/*"]
    width = COLUMNS - len(indent) - 3
    for ln in lines:
        out += [f"{indent} * {w}".rstrip() for w in wrap_text(ln, width)]
    out.append(f"{indent} */")
    return out


def _line_comment(text: str, indent: str = "") -> list[str]:
    width = COLUMNS - len(indent) - 3
    return [f"{indent}// {w}".rstrip() for w in wrap_text(text, width, cont=" ")]


def _array(a: ArrayDef) -> list[str]:
    out: list[str] = []
    for d in a.doc:
        out += _line_comment(d)
    align = f"{a.align} " if a.align else ""
    # Tables keep their rows (one lane vector or row group per line); clang-format would
    # bin-pack them.
    out.append("// clang-format off")
    out.append(f"{align}static const {a.ctype} {a.name}[{len(a.values)}] = {{")
    notes = dict(a.notes)
    i = 0
    while i < len(a.values):
        if i in notes:
            out.append(f"{INDENT}// {notes[i]}")
        j = min(i + a.per_line, len(a.values))
        stops = [k for k in notes if i < k < j]
        if stops:
            j = min(stops)
        row = ", ".join(format_expr(Int(v)) for v in a.values[i:j])
        out.append(f"{INDENT}{row},")
        i = j
    out.append("};")
    out.append("// clang-format on")
    return out


def _params(f: FuncDef) -> list[str]:
    ps = []
    for p in f.params:
        ps.append(f"{p.ctype} {p.name}[{p.array}]" if p.array else f"{p.ctype} {p.name}")
    return ps or ["void"]


def _signature(f: FuncDef) -> list[str]:
    storage = f"{f.storage} " if f.storage else ""
    head = f"{storage}{f.ret} {f.name}("
    ps = _params(f)
    end = ");" if f.body is None else ") {"
    one = head + ", ".join(ps) + end
    if len(one) <= COLUMNS:
        return [one]
    # Bin-pack the parameters after the open parenthesis, as clang-format does; where a
    # parameter would still overflow, clang-format breaks after the return type instead.
    packed = bin_pack(head, ps, end)
    if all(len(line) <= COLUMNS for line in packed):
        return packed
    rest = f"{f.name}(" + ", ".join(ps) + end
    if len(rest) <= COLUMNS:
        return [f"{storage}{f.ret}", rest]
    return [f"{storage}{f.ret}", *bin_pack(f"{f.name}(", ps, end)]


def bin_pack(head: str, items: list[str], tail: str) -> list[str]:
    """``head`` + the items separated by commas + ``tail`` on as few lines as the column limit
    allows, continuation lines aligned after ``head``: how clang-format packs arguments,
    parameters and braced lists."""
    pad = " " * len(head)
    lines: list[str] = []
    cur = head
    for k, item in enumerate(items):
        piece = item + (tail if k == len(items) - 1 else ",")
        if cur not in (head, pad) and len(cur) + 1 + len(piece) > COLUMNS:
            lines.append(cur)
            cur = pad + piece
        else:
            cur += ("" if cur in (head, pad) else " ") + piece
    lines.append(cur)
    return lines


def _func(f: FuncDef) -> list[str]:
    out = _block_comment(f.doc) if f.doc else []
    out += _signature(f)
    if f.body is None:
        return out
    for s in f.body:
        out.extend(_stmt(s, 1))
    out.append("}")
    return out


def _stmt(s: Stmt, depth: int) -> list[str]:
    ind = INDENT * depth
    if isinstance(s, Decl):
        const = "const " if s.const else ""
        align = f"{s.align} " if s.align else ""
        arr = f"[{s.array}]" if s.array is not None else ""
        head = f"{ind}{align}{const}{s.ctype} {s.name}{arr}"
        if s.init is None:
            return [f"{head};"]
        init = format_expr(s.init)
        one = f"{head} = {init};"
        if len(one) <= COLUMNS:
            return [one]
        # as clang-format does: break after "=" with a continuation indent of 4
        return [f"{head} =", f"{ind}{INDENT}{init};"]
    if isinstance(s, Assign):
        return [f"{ind}{format_expr(s.target)} = {format_expr(s.value)};"]
    if isinstance(s, ExprStmt):
        return [f"{ind}{format_expr(s.expr)};"]
    if isinstance(s, Return):
        return [f"{ind}return {format_expr(s.expr)};"]
    if isinstance(s, Comment):
        return _line_comment(s.text, ind)
    if isinstance(s, Blank):
        return [""]
    if isinstance(s, PP):
        return [s.text]
    if isinstance(s, Part):
        # clang-format's place for a label: one level out from the statements
        return [f"{ind}goto {s.label};", f"{INDENT * (depth - 1)}{s.label}:;"]
    if isinstance(s, For):
        step = f" ++{s.var}" if s.increment else ""
        out = [f"{ind}for (size_t {s.var} = 0; {format_expr(s.cond)};{step}) {{"]
        for b in s.body:
            out.extend(_stmt(b, depth + 1))
        out.append(f"{ind}}}")
        return out
    raise TypeError(f"not a statement: {s!r}")
