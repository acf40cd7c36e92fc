"""C expressions: the nodes and their printer (:func:`format_expr`)."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class UInt:
    """An unsigned integer literal: ``27u``, or ``0x1bu`` when ``hex``."""

    value: int
    hex: bool = False


@dataclass(frozen=True)
class Str:
    """A string literal holding ``value`` (printed with C escapes)."""

    value: str


@dataclass(frozen=True)
class Char:
    """A character literal holding the one character ``value`` (printed with C escapes)."""

    value: str


@dataclass(frozen=True)
class Member:
    """base.field, or base->field when ``arrow``."""

    base: Expr
    field: str
    arrow: bool = False


@dataclass(frozen=True)
class Apply:
    """func(args...) where func is an expression (a member holding a function pointer)."""

    func: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Logic:
    """operands[0] op operands[1] op ..., for op in && ||. Unlike :class:`Bin`, comparisons
    and arithmetic among the operands are printed without parentheses (C binds them tighter and
    -Wparentheses accepts them); an operand that is another logical operator keeps them. An
    ``if`` breaks the chain after an operator where it does not fit (see :class:`If`)."""

    op: str
    operands: tuple[Expr, ...]


Expr = Name | Int | Cast | Bin | Unary | Call | Index | UInt | Str | Char | Member | Apply | Logic

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
    if isinstance(e, UInt):
        return f"0x{e.value:x}u" if e.hex else f"{e.value}u"
    if isinstance(e, Str):
        return f'"{_escape(e.value, chr(34))}"'
    if isinstance(e, Char):
        return f"'{_escape(e.value, chr(39))}'"
    if isinstance(e, Member):
        return f"{_postfix_operand(e.base)}{'->' if e.arrow else '.'}{e.field}"
    if isinstance(e, Apply):
        return f"{_postfix_operand(e.func)}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, Logic):
        return f" {e.op} ".join(_logic_operand(x) for x in e.operands)
    raise TypeError(f"not an expression: {e!r}")


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\0": "\\0"}


def _escape(text: str, quote: str) -> str:
    """``text`` as the inside of a C literal delimited by ``quote``."""
    out = []
    for ch in text:
        if ch == quote:
            out.append("\\" + ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif not ch.isprintable() or not ch.isascii():
            raise ValueError(f"no C escape for {ch!r} here")
        else:
            out.append(ch)
    return "".join(out)


def _postfix_operand(e: Expr) -> str:
    """An expression printed before a postfix operator (``->``, ``.``, a call's parentheses)."""
    s = format_expr(e)
    if isinstance(e, Name | Call | Index | Member | Apply | Str):
        return s
    return f"({s})"


def _logic_operand(e: Expr) -> str:
    # && inside || (and the reverse) stays parenthesised: -Wparentheses asks for it
    s = format_expr(e)
    if isinstance(e, Logic) or (isinstance(e, Bin) and e.op in ("&&", "||")):
        return f"({s})"
    return s


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
    if isinstance(e, Logic):
        return f"({s})"
    return s
