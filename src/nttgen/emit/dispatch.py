"""The dispatching front end of a ring's library: ISA-neutral entry points over the ISA files.

``nttgen_<ring>.h/.c`` declare the same functions as every ``nttgen_<ring>_<isa>`` file, without
the ISA in their names. On the first call the front end picks the best ISA compiled in that the
CPU runs (AVX-512 > AVX2 > portable C): CPUID says what the CPU has, XCR0 (read with ``xgetbv``)
whether the OS saves the registers those instructions use. It keeps that choice, so data left in
an ISA's native NTT order is always read back by the same ISA. The environment variable
``NTTGEN_ISA`` (a comma-separated list of ISA names, as for the Python API) restricts the choice,
and ``nttgen_<ring>_use_isa`` forces one: both exist for testing and benchmarking.

The x86 backends are compiled in only on x86 targets (``__x86_64__``/``__i386__``) with a
GNU-compatible compiler (for ``cpuid.h``), NEON only on AArch64 (``__aarch64__``, where it needs
no detection), RVV only when the compiler targets the V extension (``__riscv_vector``); there
the front end reads VLEN (``vsetvlmax``) and takes the code specialised for exactly that VLEN,
else the VLEN-agnostic code. Elsewhere the front end is the portable C.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..dsl.ir import Function, ScalarParam
from ..programs.kernels import OP_INFO
from ..rings import Ring
from ..version import __version__
from . import c_ast as C
from .c_emit import CEmitter
from .files import (
    FileWriter,
    GeneratedFiles,
    _fmt_range,
    header_close,
    header_open,
    provenance_lines,
)


def dispatch_stem(ring: Ring) -> str:
    """The file stem and symbol prefix of a ring's front end: nttgen_<ring>."""
    return f"nttgen_{ring.c_name}"


# printed before aborting when NTTGEN_ISA allows nothing that runs here (a C string literal)
MESSAGE = '"%s: NTTGEN_ISA=%s names no ISA compiled in that runs here\\n"'

# entry points that only ISAs with a permuted NTT-domain order have
ORDER_ONLY = ("to_standard", "from_standard")


def _params(w: FileWriter, fn: Function) -> tuple[C.Param, ...]:
    """The C parameters of an entry point as a writer emits them."""
    return CEmitter(fn, w.isa, w.c_name, w.table_name).params()


def _if_and(indent: str, left: str, right: str) -> list[str]:
    """``if (left && right) {`` at ``indent``: on one line if it fits, else broken after the
    ``&&`` with the second operand aligned under the first, as clang-format does."""
    one = f"{indent}if ({left} && {right}) {{"
    if len(one) <= C.COLUMNS:
        return [one]
    return [f"{indent}if ({left} &&", f"{indent}    {right}) {{"]


def _hull(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _meet(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return max(r[0] for r in ranges), min(r[1] for r in ranges)


class DispatchWriter:
    """Builds the front end over the per-ISA writers of one ring (portable C among them)."""

    def __init__(self, writers: Sequence[FileWriter], command: str) -> None:
        names = [w.isa.name for w in writers]
        if "c" not in names:
            raise ValueError("the dispatching front end needs the portable C among its ISAs")
        # best first: wider vectors before narrower ones, portable C last
        self.writers = sorted(writers, key=lambda w: (w.isa.name == "c", -w.ks.config.lanes))
        self.ring = writers[0].ks.ring
        self.command = command
        self.stem = dispatch_stem(self.ring)
        self.portable = next(w for w in writers if w.isa.name == "c")
        # every ISA has the same entry points, except that ISAs whose NTT domain is in the
        # standard order have no to/from_standard (those are then no-ops)
        richest = max(self.writers, key=lambda w: len(w.entry_points()))
        self.entries = [name for name, _ in richest.entry_points()]
        self.reference = {name: fn for name, fn in richest.entry_points()}
        # the front end always has the order conversions (no-ops where no ISA needs them)
        for name in ORDER_ONLY:
            if name not in self.entries:
                self.entries.insert(self.entries.index("polymul"), name)
        for w in self.writers:
            theirs = dict(w.entry_points())
            for name in self.entries:
                if name not in theirs:
                    if name not in ORDER_ONLY or not w.ks.order.is_identity:
                        raise ValueError(f"{w.isa.name} has no {name}")
                elif _params(w, theirs[name]) != _params(richest, self.reference[name]):
                    raise ValueError(f"{w.isa.name} {name} has other parameters")
        self.richest = richest

    @property
    def x86(self) -> list[FileWriter]:
        """The writers of ISAs that need x86 runtime detection."""
        return [w for w in self.writers if w.isa.cpuid7_ebx]

    @property
    def neon(self) -> list[FileWriter]:
        """The writers of AArch64 ISAs (Advanced SIMD is part of every AArch64 core: compiled
        in on AArch64, no runtime detection needed)."""
        return [w for w in self.writers if w.isa.arch == "aarch64"]

    @property
    def rvv(self) -> list[FileWriter]:
        """The writers of RISC-V Vector ISAs (compiled in when the compiler targets the V
        extension; the VLEN-specialised ones picked only on a core of exactly their VLEN)."""
        return [w for w in self.writers if w.isa.arch == "riscv64"]

    def _groups(self) -> list[tuple[str, list[FileWriter]]]:
        """(guard macro, writers) of every architecture's ISAs present, best first."""
        S = self.stem.upper()
        groups = [(f"{S}_X86", self.x86), (f"{S}_NEON", self.neon), (f"{S}_RVV", self.rvv)]
        return [(g, ws) for g, ws in groups if ws]

    def _guard(self, w: FileWriter) -> str | None:
        """The macro under which an ISA is compiled in (None: always, the portable C)."""
        if w.isa.cpuid7_ebx:
            return f"{self.stem.upper()}_X86"
        if w.isa.arch == "aarch64":
            return f"{self.stem.upper()}_NEON"
        if w.isa.arch == "riscv64":
            return f"{self.stem.upper()}_RVV"
        if w.isa.arch is not None:
            raise ValueError(f"the front end cannot detect {w.isa.name} ({w.isa.arch}) yet")
        return None

    def _name(self, suffix: str) -> str:
        return f"{self.stem}_{suffix}"

    def _entry_params(self, name: str) -> tuple[C.Param, ...]:
        """The C parameters of an entry point (an order conversion no ISA has: the array)."""
        if name in self.reference:
            return _params(self.richest, self.reference[name])
        return (C.Param(self.ring.lane.c_type, "a", str(self.ring.n)),)

    # ----------------------------------------------------------------- documentation
    def _header_lines(self, kind: str) -> list[str]:
        isas = ", ".join(w.isa.name for w in self.writers)
        lines = provenance_lines(f"{self.stem}.{kind}", self.command, self.ring)
        lines += [
            f"ISAs:   {isas} (best first); the first call picks the best one this CPU and OS",
            "        run (CPUID, and XCR0 for the saved register state) and keeps it.",
            "        NTTGEN_ISA=name[,name...] restricts the choice (the program aborts with a",
            "        message if none of them runs here); <prefix>_use_isa forces one.",
            "Threads: the first call stores the choice without a lock; call <prefix>_isa() once",
            "        before sharing the library between threads.",
            "Build:  compile each nttgen_<ring>_<isa>.c with the flags its .json lists (e.g.",
            "        -mavx2), and this file with none; the x86 ISAs are compiled in on x86, NEON",
            "        on AArch64, RVV when compiling for the V extension (-march=rv64gcv: then",
            "        compile this file with it too), the portable C everywhere.",
            "Order:  ntt leaves the NTT domain in the active ISA's native order; to_standard and",
            "        from_standard convert. Do not switch ISAs while such data is in use.",
        ]
        return lines

    def _function_doc(self, name: str) -> tuple[str, ...]:
        """The portable C's documentation with ranges that hold for every ISA: inputs the
        narrowest of the ISAs' contracts, outputs the widest."""
        info = OP_INFO[name]
        lines = [info.summary, "", f"Input:  {info.input}", f"Output: {info.output}"]
        if name in ORDER_ONLY:
            lines.append("A no-op when the active ISA keeps the NTT domain in the standard order.")
        if name not in self.reference:
            return (*lines, f"a[{self.ring.n}]: unchanged (every ISA here keeps that order)")
        fn = self.reference[name]
        contracts = [w.ks.functions[name].contract for w in self.writers if name in w.ks.functions]
        for p in fn.buffers:
            rng = []
            if p.name in fn.contract.inputs:
                r = _meet([c.inputs[p.name] for c in contracts])
                rng.append(f"on entry in {_fmt_range(r)} (every ISA)")
            if p.name in fn.contract.outputs:
                r = _hull([c.outputs[p.name] for c in contracts])
                rng.append(f"on exit in {_fmt_range(r)} (any ISA)")
            size = f"{p.length} x k" if p.per_param else f"{p.length}"
            lines.append(f"{p.name}[{size}]: {', '.join(rng)}")
        for p in fn.params:
            if isinstance(p, ScalarParam):
                lines.append(f"{p.name}: {p.doc} (public; loops depend on it, never on data)")
        return tuple(lines)

    # ----------------------------------------------------------------- files
    def header(self) -> str:
        """The .h text: the ISA-neutral prototypes and the two ISA controls."""
        u = C.Unit()
        u.items.append(C.BlockComment(tuple(self._header_lines("h"))))
        u.items += header_open(self.stem, self.ring.n, self.ring.q)
        u.items += [
            C.Blank(),
            C.BlockComment(("The name of the ISA in use (picks it on the first call).",)),
            C.Directive(f"const char *{self._name('isa')}(void);"),
            C.Blank(),
            C.BlockComment(
                (
                    "Forces the ISA called name for every later call: 0 on success, -1 (and no",
                    "change) if it is not compiled in or this CPU or OS cannot run it.",
                )
            ),
            C.Directive(f"int {self._name('use_isa')}(const char *name);"),
        ]
        for name in self.entries:
            u.items += [
                C.Blank(),
                C.FuncDef(
                    "void",
                    self._name(name),
                    self._entry_params(name),
                    None,
                    doc=self._function_doc(name),
                ),
            ]
        u.items += header_close(self.stem)
        return u.render()

    def _param_text(self, name: str) -> tuple[str, str]:
        """(the parameter list, the argument list) of an entry point, as C text."""
        params = self._entry_params(name)
        decl = ", ".join(
            f"{p.ctype} {p.name}" + (f"[{p.array}]" if p.array else "") for p in params
        )
        args = ", ".join(p.name.lstrip("*") for p in params)
        return decl, args

    def source(self) -> str:
        """The .c text: the table of implementations, detection, selection and the wrappers."""
        s, S = self.stem, self.stem.upper()
        x86 = self.x86
        out: list[str] = [f'#include "{s}.h"', "", "#include <stdio.h>", "#include <stdlib.h>"]
        out += ["#include <string.h>", "", f'#include "{self.portable.stem}.h"']
        if x86:
            out += [
                "",
                "#if (defined(__x86_64__) || defined(__i386__)) && "
                "(defined(__GNUC__) || defined(__clang__))",
                f"#define {S}_X86 1",
                "#include <cpuid.h>",
                *(f'#include "{w.stem}.h"' for w in x86),
                "#endif",
            ]
        if self.neon:
            out += [
                "",
                "#if defined(__aarch64__) && defined(__ARM_NEON)",
                f"#define {S}_NEON 1",
                *(f'#include "{w.stem}.h"' for w in self.neon),
                "#endif",
            ]
        if self.rvv:
            out += [
                "",
                "#if defined(__riscv) && defined(__riscv_vector)",
                f"#define {S}_RVV 1",
                "#include <riscv_vector.h>",
                *(f'#include "{w.stem}.h"' for w in self.rvv),
                "#endif",
            ]
        out += ["", "/* One ISA's entry points. */", "typedef struct {", "    const char *name;"]
        for name in self.entries:
            decl, _ = self._param_text(name)
            out.append(f"    void (*{name})({decl});")
        out += [f"}} {s}_impl;", ""]
        groups = self._groups()
        always = len(self.writers) - sum(len(ws) for _, ws in groups)
        out += ["/* How many ISAs are compiled in. */"]
        for i, (guard, ws) in enumerate(groups):
            out += [
                f"#{'el' if i else ''}if defined({guard})",
                f"#define {S}_ISAS {always + len(ws)}",
            ]
        if groups:
            out += ["#else", f"#define {S}_ISAS {always}", "#endif"]
        else:
            out += [f"#define {S}_ISAS {always}"]
        out += [
            "",
            "/* Every ISA compiled in, best first. */",
            f"static const {s}_impl {s}_impls[] = {{",
        ]
        for w in self.writers:
            guard = self._guard(w)
            if guard:
                out.append(f"#ifdef {guard}")
            have = w.ks.functions
            fields = [f'"{w.isa.name}"']
            fields += [f"{w.stem}_{name}" if name in have else "NULL" for name in self.entries]
            out += C.bin_pack("    {", fields, "},")
            if guard:
                out.append("#endif")
        out += ["};", "", f"static const {s}_impl *{s}_active;", ""]
        out += self._runs_here(x86)
        out += self._select()
        for name in self.entries:
            decl, args = self._param_text(name)
            out += ["", *C.bin_pack(f"void {s}_{name}(", decl.split(", "), ") {")]
            if name not in self.reference:
                out += [f"    (void){args}; /* every ISA here keeps the standard order */"]
            elif name in ORDER_ONLY:
                out += [
                    f"    const {s}_impl *impl = {s}_pick();",
                    f"    if (impl->{name} != NULL) {{ /* NULL: standard order already */",
                    f"        impl->{name}({args});",
                    "    }",
                ]
            else:
                out.append(f"    {s}_pick()->{name}({args});")
            out.append("}")
        u = C.Unit()
        u.items.append(C.BlockComment(tuple(self._header_lines("c"))))
        u.items += [C.Directive(line) for line in out]
        return u.render()

    def _runs_here(self, x86: list[FileWriter]) -> list[str]:
        """``<prefix>_runs_here(name)``: whether this CPU and OS run an ISA."""
        s, S = self.stem, self.stem.upper()
        out = [
            "/* Whether this CPU has the ISA's instructions and the OS saves its registers. */",
            f"static int {s}_runs_here(const char *name) {{",
        ]
        if x86:
            out += [
                f"#ifdef {S}_X86",
                "    unsigned int eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;",
                "    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) {",
                '        return strcmp(name, "c") == 0; /* no OSXSAVE: no xgetbv, no AVX */',
                "    }",
                '    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));',
                "    (void)xcr0_hi;",
                "    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {",
                "        ebx = 0;",
                "    }",
            ]
            for w in x86:
                ebx, xcr0 = w.isa.cpuid7_ebx, w.isa.xcr0
                out += [
                    f'    if (strcmp(name, "{w.isa.name}") == 0) {{',
                    f"        return (ebx & 0x{ebx:x}u) == 0x{ebx:x}u && "
                    f"(xcr0_lo & 0x{xcr0:x}u) == 0x{xcr0:x}u;",
                    "    }",
                ]
            out.append("#endif")
        if self.neon:
            out.append(f"#ifdef {S}_NEON")
            for w in self.neon:
                out += [
                    f'    if (strcmp(name, "{w.isa.name}") == 0) {{',
                    "        return 1; /* part of every AArch64 core */",
                    "    }",
                ]
            out.append("#endif")
        if self.rvv:
            out += [
                f"#ifdef {S}_RVV",
                "    size_t vlen = __riscv_vsetvlmax_e8m1() * 8; /* VLEN in bits */",
            ]
            for w in self.rvv:
                need = w.isa.min_vlen  # type: ignore[attr-defined]
                out += [
                    f'    if (strcmp(name, "{w.isa.name}") == 0) {{',
                    f"        return vlen >= {need};",
                    "    }",
                ]
            out += ["    (void)vlen;", "#endif"]
        out += ['    return strcmp(name, "c") == 0;', "}", ""]
        out += self._suits()
        return out

    def _suits(self) -> list[str]:
        """``<prefix>_suits(name)``: whether the automatic choice may take an ISA that runs
        here: code specialised for one RISC-V VLEN only on a core of exactly that VLEN (on a
        longer one it would leave lanes idle, and the VLEN-agnostic code uses them)."""
        s, S = self.stem, self.stem.upper()
        out = [
            "/* Whether the automatic choice takes an ISA that runs here (see the header). */",
            f"static int {s}_suits(const char *name) {{",
        ]
        fixed = [w for w in self.rvv if w.isa.vlen]
        if fixed:
            out += [f"#ifdef {S}_RVV", "    size_t vlen = __riscv_vsetvlmax_e8m1() * 8;"]
            for w in fixed:
                out += [
                    f'    if (strcmp(name, "{w.isa.name}") == 0) {{',
                    f"        return vlen == {w.isa.vlen};",  # type: ignore[attr-defined]
                    "    }",
                ]
            out += ["    (void)vlen;", "#endif"]
        out += ["    (void)name;", "    return 1;", "}", ""]
        return out

    def _select(self) -> list[str]:
        s, S = self.stem, self.stem.upper()
        return [
            "/* Whether name is one of the comma-separated names in list. */",
            f"static int {s}_listed(const char *list, const char *name) {{",
            "    size_t len = strlen(name);",
            "    while (*list != '\\0') {",
            '        size_t k = strcspn(list, ",");',
            "        if (k == len && strncmp(list, name, len) == 0) {",
            "            return 1;",
            "        }",
            "        list += k;",
            "        list += *list == ',';",
            "    }",
            "    return 0;",
            "}",
            "",
            "/* The active ISA: chosen once, on the first call (see the header). */",
            f"static const {s}_impl *{s}_pick(void) {{",
            f"    if ({s}_active == NULL) {{",
            '        const char *only = getenv("NTTGEN_ISA");',
            "        int any = only == NULL || *only == '\\0';",
            f"        for (size_t i = 0; i < {S}_ISAS; ++i) {{",
            f"            const char *name = {s}_impls[i].name;",
            "            int wanted; /* listed by NTTGEN_ISA, or else suited to this CPU */",
            "            if (any) {",
            f"                wanted = {s}_suits(name);",
            "            } else {",
            f"                wanted = {s}_listed(only, name);",
            "            }",
            f"            if (wanted && {s}_runs_here(name)) {{",
            f"                {s}_active = &{s}_impls[i];",
            "                break;",
            "            }",
            "        }",
            f"        if ({s}_active == NULL) {{",
            f"            fprintf(stderr, {MESSAGE},",
            f'                    "{s}", only);',
            "            abort();",
            "        }",
            "    }",
            f"    return {s}_active;",
            "}",
            "",
            f"const char *{s}_isa(void) {{",
            f"    return {s}_pick()->name;",
            "}",
            "",
            f"int {s}_use_isa(const char *name) {{",
            f"    for (size_t i = 0; i < {S}_ISAS; ++i) {{",
            *_if_and("        ", f"strcmp({s}_impls[i].name, name) == 0", f"{s}_runs_here(name)"),
            f"            {s}_active = &{s}_impls[i];",
            "            return 0;",
            "        }",
            "    }",
            "    return -1;",
            "}",
        ]

    def files(self) -> GeneratedFiles:
        """The front end's texts (the manifest lists the ISAs and their files)."""
        manifest = {
            "generator": {"name": "nttgen", "version": __version__, "command": self.command},
            "ring": self.ring.summary(),
            "isas": [
                {"name": w.isa.name, "stem": w.stem, "cflags": list(w.isa.cflags)}
                for w in self.writers
            ],
            "functions": [self._name(n) for n in ("isa", "use_isa", *self.entries)],
        }
        text = json.dumps(manifest, indent=2) + "\n"
        return GeneratedFiles(self.stem, self.header(), self.source(), text, self.command)
