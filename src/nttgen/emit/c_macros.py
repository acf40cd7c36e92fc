"""What a generated .c file defines before its kernels: the compiler-dependent macros, each only
where the includer has not defined it already (attributes for gcc and clang, and the empty asm
statements that hide a table pointer from the compiler), and the range assertion of debug
builds."""

from __future__ import annotations

from . import c_ast as C


def gnu_macro(
    macro: str,
    gnu: str,
    other: str = "",
    test: str = "defined(__GNUC__) || defined(__clang__)",
) -> list[C.Top]:
    """``#define macro gnu`` for gcc and clang (or where ``test`` holds), ``#define macro
    other`` for other compilers, unless the includer defined it already."""
    name = macro.split("(")[0]
    return [
        C.Directive(f"#ifndef {name}"),
        C.Directive(f"#if {test}"),
        C.Directive(f"#define {macro} {gnu}"),
        C.Directive("#else"),
        C.Directive(f"#define {macro} {other}".rstrip()),
        C.Directive("#endif"),
        C.Directive("#endif"),
    ]


def opaque_macro(name: str) -> list[C.Top]:
    """``name(p)`` (``NTTGEN_OPAQUE(p)``): an empty asm statement that the compiler must assume
    changes the pointer p, so that loads through it are not folded into immediates (gcc,
    clang)."""
    return gnu_macro(f"{name}(p)", '__asm__("" : "+r"(p))', "((void)0)")


def gcc_opaque_macro(name: str) -> list[C.Top]:
    """``name(p)`` (``NTTGEN_GCC_OPAQUE(p)``): :func:`opaque_macro` for gcc alone (clang,
    which builds the table's constants better than gcc, sees them)."""
    return gnu_macro(f"{name}(p)", '__asm__("" : "+r"(p))', "((void)0)", GCC_ONLY)


GCC_ONLY = "defined(__GNUC__) && !defined(__clang__)"
"""The preprocessor test that holds for gcc and not for clang (which defines __GNUC__ too)."""


def gcc_options(options: tuple[str, ...]) -> tuple[list[C.Top], list[C.Top]]:
    """The directives that compile what lies between them with gcc's optimisation ``options``
    added (``#pragma GCC push_options`` / ``optimize(...)``), and those that restore the
    includer's (``pop_options``), so that a unity build including the file keeps its own.
    Returns (opening, closing), each after a blank line; both are empty where ``options`` is."""
    if not options:
        return [], []
    quoted = ", ".join(f'"{o}"' for o in options)
    opening = [
        C.Blank(),
        C.Directive(f"#if {GCC_ONLY}"),
        C.Directive("#pragma GCC push_options"),
        C.Directive(f"#pragma GCC optimize({quoted})"),
        C.Directive("#endif"),
    ]
    closing = [
        C.Blank(),
        C.Directive(f"#if {GCC_ONLY}"),
        C.Directive("#pragma GCC pop_options"),
        C.Directive("#endif"),
    ]
    return opening, closing


def attribute_macro(macro: str, attribute: str) -> list[C.Top]:
    """``#define macro __attribute__((attribute))`` for gcc and clang, empty for other
    compilers (the attributes only help speed), unless the includer defined it already."""
    return gnu_macro(macro, f"__attribute__(({attribute}))")


def range_check_helper(name: str, debug_macro: str, elem: str) -> list[C.Top]:
    """The function ``name(p, len, lo, hi)`` that debug builds (``debug_macro`` defined) call at
    every entry and exit: it asserts that the ``elem`` values p[0..len) lie in [lo, hi]. Not
    constant time: it exists to catch contract violations while developing."""
    p, i = C.Name("p"), C.Name("i")
    body = (
        C.For(
            "i",
            C.Bin("<", i, C.Name("len")),
            (
                C.ExprStmt(C.Call("assert", (C.Bin(">=", C.Index(p, i), C.Name("lo")),))),
                C.ExprStmt(C.Call("assert", (C.Bin("<=", C.Index(p, i), C.Name("hi")),))),
            ),
        ),
    )
    fn = C.FuncDef(
        "void",
        name,
        (
            C.Param(f"const {elem}", "*p"),
            C.Param("size_t", "len"),
            C.Param("int64_t", "lo"),
            C.Param("int64_t", "hi"),
        ),
        body,
        storage="static",
        doc=(
            f"{debug_macro} builds only: asserts that p[0..len) lies in [lo, hi], the",
            "contract the interval analysis proved. Not constant time; never in release.",
        ),
    )
    return [
        C.Directive(f"#ifdef {debug_macro}"),
        C.Directive("#include <assert.h>"),
        C.Blank(),
        fn,
        C.Directive("#endif"),
    ]
