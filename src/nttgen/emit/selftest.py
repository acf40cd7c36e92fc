"""The self-test of a ring directory with a front end: ``<stem>_selftest.c``, a C99 program that
checks the built library against known answers without Python, and builds with it (``make
check``, ``ctest``: :mod:`nttgen.emit.build_files`).

For every ISA of the front end's manifest that ``<stem>_use_isa`` accepts on the machine, it
runs every entry point of the front end that computes (``kat_<op>``: the entry point between
the order conversions that bring its inputs and output to the standard order), compares each
output with the known answers of :mod:`nttgen.emit.kat`, and prints one line per ISA and entry
point (``avx2 ntt: ok``, or ``avx2 ntt: FAILED, <case>: <what differs>``) and one line per ISA
it skips; it exits with status 1 when an ISA that ran failed. The program uses only the front
end's documented API and stdio; every line is built from :mod:`nttgen.emit.c_ast` nodes.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import c_ast as C
from . import kat
from .build_files import BuildFiles
from .files import CFileWriter, GeneratedFiles, opening_comment, provenance_lines
from .kat import K, KatOp, SelfTest, checksum_def, fill_def, next_def, selftest_plan, value_def


def _runner(plan: SelfTest, op: KatOp) -> C.FuncDef:
    """``kat_<op>(r, a, b)``: runs the front end's entry point on the inputs a and b (standard
    order), leaving its output in r in the standard order."""
    lane, n = plan.lane, plan.n_macro
    r, a, b = C.Name("r"), C.Name("a"), C.Name("b")
    call = f"{plan.stem}_{op.name}"
    to_std, from_std = f"{plan.stem}_to_standard", f"{plan.stem}_from_standard"
    size = C.Bin("*", C.Call("sizeof", (C.Name(lane),)), n)
    body: list[C.Stmt] = []
    unused = (r, a, b)[len(op.inputs) + 1 :]
    body += [C.ExprStmt(C.Cast("void", x)) for x in unused]
    if any(role == "inout" for _, role in op.params):  # in place: on a copy of a, in r
        body.append(C.CallStmt(C.Call("memcpy", (r, a, size))))
        if op.native_in:
            body.append(C.CallStmt(C.Call(from_std, (r,))))
        body.append(C.CallStmt(C.Call(call, (r,))))
    else:
        ins = (a, b)[: len(op.inputs)]
        if op.native_in:
            polys = op.length // plan.n
            converts = tuple(
                C.CallStmt(
                    C.Call(from_std, (C.Unary("&", C.Index(x, C.Bin("*", C.Name("i"), n))),))
                )
                for x in ins
            )
            if polys == 1:
                body += [C.CallStmt(C.Call(from_std, (x,))) for x in ins]
            else:
                body.append(C.For("i", C.Bin("<", C.Name("i"), C.Int(polys)), converts))
        if any(role == kat.CACHE for _, role in op.params):
            body += kat.cache_fill(plan, b)
        args: list[C.Expr] = []
        feed = iter(ins)
        for _, role in op.params:
            if role == kat.CACHE:
                args.append(C.Name(kat.CACHE))
                continue
            args.append(r if role == "out" else C.Int(K) if role == "size" else next(feed))
        body.append(C.CallStmt(C.Call(call, tuple(args))))
    if op.native_out:
        body.append(C.CallStmt(C.Call(to_std, (r,))))
    how = ["standard-order inputs"]
    if op.native_in:
        how.append("through from_standard")
    doc = f"{op.name} on {' '.join(how)}" + (
        ", its output through to_standard" if op.native_out else ""
    )
    return C.FuncDef(
        "void",
        f"kat_{op.name}",
        tuple(C.Param(lane, f"*{x}") for x in ("r", "a", "b")),
        tuple(body),
        storage="static",
        doc=(doc + ".",),
    )


def _typedefs(plan: SelfTest, per_isa: bool) -> list[C.Top]:
    """The types of the tables: an ISA, an op, a case, a per-ISA answer."""
    lane = plan.lane
    items: list[C.Top] = [
        C.ShortComment("An ISA of the front end, and the architecture its code is built for."),
        C.TypedefStruct(
            "kat_isa", (C.Param("const char", "*name"), C.Param("const char", "*arch"))
        ),
        C.Blank(),
        C.ShortComment(
            "An entry point: how to run it, its input arrays' length and ranges (a, b), the "
            "range its output lies in, whether the output is compared as it is (else as "
            "residues in [0, q)) and whether its answers are per ISA."
        ),
        C.TypedefStruct(
            "kat_op",
            (
                C.Param("const char", "*name"),
                C.FuncPtr("void", "run", tuple(C.Param(lane, f"*{x}") for x in "rab")),
                C.Param("size_t", "len"),
                C.Param("int64_t", "lo_a"),
                C.Param("int64_t", "hi_a"),
                C.Param("int64_t", "lo_b"),
                C.Param("int64_t", "hi_b"),
                C.Param("int64_t", "out_lo"),
                C.Param("int64_t", "out_hi"),
                C.Param("int", "exact"),
                C.Param("int", "per_isa"),
            ),
        ),
        C.Blank(),
        C.ShortComment(
            "A known answer: the op, the case, how a and b are filled (kat_fill) from seed and "
            "seed + 1, the checksum of the output, and the output in full (or NULL)."
        ),
        C.TypedefStruct(
            "kat_case",
            (
                C.Param("size_t", "op"),
                C.Param("const char", "*name"),
                C.Param("int", "kind_a"),
                C.Param("int", "kind_b"),
                C.Param("uint64_t", "seed"),
                C.Param("uint64_t", "want"),
                C.Param("const int32_t", "*full"),
            ),
        ),
    ]
    if per_isa:
        items += [
            C.Blank(),
            C.ShortComment(
                "The checksum of case index on one ISA (ops whose answers are per ISA)."
            ),
            C.TypedefStruct(
                "kat_per_isa",
                (
                    C.Param("const char", "*isa"),
                    C.Param("size_t", "index"),
                    C.Param("uint64_t", "want"),
                ),
            ),
        ]
    return items


def _count(name: str, table: str) -> C.Global:
    """``static const size_t name = sizeof(table) / sizeof(table[0]);``"""
    return C.Global(
        "const size_t",
        name,
        init=C.Bin(
            "/",
            C.Call("sizeof", (C.Name(table),)),
            C.Call("sizeof", (C.Index(C.Name(table), C.Int(0)),)),
        ),
    )


def _tables(plan: SelfTest) -> list[C.Top]:
    """The full answers, the ISAs, the ops, the cases and the per-ISA answers."""
    items: list[C.Top] = []
    fulls: dict[int, str] = {}
    for index, case in enumerate(plan.cases):
        if case.full is not None:
            name = f"kat_full_{case.op}_{len(fulls)}"
            fulls[index] = name
            items += [
                C.ArrayDef(
                    "int32_t",
                    name,
                    case.full,
                    per_line=8 if max(abs(v) for v in case.full) < 1 << 16 else 6,
                    doc=(f"{case.op}, case {case.name}: the output in full.",),
                ),
                C.Blank(),
            ]
    null = C.Name("NULL")
    isa_rows = tuple(
        C.InitRow((C.Str(name), null if arch is None else C.Str(arch))) for name, arch in plan.isas
    )
    op_rows = []
    for op in plan.ops:
        (lo_a, hi_a), (lo_b, hi_b) = (*op.ranges, (0, 0))[:2]
        values = (C.Str(op.name), C.Name(f"kat_{op.name}"), C.Int(op.length), C.Int(lo_a),
                  C.Int(hi_a), C.Int(lo_b), C.Int(hi_b), C.Int(op.out_range[0]),
                  C.Int(op.out_range[1]), C.Int(int(op.exact)), C.Int(int(op.per_isa)))  # fmt: skip
        op_rows.append(C.InitRow(values))
    index_of = {op.name: i for i, op in enumerate(plan.ops)}
    case_rows = []
    per_isa_rows = []
    for index, case in enumerate(plan.cases):
        want = case.want.get("", 0)
        values = (C.Int(index_of[case.op]), C.Str(case.name), C.Int(case.kinds[0]),
                  C.Int(case.kinds[1]), C.UInt(case.seed, hex=True), C.UInt(want, hex=True),
                  C.Name(fulls[index]) if index in fulls else null)  # fmt: skip
        case_rows.append(C.InitRow(values))
        for isa, _ in plan.isas:
            if isa in case.want:
                per_isa_rows.append(
                    C.InitRow((C.Str(isa), C.Int(index), C.UInt(case.want[isa], hex=True)))
                )
    items += [
        *_table("The front end's ISAs, best first (as its manifest lists them).", "kat_isa",
                "kat_isas", isa_rows, "kat_nisas"),
        C.Blank(),
        *_table("The entry points that compute, in the front end's order.", "kat_op", "kat_ops",
                tuple(op_rows), "kat_nops"),
        C.Blank(),
        *_table("The known answers, op by op.", "kat_case", "kat_cases", tuple(case_rows),
                "kat_ncases"),
    ]  # fmt: skip
    if per_isa_rows:
        items += [
            C.Blank(),
            *_table("The answers that depend on the ISA's native order.", "kat_per_isa",
                    "kat_per_isas", tuple(per_isa_rows), "kat_nper_isas"),
        ]  # fmt: skip
    return items


def _table(doc: str, ctype: str, name: str, rows: tuple[C.InitRow, ...], count: str) -> list[C.Top]:
    """A table of one row per line (clang-format would bin-pack short rows) and its length."""
    return [
        C.ShortComment(doc),
        C.Comment("clang-format off"),
        C.InitArray(ctype, name, rows),
        C.Comment("clang-format on"),
        _count(count, name),
    ]


def _want_def() -> C.FuncDef:
    """``kat_want(i, isa)``: the per-ISA checksum of case i."""
    nth = C.Index(C.Name("kat_per_isas"), C.Name("j"))
    found = C.Logic(
        "&&",
        (
            C.Bin("==", C.Member(nth, "index"), C.Name("i")),
            C.Bin("==", C.Call("strcmp", (C.Member(nth, "isa"), C.Name("isa"))), C.Int(0)),
        ),
    )
    body = (
        C.For(
            "j",
            C.Bin("<", C.Name("j"), C.Name("kat_nper_isas")),
            (C.If(found, (C.Return(C.Member(nth, "want")),)),),
        ),
        C.Return(C.UInt(0)),
    )
    return C.FuncDef(
        "uint64_t",
        "kat_want",
        (C.Param("size_t", "i"), C.Param("const char", "*isa")),
        body,
        storage="static",
        doc=("The checksum of case i on the ISA isa, for an op whose answers are per ISA.",),
    )


def _run_case_def(plan: SelfTest, per_isa: bool, full: bool) -> C.FuncDef:
    """``kat_run_case(i, isa, why, size)``: 0 when case i passes on the active ISA, else 1
    with what went wrong in why."""
    c, op, j = C.Name("c"), C.Name("op"), C.Name("j")
    r = C.Index(C.Name("kat_r"), j)
    why, size = C.Name("why"), C.Name("size")
    name = C.Member(c, "name", arrow=True)

    def field(base: C.Expr, f: str) -> C.Member:
        return C.Member(base, f, arrow=True)

    def report(fmt: str, *args: C.Expr) -> C.Stmt:
        return C.CallStmt(C.Call("snprintf", (why, size, C.Str(fmt), name, *args)))

    outside = C.Logic(
        "||", (C.Bin("<", r, field(op, "out_lo")), C.Bin(">", r, field(op, "out_hi")))
    )
    body: list[C.Stmt] = [
        C.Decl("const kat_case", "*c", C.Unary("&", C.Index(C.Name("kat_cases"), C.Name("i")))),
        C.Decl("const kat_op", "*op", C.Unary("&", C.Index(C.Name("kat_ops"), field(c, "op")))),
        C.Decl("uint64_t", "want", field(c, "want")),
        C.Decl("uint64_t", "got"),
        C.CallStmt(C.Call("kat_fill", (C.Name("kat_a"), field(op, "len"), field(op, "lo_a"),
                                       field(op, "hi_a"), field(c, "kind_a"), field(c, "seed")))),
        C.CallStmt(C.Call("kat_fill", (C.Name("kat_b"), field(op, "len"), field(op, "lo_b"),
                                       field(op, "hi_b"), field(c, "kind_b"),
                                       C.Bin("+", field(c, "seed"), C.UInt(1))))),
        C.CallStmt(C.Call("memset", (C.Name("kat_r"), C.Int(0),
                                     C.Call("sizeof", (C.Name("kat_r"),))))),
        C.CallStmt(C.Apply(field(op, "run"), (C.Name("kat_r"), C.Name("kat_a"), C.Name("kat_b")))),
        C.For(
            "j",
            C.Bin("<", j, plan.n_macro),
            (
                C.If(
                    outside,
                    (
                        report("%s: coefficient %lu is %lld, outside [%lld, %lld]",
                               C.Cast("unsigned long", j), C.Cast("long long", r),
                               C.Cast("long long", field(op, "out_lo")),
                               C.Cast("long long", field(op, "out_hi"))),
                        C.Return(C.Int(1)),
                    ),
                ),
            ),
        ),
    ]  # fmt: skip
    if per_isa:
        body.append(
            C.If(
                field(op, "per_isa"),
                (C.Assign(C.Name("want"), C.Call("kat_want", (C.Name("i"), C.Name("isa")))),),
            )
        )
    else:
        body.append(C.ExprStmt(C.Cast("void", C.Name("isa"))))
    body += [
        C.Assign(C.Name("got"), C.Call("kat_checksum", (C.Name("kat_r"), field(op, "exact")))),
        C.If(C.Bin("==", C.Name("got"), C.Name("want")), (C.Return(C.Int(0)),)),
    ]
    if full:
        value = C.Call("kat_value", (r, field(op, "exact")))
        wanted = C.Index(field(c, "full"), j)
        body.append(
            C.If(
                C.Bin("!=", field(c, "full"), C.Name("NULL")),
                (
                    C.For(
                        "j",
                        C.Bin("<", j, plan.n_macro),
                        (
                            C.If(
                                C.Bin("!=", value, wanted),
                                (
                                    report("%s: coefficient %lu is %lld, want %lld",
                                           C.Cast("unsigned long", j), C.Cast("long long", value),
                                           C.Cast("long long", wanted)),
                                    C.Return(C.Int(1)),
                                ),
                            ),
                        ),
                    ),
                ),
            )
        )  # fmt: skip
    body += [
        report(
            "%s: checksum %016llx, want %016llx",
            C.Cast("unsigned long long", C.Name("got")),
            C.Cast("unsigned long long", C.Name("want")),
        ),
        C.Return(C.Int(1)),
    ]
    return C.FuncDef(
        "int",
        "kat_run_case",
        (
            C.Param("size_t", "i"),
            C.Param("const char", "*isa"),
            C.Param("char", "*why"),
            C.Param("size_t", "size"),
        ),
        tuple(body),
        storage="static",
        doc=(
            "Runs case i on the active ISA (isa): 0 if its output lies in the op's range and",
            "matches the known answer, else 1 with what differs written to why.",
        ),
    )


def _check_op_def() -> C.FuncDef:
    """``kat_check_op(op, isa)``: every case of an op, one line of output."""
    op_name = C.Member(C.Index(C.Name("kat_ops"), C.Name("op")), "name")
    isa = C.Name("isa")
    fails = C.Logic(
        "&&",
        (
            C.Bin("==", C.Member(C.Index(C.Name("kat_cases"), C.Name("i")), "op"), C.Name("op")),
            C.Bin(
                "!=",
                C.Call(
                    "kat_run_case",
                    (C.Name("i"), isa, C.Name("why"), C.Call("sizeof", (C.Name("why"),))),
                ),
                C.Int(0),
            ),
        ),
    )
    body = (
        C.Decl("char", "why", array=200),
        C.For(
            "i",
            C.Bin("<", C.Name("i"), C.Name("kat_ncases")),
            (
                C.If(
                    fails,
                    (
                        C.CallStmt(
                            C.Call("printf", (C.Str("%s %s: FAILED, %s\n"), isa, op_name,
                                              C.Name("why")))
                        ),
                        C.Return(C.Int(1)),
                    ),
                ),
            ),
        ),
        C.CallStmt(C.Call("printf", (C.Str("%s %s: ok\n"), isa, op_name))),
        C.Return(C.Int(0)),
    )  # fmt: skip
    return C.FuncDef(
        "int",
        "kat_check_op",
        (C.Param("size_t", "op"), C.Param("const char", "*isa")),
        body,
        storage="static",
        doc=("Every case of op on the active ISA (isa): prints one line, returns 1 on a failure.",),
    )


def _main_def(plan: SelfTest) -> C.FuncDef:
    """``main``: every ISA of the front end, every op; the exit status."""
    name, arch = C.Name("name"), C.Name("arch")
    nth = C.Index(C.Name("kat_isas"), C.Name("i"))
    elsewhere = C.Logic(
        "&&",
        (
            C.Bin("!=", arch, C.Name("NULL")),
            C.Bin("!=", C.Call("strcmp", (arch, C.Name("kat_arch"))), C.Int(0)),
        ),
    )
    skip = C.If(
        elsewhere,
        (
            C.CallStmt(
                C.Call(
                    "printf",
                    (C.Str("%s: skipped, %s code (this build is for %s)\n"), name, arch,
                     C.Name("kat_arch")),
                )
            ),
        ),
        (
            C.CallStmt(
                C.Call("printf", (C.Str("%s: skipped, not run by this CPU (or left out of the "
                                        "build)\n"), name))
            ),
        ),
    )  # fmt: skip
    run = C.For(
        "j",
        C.Bin("<", C.Name("j"), C.Name("kat_nops")),
        (C.OpAssign("|", C.Name("failed"), C.Call("kat_check_op", (C.Name("j"), name))),),
    )
    use = C.Call(f"{plan.stem}_use_isa", (name,))
    body = (
        C.Decl("int", "failed", C.Int(0)),
        C.For(
            "i",
            C.Bin("<", C.Name("i"), C.Name("kat_nisas")),
            (
                C.Decl("const char", "*name", C.Member(nth, "name")),
                C.Decl("const char", "*arch", C.Member(nth, "arch")),
                C.If(C.Bin("!=", use, C.Int(0)), (skip,), (run,)),
            ),
        ),
        C.Return(C.Name("failed")),
    )
    return C.FuncDef("int", "main", (), body)


def _comment_lines(plan: SelfTest, ring_lines: list[str]) -> list[str]:
    stem = plan.stem
    isas = ", ".join(name for name, _ in plan.isas)
    ops = ", ".join(op.name for op in plan.ops)
    lines = [
        *ring_lines,
        f"Self-test of the library {stem} (the front end {stem}.h over its ISA files), without "
        f"Python: for each ISA of the front end ({isas}) that {stem}_use_isa accepts here, each "
        f"entry point that computes ({ops}) runs on known inputs and its output is compared "
        "with the answer nttgen's exact evaluator computed at generation time. It prints one "
        'line per ISA and entry point ("c polymul: ok", or FAILED with the case and what '
        "differs) and one per ISA skipped, and exits with status 0 when every ISA that ran "
        "passed.",
        "Inputs: from fixed seeds (splitmix64), inside every ISA's input contract: random, all "
        "lo, all hi, and the two ends of the range alternating and at random (kat_fill).",
        "Answers: a checksum of each output (kat_checksum); polymul's random case in full.",
    ]
    if any(op.native_in or op.native_out for op in plan.ops):
        lines.append(
            "NTT domain: inputs go through from_standard before an entry point that reads the "
            "native order and outputs through to_standard after one that writes it, so every ISA "
            "is compared in the standard order; to_standard and from_standard themselves have "
            "one answer per ISA (its native order)."
        )
    residues = [op.name for op in plan.ops if not op.exact]
    if residues:
        lines.append(
            f"Residues: the outputs of {', '.join(residues)} are compared mod q, as canonical "
            f"residues (each ISA leaves its own representatives; the Montgomery factor beta = "
            f"2^{plan.beta_bits} is the same on every ISA), the others as they are (one "
            "representative per residue, or the values the order conversions move); every "
            "output must also lie in the range the front end documents."
        )
    else:
        lines.append(
            "Outputs: compared as they are (one representative per residue), and each must "
            "lie in the range the front end documents."
        )
    lines += [
        f"Build: make check, or ctest in a CMake build directory; by hand, after make: cc "
        f"-std=c99 {stem}_selftest.c lib{stem}.a -o {stem}_selftest",
    ]
    return lines


def selftest_source(plan: SelfTest, ring_lines: list[str]) -> str:
    """The C text of the self-test program of ``plan``; ``ring_lines`` open its comment (the
    file name, the command that regenerates it and the ring:
    :func:`~nttgen.emit.files.provenance_lines`)."""
    per_isa = any(op.per_isa for op in plan.ops)
    full = any(c.full is not None for c in plan.cases)
    length = max(op.length for op in plan.ops)
    u = C.Unit()
    u.items += opening_comment(_comment_lines(plan, ring_lines))
    u.items += [
        C.Directive(f'#include "{plan.stem}.h"'),
        C.Blank(),
        C.Directive("#include <stddef.h>"),
        C.Directive("#include <stdint.h>"),
        C.Directive("#include <stdio.h>"),
        C.Directive("#include <string.h>"),
        C.Blank(),
        C.ShortComment("The architecture this program is built for."),
    ]
    arches = (
        ("defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)",
         "x86_64"),
        ("defined(__aarch64__) || defined(_M_ARM64)", "aarch64"),
        ("defined(__riscv)", "riscv64"),
    )  # fmt: skip
    for k, (cond, arch) in enumerate(arches):
        u.items += [
            C.Directive(f"{'#if' if k == 0 else '#elif'} {cond}"),
            C.Global("const char", "kat_arch[]", init=C.Str(arch)),
        ]
    u.items += [
        C.Directive("#else"),
        C.Global("const char", "kat_arch[]", init=C.Str("another architecture")),
        C.Directive("#endif"),
        C.Blank(),
        *_typedefs(plan, per_isa),
        C.Blank(),
        C.ShortComment("The inputs a and b of the entry point under test, and its output r."),
        C.Global(plan.lane, f"kat_a[{length}]"),
        C.Global(plan.lane, f"kat_b[{length}]"),
        C.Global(plan.lane, f"kat_r[{plan.n}]"),
    ]
    for fn in (next_def(), fill_def(plan), value_def(plan), checksum_def(plan)):
        u.items += [C.Blank(), fn]
    for op in plan.ops:
        u.items += [C.Blank(), _runner(plan, op)]
    u.items += [C.Blank(), *_tables(plan)]
    if per_isa:
        u.items += [C.Blank(), _want_def()]
    u.items += [C.Blank(), _run_case_def(plan, per_isa, full), C.Blank(), _check_op_def()]
    u.items += [C.Blank(), _main_def(plan)]
    return u.render()


def selftest_name(stem: str) -> str:
    """The file name of the self-test of the front end ``stem``."""
    return f"{stem}_selftest.c"


def selftest_files(
    front: GeneratedFiles, isa_files: Sequence[GeneratedFiles], portable: CFileWriter
) -> BuildFiles:
    """``<stem>_selftest.c`` for the front end ``front`` over the ISA files ``isa_files``, with
    the answers computed over ``portable``, the writer of its portable C (see
    :func:`selftest_plan`), as a one-file set."""
    plan = selftest_plan(front, isa_files, portable)
    name = selftest_name(front.stem)
    ring_lines = provenance_lines(name, front.command, portable.ring)
    return BuildFiles(((name, selftest_source(plan, ring_lines)),))
