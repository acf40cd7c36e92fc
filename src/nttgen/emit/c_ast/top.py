"""Top-level C: declarations, definitions, directives and comments, and the printer of a
whole translation unit (:class:`Unit`) with its statements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .expr import (
    COLUMNS,
    INDENT,
    Call,
    Expr,
    Int,
    Logic,
    Str,
    _logic_operand,
    _postfix_operand,
    format_expr,
)
from .stmt import (
    PP,
    Asm,
    Assign,
    Blank,
    Break,
    CallStmt,
    Comment,
    Commented,
    Decl,
    DeclList,
    ExprStmt,
    For,
    If,
    IfDef,
    OpAssign,
    Part,
    Return,
    Stmt,
    While,
)


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


@dataclass(frozen=True)
class ShortComment:
    """A ``/* text */`` line (a :class:`BlockComment` where it does not fit)."""

    text: str


@dataclass(frozen=True)
class FuncPtr:
    """A struct member holding a pointer to a function: ``ret (*name)(params);``."""

    ret: str
    name: str
    params: tuple[Param, ...]


@dataclass(frozen=True)
class TypedefStruct:
    """``typedef struct { fields } name;``: one member per line (a :class:`Param` prints as a
    plain member)."""

    name: str
    fields: tuple[Param | FuncPtr, ...]


@dataclass(frozen=True)
class Global:
    """A file-scope variable: ``storage ctype name[ = init];`` (a pointer: ``name`` starts with
    ``*``, as for :class:`Param`)."""

    ctype: str
    name: str
    storage: str = "static"
    init: Expr | None = None


@dataclass(frozen=True)
class InitRow:
    """One braced initialiser of an :class:`InitArray`, compiled in only where ``guard`` is
    defined (None: always)."""

    values: tuple[Expr, ...]
    guard: str | None = None


@dataclass(frozen=True)
class InitArray:
    """``storage ctype name[] = { {...}, ... };``: one row per line, a row that does not fit
    bin-packed after its ``{``, each guarded row between ``#ifdef`` and ``#endif``."""

    ctype: str
    name: str
    rows: tuple[InitRow, ...]
    storage: str = "static const"


Top = (
    FuncDef | ArrayDef | Directive | BlockComment | Blank | Comment
    | ShortComment | TypedefStruct | Global | InitArray
)  # fmt: skip


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
    if isinstance(it, ShortComment):
        return _short_comment(it.text)
    if isinstance(it, TypedefStruct):
        return _typedef_struct(it)
    if isinstance(it, Global):
        return _global(it)
    if isinstance(it, InitArray):
        return _init_array(it)
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


def comment_text(text: str) -> str:
    """``text`` as it may stand inside a C comment: nothing in it can end the comment early
    (``*/``), open a nested one (``/*``), continue a ``//`` comment onto the next line of code (a
    backslash, or the trigraph ``??/`` that C99 reads as one) or carry a control character
    (each becomes a space). Comments carry free text a caller supplied (a ring's description),
    and no such text may change what the C compiles to."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = text.replace("\\", "/")  # first: "*\\" would become "*/"
    while "??" in text:  # "???" leaves a "??" after one pass
        text = text.replace("??", "? ?")
    return text.replace("*/", "* /").replace("/*", "/ *")


def _block_comment(lines: Sequence[str], indent: str = "") -> list[str]:
    out = [f"{indent}/*"]
    width = COLUMNS - len(indent) - 3
    for ln in lines:
        out += [f"{indent} * {w}".rstrip() for w in wrap_text(comment_text(ln), width)]
    out.append(f"{indent} */")
    return out


def _line_comment(text: str, indent: str = "") -> list[str]:
    width = COLUMNS - len(indent) - 3
    return [f"{indent}// {w}".rstrip() for w in wrap_text(comment_text(text), width, cont=" ")]


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
    return _param_list(f.params)


def _param_list(params: Sequence[Param]) -> list[str]:
    ps = []
    for p in params:
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
    # parameter would still overflow, or the packing takes two breaks where one after the
    # return type leaves the rest on one line (its penalties: 60 for the return type's line,
    # more for two breaks among parameters), clang-format breaks after the return type.
    packed = bin_pack(head, ps, end)
    rest = f"{f.name}(" + ", ".join(ps) + end
    if all(len(line) <= COLUMNS for line in packed) and (len(packed) <= 2 or len(rest) > COLUMNS):
        return packed
    if len(rest) <= COLUMNS:
        return [f"{storage}{f.ret}", rest]
    return [f"{storage}{f.ret}", *bin_pack(f"{f.name}(", ps, end)]


def bin_pack(head: str, items: list[str], tail: str) -> list[str]:
    """``head`` + the items separated by commas + ``tail`` on as few lines as the column limit
    allows, continuation lines aligned after ``head``: how clang-format packs arguments,
    parameters and braced lists."""
    return _pack(head, [item + "," for item in items[:-1]] + list(items[-1:]), tail)


def _pack(head: str, pieces: Sequence[str], tail: str) -> list[str]:
    """``head`` + the pieces separated by spaces + ``tail``, broken between pieces where a line
    would pass the column limit, continuation lines aligned after ``head`` (each piece carries
    its own separator: ``a,`` in a list, ``a &&`` in a condition)."""
    pad = " " * len(head)
    lines: list[str] = []
    cur = head
    for k, piece in enumerate(pieces):
        piece += tail if k == len(pieces) - 1 else ""
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
        # as clang-format does: break after "=" with a continuation indent of 4, or where the
        # value still overflows and is a call, after its "(" instead
        broken = [f"{head} =", f"{ind}{INDENT}{init};"]
        if len(broken[1]) > COLUMNS and isinstance(s.init, Call) and s.init.args:
            args = [format_expr(a) for a in s.init.args]
            # the arguments aligned after the "(" where each line fits
            aligned = bin_pack(f"{head} = {s.init.func}(", args, ");")
            if len(aligned) > 1 and all(len(line) <= COLUMNS for line in aligned):
                return aligned
            call = [f"{head} = {s.init.func}(", f"{ind}{INDENT}{', '.join(args)});"]
            if all(len(line) <= COLUMNS for line in call):
                return call
            # the arguments still overflow one line: bin-packed on continuation lines
            packed = [call[0], *bin_pack(f"{ind}{INDENT}", args, ");")]
            if all(len(line) <= COLUMNS for line in packed):
                return packed
        return broken
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
    if isinstance(s, DeclList):
        return [f"{ind}{s.ctype} {', '.join(s.names)};"]
    if isinstance(s, OpAssign):
        return [f"{ind}{format_expr(s.target)} {s.op}= {format_expr(s.value)};"]
    if isinstance(s, CallStmt):
        c = s.call
        func = c.func if isinstance(c, Call) else _postfix_operand(c.func)
        if not c.args:
            return [f"{ind}{func}();"]
        args = [format_expr(a) for a in c.args]
        packed = bin_pack(f"{ind}{func}(", args, ");")
        if all(len(line) <= COLUMNS for line in packed):
            return packed
        # an argument would still overflow: clang-format breaks after the parenthesis instead
        return [f"{ind}{func}(", *bin_pack(f"{ind}{INDENT}", args, ");")]
    if isinstance(s, Break):
        return [f"{ind}break;"]
    if isinstance(s, If):
        out = _condition(f"{ind}if (", s.cond) + _body(s.body, depth)
        if s.orelse is not None:
            out += [f"{ind}}} else {{", *_body(s.orelse, depth)]
        return [*out, f"{ind}}}"]
    if isinstance(s, While):
        return [*_condition(f"{ind}while (", s.cond), *_body(s.body, depth), f"{ind}}}"]
    if isinstance(s, Asm):
        return [f"{ind}{_asm(s)};"]
    if isinstance(s, IfDef):
        return [f"#ifdef {s.macro}", *_body(s.body, depth - 1), "#endif"]
    if isinstance(s, Commented):
        out = _stmt(s.stmt, depth)
        at = 0 if isinstance(s.stmt, If | While | For | IfDef) else len(out) - 1
        note = f"/* {comment_text(s.text)} */"
        if len(out[at]) + 1 + len(note) > COLUMNS:
            return [f"{ind}{note}", *out]
        out[at] += f" {note}"
        return out
    raise TypeError(f"not a statement: {s!r}")


def _body(stmts: Sequence[Stmt], depth: int) -> list[str]:
    """The statements of a block opened at ``depth``, one level in."""
    return [line for b in stmts for line in _stmt(b, depth + 1)]


def _condition(head: str, cond: Expr) -> list[str]:
    """``head`` (``if (`` at its indent) + cond + ``) {``: on one line where it fits, else a
    :class:`Logic` chain broken after its operators, the operands bin-packed after ``head``
    (clang-format's BreakBeforeBinaryOperators: None with AlignOperands)."""
    one = f"{head}{format_expr(cond)}) {{"
    if len(one) <= COLUMNS or not isinstance(cond, Logic):
        return [one]
    ops = [_logic_operand(x) for x in cond.operands]
    return _pack(head, [f"{x} {cond.op}" for x in ops[:-1]] + ops[-1:], ") {")


def _asm(a: Asm) -> str:
    def operands(ops: tuple[tuple[str, Expr], ...]) -> str:
        return ", ".join(f"{format_expr(Str(c))}({format_expr(e)})" for c, e in ops)

    text = format_expr(Str(a.template))
    if a.outputs or a.inputs:
        text += " :" + (f" {operands(a.outputs)}" if a.outputs else "")
    if a.inputs:
        text += f" : {operands(a.inputs)}"
    return f"__asm__{' volatile' if a.volatile else ''}({text})"


def _short_comment(text: str) -> list[str]:
    one = f"/* {comment_text(text)} */"
    return [one] if len(one) <= COLUMNS else _block_comment((text,))


def _typedef_struct(t: TypedefStruct) -> list[str]:
    out = ["typedef struct {"]
    for f in t.fields:
        if isinstance(f, FuncPtr):
            out += bin_pack(f"{INDENT}{f.ret} (*{f.name})(", _param_list(f.params), ");")
        else:
            out.append(f"{INDENT}{_param_list((f,))[0]};")
    return [*out, f"}} {t.name};"]


def _global(g: Global) -> list[str]:
    storage = f"{g.storage} " if g.storage else ""
    init = "" if g.init is None else f" = {format_expr(g.init)}"
    line = f"{storage}{g.ctype} {g.name}{init};"
    if len(line) <= COLUMNS or g.init is None:
        return [line]
    # as clang-format breaks a long initialised declaration: after the =, indented once
    return [f"{storage}{g.ctype} {g.name} =", f"{INDENT}{format_expr(g.init)};"]


def _init_array(a: InitArray) -> list[str]:
    storage = f"{a.storage} " if a.storage else ""
    out = [f"{storage}{a.ctype} {a.name}[] = {{"]
    for row in a.rows:
        lines = bin_pack(f"{INDENT}{{", [format_expr(v) for v in row.values], "},")
        out += [f"#ifdef {row.guard}", *lines, "#endif"] if row.guard else lines
    return [*out, "};"]
