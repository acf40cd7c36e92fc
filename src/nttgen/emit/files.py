"""Generated files: the .h/.c pair and the JSON manifest of one ring for one ISA.

Everything here is a pure function of the ring, the ISA and the build configuration: no dates,
paths or timings, so regeneration is byte-identical. Each file names the generator version and
the exact command that regenerates it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..dsl.ir import Buffer, Function, ScalarParam, Table
from ..interp.cost import count_ops
from ..programs.kernels import OP_INFO, KernelSet
from ..version import __version__
from . import c_ast as C
from .c_emit import ALIGN_MACRO, DEBUG_MACRO, NOINLINE_MACRO, CEmitter
from .isa.base import EmitContext, Isa

OP_ORDER = ("load", "store", "add", "sub", "mullo", "mulhi", "sra", "montmul", "montmul_var",
            "barrett", "cond_add_q", "shuffle", "const")  # fmt: skip


@dataclass
class GeneratedFiles:
    """The text of the generated files, by file name."""

    stem: str
    header: str
    source: str
    manifest: str

    def items(self) -> list[tuple[str, str]]:
        """(file name, text) pairs."""
        return [
            (f"{self.stem}.h", self.header),
            (f"{self.stem}.c", self.source),
            (f"{self.stem}.json", self.manifest),
        ]


def _gnu_attribute_macro(macro: str, attribute: str) -> list[C.Top]:
    """``#define macro __attribute__((attribute))`` for gcc and clang, empty for other
    compilers (the attributes only help speed), unless the includer defined it already."""
    name = macro.split("(")[0]
    return [
        C.Directive(f"#ifndef {name}"),
        C.Directive("#if defined(__GNUC__) || defined(__clang__)"),
        C.Directive(f"#define {macro} __attribute__(({attribute}))"),
        C.Directive("#else"),
        C.Directive(f"#define {macro}"),
        C.Directive("#endif"),
        C.Directive("#endif"),
    ]


def header_open(stem: str, n: int, q: int) -> list[C.Top]:
    """The opening of a generated header: include guard, the fixed-width types, the ring's
    ``<STEM>_N``/``<STEM>_Q`` and the C++ linkage block."""
    macro = stem.upper()
    return [
        C.Directive(f"#ifndef {macro}_H"),
        C.Directive(f"#define {macro}_H"),
        C.Blank(),
        C.Directive("#include <stddef.h>"),
        C.Directive("#include <stdint.h>"),
        C.Blank(),
        C.Directive(f"#define {macro}_N {n}"),
        C.Directive(f"#define {macro}_Q {q}"),
        C.Blank(),
        C.Directive("#ifdef __cplusplus"),
        C.Directive('extern "C" {'),
        C.Directive("#endif"),
    ]


def header_close(stem: str) -> list[C.Top]:
    """The end of a header opened by :func:`header_open`."""
    return [
        C.Blank(),
        C.Directive("#ifdef __cplusplus"),
        C.Directive("}"),
        C.Directive("#endif"),
        C.Blank(),
        C.Directive(f"#endif // {stem.upper()}_H"),
    ]


def _calls(node: object) -> set[str]:
    """Names of the functions called anywhere inside a C AST node."""
    out: set[str] = set()
    if isinstance(node, C.Call):
        out.add(node.func)
    if isinstance(node, tuple | list):
        for x in node:
            out |= _calls(x)
    elif hasattr(node, "__dataclass_fields__"):
        for f in node.__dataclass_fields__:  # type: ignore[attr-defined]
            out |= _calls(getattr(node, f))
    return out


def _used_helpers(helpers: list[C.Top], kernels: list[C.Top]) -> list[C.Top]:
    """The helpers the kernels call, directly or through other helpers, in their order (an
    unused static function would be a warning, and -Werror is the standard here)."""
    by_name = {h.name: h for h in helpers if isinstance(h, C.FuncDef)}
    used: set[str] = set()
    todo = [c for c in _calls(kernels) if c in by_name]
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo += [c for c in _calls(by_name[name]) if c in by_name]
    return [h for h in helpers if not isinstance(h, C.FuncDef) or h.name in used]


def prefix_of(ks: KernelSet, isa_name: str) -> str:
    """The prefix of every external symbol: nttgen_<ring>_<isa>."""
    return f"nttgen_{ks.ring.c_name}_{isa_name}"


def _fmt_range(r: tuple[int, int]) -> str:
    return f"[{r[0]}, {r[1]}]"


def _ops_text(counts: dict[str, int]) -> str:
    parts = [f"{k} {counts[k]}" for k in OP_ORDER if counts.get(k)]
    return ", ".join(parts)


class FileWriter:
    """Builds the generated files of one kernel set for one ISA."""

    def __init__(
        self, ks: KernelSet, isa_cls: type[Isa], command: str, prefix: str | None = None
    ) -> None:
        self.ks = ks
        self.prefix = prefix or prefix_of(ks, isa_cls.name)
        self.isa = isa_cls(EmitContext(ks.arith, self.prefix, ks.config.shuffles))
        self.command = command
        self.stem = self.prefix
        self.costs = {name: self._costs(fn) for name, fn in ks.functions.items()}
        # Identical tables (e.g. the roots basemul and basemul_acc share) are emitted once.
        self._tables: dict[tuple[int, ...], str] = {}
        self._unique: list[tuple[Function, Table]] = []
        for fn in ks.functions.values():
            for t in fn.tables:
                if t.values not in self._tables:
                    self._tables[t.values] = f"{self.prefix}_{fn.name}_{t.name}"
                    self._unique.append((fn, t))

    def _costs(self, fn: Function) -> dict[str, int]:
        scalars = {p.name: 1 for p in fn.params if isinstance(p, ScalarParam)}
        return dict(count_ops(fn, scalars))

    def entry_points(self) -> list[tuple[str, Function]]:
        """The exported functions (internal helpers are static and undocumented in the .h)."""
        return [(n, f) for n, f in self.ks.functions.items() if not f.internal]

    def c_name(self, fn: Function) -> str:
        """The C name of an entry point."""
        return f"{self.prefix}_{fn.name}"

    def table_name(self, fn: Function, table: Table) -> str:
        """The C name of a constant table (shared by every function with the same contents)."""
        del fn
        return self._tables[table.values]

    # ----------------------------------------------------------------- documentation
    def _header_lines(self, kind: str) -> list[str]:
        ks, ring, ar = self.ks, self.ks.ring, self.ks.arith
        lines = [
            f"{self.stem}.{kind}: generated by nttgen {__version__}. Do not edit; regenerate with",
            f"  {self.command}",
            "",
            f"Ring:   Z_q[x]/({ring.modulus_poly}), n = {ring.n}, q = {ring.q}"
            + (f" (preset {ring.name})" if ring.preset else ""),
        ]
        if ring.description:
            lines.append(f"        {ring.description}")
        lines += [
            f"NTT:    depth {ring.depth}, factors of degree {ring.base_degree}, root r = "
            f"{ring.root} of order {2 << ring.depth}",
            f"Order:  standard NTT order: {ring.order_doc}",
        ]
        if ks.order.is_identity:
            lines.append("        this ISA keeps the NTT domain in the standard order")
        else:
            lines.append(
                f"        this ISA's native order: address bit p holds index bit perm[p], perm = "
                f"{list(ks.order.perm)}"
            )
        lines += [
            f"ISA:    {self.isa.title}; {ks.config.lanes} lane(s) of {ring.lane.bits} bits "
            "per value",
            f"Lanes:  beta = 2^{ring.lane.bits}; q^-1 mod beta = {ar.qinv}; beta mod q = "
            f"{ar.mont}; Barrett v = {ar.barrett_v}, shift {ar.lane.bits + ar.barrett_k}",
            "Ranges: inclusive [lo, hi], proven by nttgen's interval analysis for every input in",
            '        the stated input range. "times beta^-1": the Montgomery factor.',
            "",
            "Functions (input range -> output range; executed ops per call, vector ops):",
        ]
        for name, fn in self.entry_points():
            lines.append(f"  {self.c_name(fn)}: {OP_INFO[name].summary}")
            lines.append(f"      {self._contract_text(fn)}")
            lines.append(f"      ops: {_ops_text(self.costs[name])}")
            if self.costs[name].get("reductions"):
                lines.append(f"      coefficient reductions: {self.costs[name]['reductions']}")
        return lines

    def _contract_text(self, fn: Function) -> str:
        ins = [f"{k} in {_fmt_range(v)}" for k, v in fn.contract.inputs.items()]
        outs = [f"{k} in {_fmt_range(v)}" for k, v in fn.contract.outputs.items()]
        return f"{', '.join(ins)} -> {', '.join(outs)}"

    def _function_doc(self, name: str, fn: Function) -> tuple[str, ...]:
        info = OP_INFO[name]
        lines = [info.summary, "", f"Input:  {info.input}", f"Output: {info.output}"]
        for p in fn.params:
            if isinstance(p, ScalarParam):
                lines.append(f"{p.name}: {p.doc} (public; loops depend on it, never on data)")
            elif isinstance(p, Buffer):
                rng = []
                if p.name in fn.contract.inputs:
                    rng.append(f"on entry in {_fmt_range(fn.contract.inputs[p.name])}")
                if p.name in fn.contract.outputs:
                    rng.append(f"on exit in {_fmt_range(fn.contract.outputs[p.name])}")
                size = f"{p.length} x k" if p.per_param else f"{p.length}"
                lines.append(f"{p.name}[{size}]: {', '.join(rng)}")
        lines.append(f"Ops per call: {_ops_text(self.costs[name])}")
        return tuple(lines)

    # ----------------------------------------------------------------- files
    def header(self) -> str:
        """The .h text: prototypes with their contracts."""
        u = C.Unit()
        u.items.append(C.BlockComment(tuple(self._header_lines("h"))))
        u.items += header_open(self.stem, self.ks.ring.n, self.ks.ring.q)
        for name, fn in self.entry_points():
            emitter = CEmitter(fn, self.isa, self.c_name, self.table_name)
            u.items.append(C.Blank())
            u.items.append(
                C.FuncDef(
                    "void",
                    self.c_name(fn),
                    emitter.params(),
                    None,
                    doc=self._function_doc(name, fn),
                )
            )
        u.items += header_close(self.stem)
        return u.render()

    def source(self) -> str:
        """The .c text: helpers, tables and kernels."""
        u = C.Unit()
        u.items.append(C.BlockComment(tuple(self._header_lines("c"))))
        u.items += [
            C.Directive(f'#include "{self.stem}.h"'),
            C.Blank(),
            C.Directive("#include <stddef.h>"),
            C.Directive("#include <stdint.h>"),
        ]
        for inc in getattr(self.isa, "includes", ()):
            u.items.append(C.Directive(f"#include <{inc}>"))
        u.items += [
            C.Blank(),
            *_gnu_attribute_macro(f"{ALIGN_MACRO}(n)", "aligned(n)"),
            *_gnu_attribute_macro(NOINLINE_MACRO, "noinline"),
        ]
        u.items += [C.Blank(), *self._debug_helper()]
        kernels: list[C.Top] = []
        for name, fn in self.ks.functions.items():
            kernels.append(C.Blank())
            kernels.append(
                CEmitter(
                    fn, self.isa, self.c_name, self.table_name, self._function_doc(name, fn)
                ).emit()
            )
        for h in _used_helpers(self.isa.helpers(), kernels):
            u.items += [C.Blank(), h]
        per_line = max(self.ks.config.lanes, 8 if self.ks.ring.lane.bits == 16 else 6)
        for fn, t in self._unique:
            u.items.append(C.Blank())
            u.items.append(
                C.ArrayDef(
                    fn.lane.c_type,
                    self.table_name(fn, t),
                    t.values,
                    align=f"{ALIGN_MACRO}(64)",
                    per_line=per_line,
                    notes=t.notes,
                    doc=(t.doc,),
                )
            )
        u.items += kernels
        return u.render()

    def _debug_helper(self) -> list[C.Top]:
        """The range assertion debug builds call at every entry and exit (not constant time:
        it exists to catch contract violations while developing)."""
        elem = self.ks.ring.lane.c_type
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
            self.isa.helper("assert_range"),
            (
                C.Param(f"const {elem}", "*p"),
                C.Param("size_t", "len"),
                C.Param("int64_t", "lo"),
                C.Param("int64_t", "hi"),
            ),
            body,
            storage="static",
            doc=(
                f"{DEBUG_MACRO} builds only: asserts that p[0..len) lies in [lo, hi], the",
                "contract the interval analysis proved. Not constant time; never in release.",
            ),
        )
        return [
            C.Directive(f"#ifdef {DEBUG_MACRO}"),
            C.Directive("#include <assert.h>"),
            C.Blank(),
            fn,
            C.Directive("#endif"),
        ]

    def manifest(self) -> str:
        """The JSON manifest the Python bindings and docs are built from."""
        ks = self.ks
        funcs: dict[str, object] = {}
        for name, fn in self.entry_points():
            params = []
            for p in fn.params:
                if isinstance(p, ScalarParam):
                    params.append(
                        {"name": p.name, "kind": "size", "min": p.min_value, "doc": p.doc}
                    )
                else:
                    params.append(
                        {
                            "name": p.name,
                            "kind": "array",
                            "role": p.role,
                            "elem": p.lane.c_type,
                            "length": p.length,
                            "times": p.per_param.name if p.per_param else None,
                            "in_range": list(fn.contract.inputs[p.name])
                            if p.name in fn.contract.inputs
                            else None,
                            "out_range": list(fn.contract.outputs[p.name])
                            if p.name in fn.contract.outputs
                            else None,
                        }
                    )
            info = OP_INFO[name]
            funcs[name] = {
                "c_name": self.c_name(fn),
                "summary": info.summary,
                "input": info.input,
                "output": info.output,
                "params": params,
                "ops": dict(sorted(self.costs[name].items())),
            }
        doc = {
            "generator": {"name": "nttgen", "version": __version__, "command": self.command},
            "ring": ks.ring.summary(),
            "isa": {
                "name": self.isa.name,
                "title": self.isa.title,
                "lanes": ks.config.lanes,
                "cflags": list(self.isa.cflags),
                "features": list(self.isa.features),
            },
            "arith": ks.arith.summary(),
            "native_order": list(ks.order.perm),
            "native_order_is_standard": ks.order.is_identity,
            "functions": funcs,
        }
        return json.dumps(doc, indent=2, sort_keys=False) + "\n"

    def files(self) -> GeneratedFiles:
        """All generated texts."""
        return GeneratedFiles(self.stem, self.header(), self.source(), self.manifest())
