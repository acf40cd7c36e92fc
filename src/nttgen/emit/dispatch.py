"""The dispatching front end of a ring's library: ISA-neutral entry points over the ISA files.

``nttgen_<ring>.h/.c`` declare the same functions as every ``nttgen_<ring>_<isa>`` file, without
the ISA in their names. On the first call (or ``<prefix>_init``) the front end picks the best ISA
compiled in that the CPU runs (AVX-512 > AVX2 > portable C): CPUID says what the CPU has, XCR0
(read with ``xgetbv``) whether the OS saves the registers those instructions use; a builder's
function named by ``<STEM>_CUSTOM_RUNS_HERE`` may answer instead. It keeps that choice, so data
left in an ISA's native NTT order is always read back by the same ISA, and publishes it with an
atomic release store (threads racing on the first call compute the same choice).
``<prefix>_use_isa`` forces one. The file calls no C library function; only a build that
defines ``<STEM>_TESTING`` reads the environment variable ``NTTGEN_ISA`` (a comma-separated
list of ISA names, as for the Python API), for tests and benchmarks. Each ISA is compiled in
under ``<STEM>_HAVE_<ISA>``, unless the builder defines ``<STEM>_NO_<ISA>`` to leave its file
out.

The x86 backends are compiled in only on x86 targets (``__x86_64__``/``__i386__``) with a
GNU-compatible compiler (for ``cpuid.h``), NEON only on AArch64 (``__aarch64__``, where it needs
no detection), RVV only when the compiler targets the V extension (``__riscv_vector``); there
the front end reads VLEN (``vsetvlmax``) and takes the code specialised for exactly that VLEN,
else the VLEN-agnostic code. Elsewhere the front end is the portable C.

The front end reads only the writer interface of :class:`~nttgen.emit.files.CFileWriter`, so it
serves every ring family; every line of it is built from :mod:`nttgen.emit.c_ast` nodes.

The choice is made per group of operations (:mod:`nttgen.dispatch_policy`): the NTT-domain
operations share one ISA, every other entry point is chosen alone, and the policy's measured
rules skip an ISA for a group on a CPU family where it measured slower than a narrower one.
The documented ranges are checked to chain along the ring's flows (:mod:`nttgen.flows`).

Longer than 600 lines because the front end is one C file whose parts (the header, the table of
ISAs, the run-time detection per architecture, the policy, the entry points) all read the same
writer state: its names, its guards, its ISA order and its groups; split across modules, each
part would take that whole state as parameters.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from ..dispatch_policy import DOMAIN, group_of, groups, skips
from ..dsl.ir import Function, ScalarParam
from ..flows import Contract, Flow, check_flow, flows_for, front_end_contracts
from ..ring_family import RingSpec
from ..version import __version__
from . import c_ast as C
from .c_emit import CEmitter
from .files import (
    LICENSE_ID,
    CFileWriter,
    GeneratedFiles,
    _fmt_range,
    header_close,
    header_open,
    opening_comment,
    provenance_lines,
)
from .names import Names, default_names


def dispatch_stem(ring: RingSpec, names: Names | None = None) -> str:
    """The file stem and symbol prefix of a ring's front end: the namespace's root
    (nttgen_<ring> by default)."""
    return (names or default_names(ring)).root


# printed, in builds for tests and benchmarks, before aborting when the environment variable
# allows nothing that runs here
MESSAGE = "%s: {env}=%s names no ISA compiled in that runs here\n"

# entry points that only ISAs with a permuted NTT-domain order have
ORDER_ONLY = ("to_standard", "from_standard")

# the entry point that leaves data in a transform domain: a family that exports it has the
# order conversions in its front end, even where every ISA compiled in keeps the standard order
TRANSFORM = "ntt"

# the header lines of a family with a transform domain
ORDER_LINES = (
    "Order:  ntt leaves the NTT domain in the active ISA's native order; to_standard and",
    "        from_standard convert. Do not switch ISAs while such data is in use.",
)

NULL = C.Name("NULL")
NAME = C.Name("name")


def _params(w: CFileWriter, fn: Function) -> tuple[C.Param, ...]:
    """The C parameters of an entry point as a writer emits them."""
    return CEmitter(fn, w.isa, w.c_name, w.table_name).params()


def _macro_name(isa: str) -> str:
    """An ISA's name in macros (``rvv128`` -> ``RVV128``)."""
    return isa.upper()


def _wrapped(lead: str, text: str, width: int = 92) -> list[str]:
    """``text`` as header lines of at most ``width`` characters, the first after ``lead``,
    the others indented to line up with it."""
    return textwrap.wrap(
        text, width, initial_indent=lead, subsequent_indent=" " * len(lead), break_on_hyphens=False
    )


def _hull(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _meet(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return max(r[0] for r in ranges), min(r[1] for r in ranges)


class DispatchWriter:
    """Builds the front end over the per-ISA writers of one ring (portable C among them)."""

    def __init__(
        self,
        writers: Sequence[CFileWriter],
        command: str,
        policy: Mapping[str, Any] | None = None,
    ) -> None:
        """``writers``: one per ISA of the same ring, the portable C among them; ``command``:
        the command line that regenerates the front end (quoted in its files); ``policy``:
        the measurements the automatic choice follows (:mod:`nttgen.dispatch_policy`; None:
        none, the best ISA that runs). Raises ValueError when the portable C is missing or
        the ISAs' entry points disagree."""
        names = [w.isa.name for w in writers]
        if "c" not in names:
            raise ValueError("the dispatching front end needs the portable C among its ISAs")
        # best first: wider vectors before narrower ones, portable C last
        self.writers = sorted(writers, key=lambda w: (w.isa.name == "c", -w.lanes))
        self.ring = writers[0].ring
        self.command = command
        self.stem = dispatch_stem(self.ring, writers[0].names)
        if any(w.names != writers[0].names for w in writers):
            raise ValueError("the front end's ISA files must share one namespace")
        self.portable = next(w for w in writers if w.isa.name == "c")
        # every ISA has the same entry points, except that ISAs whose NTT domain is in the
        # standard order have no to/from_standard (those are then no-ops)
        richest = max(self.writers, key=lambda w: len(w.entry_points()))
        self.richest = richest
        self.entries = [name for name, _ in richest.entry_points()]
        self.reference = {name: fn for name, fn in richest.entry_points()}
        # a family with a transform domain always has the order conversions (no-ops where no
        # ISA needs them); one without (NTRU Prime's products) has none
        self.domain = TRANSFORM in self.reference or any(
            not w.native_order_is_standard for w in self.writers
        )
        if self.domain:
            for name in ORDER_ONLY:
                if name not in self.entries:
                    self.entries.insert(self.entries.index("polymul"), name)
            self._check_flows()
        for w in self.writers:
            theirs = dict(w.entry_points())
            for name in self.entries:
                if name not in theirs:
                    if name not in ORDER_ONLY or not w.native_order_is_standard:
                        raise ValueError(f"{w.isa.name} has no {name}")
                elif _params(w, theirs[name]) != _params(richest, self.reference[name]):
                    raise ValueError(f"{w.isa.name} {name} has other parameters")
        # the groups whose entry points share one ISA (the NTT domain), each chosen once
        self.groups = groups(self.entries)
        order = [w.isa.name for w in self.writers]
        here = {w.isa.name for w in self.x86}
        rules = skips(policy or {}, self.ring.name, order, self.entries)
        self.skips = [r for r in rules if r.isa in here]

    @property
    def x86(self) -> list[CFileWriter]:
        """The writers of ISAs that need x86 runtime detection."""
        return [w for w in self.writers if w.isa.cpuid7_ebx]

    @property
    def neon(self) -> list[CFileWriter]:
        """The writers of AArch64 ISAs (Advanced SIMD is part of every AArch64 core: compiled
        in on AArch64, no runtime detection needed)."""
        return [w for w in self.writers if w.isa.arch == "aarch64"]

    @property
    def rvv(self) -> list[CFileWriter]:
        """The writers of RISC-V Vector ISAs (compiled in when the compiler targets the V
        extension; the VLEN-specialised ones picked only on a core of exactly their VLEN)."""
        return [w for w in self.writers if w.isa.arch == "riscv64"]

    def _guard(self, w: CFileWriter) -> str | None:
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

    def _macro(self, suffix: str) -> str:
        """The front end's macro ``<STEM>_<suffix>``."""
        return f"{self.stem.upper()}_{suffix}"

    def _have(self, w: CFileWriter) -> str:
        """The macro defined where ``w``'s ISA is compiled in: its architecture is the
        target's and the builder did not leave it out (``<STEM>_NO_<ISA>``)."""
        return self._macro(f"HAVE_{_macro_name(w.isa.name)}")

    def _same(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Whether two strings are equal, by the front end's own loop (no C library)."""
        return self._call("same", a, b)

    def _is(self, w: CFileWriter) -> C.Expr:
        """Whether the ISA asked about (``name``) is ``w``'s."""
        return self._same(NAME, C.Str(w.isa.name))

    @property
    def env(self) -> str:
        """The environment variable of test and benchmark builds (``NTTGEN_ISA``)."""
        return self.writers[0].names.macro("ISA")

    def _sym(self, suffix: str) -> C.Name:
        """The front end's own symbol ``<stem>_<suffix>`` as an expression."""
        return C.Name(self._name(suffix))

    def _call(self, suffix: str, *args: C.Expr) -> C.Call:
        """A call of the front end's own function ``<stem>_<suffix>``."""
        return C.Call(self._name(suffix), args)

    def _entry_params(self, name: str) -> tuple[C.Param, ...]:
        """The C parameters of an entry point (an order conversion no ISA has: the array)."""
        if name in self.reference:
            return _params(self.richest, self.reference[name])
        return (C.Param(self.richest.lane_c_type, "a", str(self.richest.dims()[0])),)

    # ----------------------------------------------------------------- documentation
    def _header_lines(self, kind: str) -> list[str]:
        isas = ", ".join(w.isa.name for w in self.writers)
        lines = provenance_lines(f"{self.stem}.{kind}", self.command, self.ring)
        S, P = self.stem.upper(), self.stem
        choice = (
            f"{isas} (best first). The first call (or {P}_init()) picks, for each group of "
            "operations, the best one compiled in that this CPU and OS run (CPUID, and XCR0 "
            "for the saved register state) and that the policy below does not skip, and keeps "
            f"it; {P}_use_isa forces one for every group."
        )
        lines += [
            *_wrapped("ISAs:   ", choice),
            *self._group_lines(),
            *self._policy_lines(),
            "Threads: the choice is published with an atomic release store and read with",
            "        acquire loads (gcc and clang builtins); threads racing on the first call",
            "        compute the same choice, so any of them may store it. With another",
            f"        compiler, call {P}_init() before sharing the library between threads.",
            f"Build:  compile each {P}_<isa>.c with the flags its .json lists (e.g. -mavx2),",
            "        and this file with none; the x86 ISAs are compiled in on x86, NEON on",
            "        AArch64, RVV when compiling for the V extension (-march=rv64gcv: then",
            "        compile this file with it too), the portable C everywhere. To leave an",
            f"        ISA's file out, define {S}_NO_<ISA> here (e.g. -D{S}_NO_AVX512).",
            "        This file calls no C library function (it builds freestanding).",
            f"Hooks:  define {S}_CUSTOM_RUNS_HERE as the name of your int f(const char *isa)",
            "        to decide which ISAs run here instead of CPUID (kernels, enclaves);",
            f"        {S}_TESTING (tests and benchmarks only) adds the environment variable",
            f"        {self.env}=name[,name...]: the best listed ISA that runs here, else abort.",
        ]
        if self.domain:
            lines += ORDER_LINES
            lines += self._flow_lines()
        return lines

    def _flows(self) -> list[Flow]:
        """The flows this ring's front-end contracts chain along (:mod:`nttgen.flows`)."""
        ring = self.ring
        return flows_for(ring.name, ring.q, self.richest.arith.lane.bits)

    def _front_contracts(self) -> dict[str, Contract]:
        """The ranges the front end documents: inputs the narrowest of the ISAs', outputs the
        widest (what every ISA compiled in meets)."""
        per_isa = [
            {
                name: Contract(dict(fn.contract.inputs), dict(fn.contract.outputs))
                for name, fn in w.functions.items()
                if name in self.reference
            }
            for w in self.writers
        ]
        return front_end_contracts(per_isa)

    def _check_flows(self) -> None:
        """Refuse (ValueError) a front end whose documented ranges do not chain along the
        ring's flows: every ISA meets the ring's one contract, so this is a generator bug."""
        lane = (self.richest.arith.lane.min, self.richest.arith.lane.max)
        contracts = self._front_contracts()
        problems = [p for f in self._flows() for p in check_flow(f, contracts, lane)]
        if problems:
            raise ValueError(f"the front end's contracts do not chain: {problems[0]}")

    def _flow_lines(self) -> list[str]:
        """The header's paragraph on the flows the documented ranges chain along."""
        lines = _wrapped(
            "Flows:  ",
            "every ISA meets the ranges documented below, and they chain along these flows "
            "(each call's argument inside what it accepts, each sum inside the lanes; checked "
            "when this file was generated). Only the calls listed stand between the steps; "
            "inputs named *_hat are stored in the NTT domain in the standard order (call "
            "from_standard on them first):",
        )
        for flow in self._flows():
            ins = ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in flow.inputs)
            steps = "; ".join(step.text() for step in flow.steps)
            lines += _wrapped("          ", f"{flow.name} ({ins}): {steps}.")
        return lines

    def _group_lines(self) -> list[str]:
        """The header's paragraph on the groups of operations chosen together."""
        P = self.stem
        domain = [e for e in self.entries if group_of(e) == DOMAIN]
        alone = [g for g in self.groups if g != DOMAIN]
        first = f"{P}_isa() names the ISA of {self.groups[0]}."
        if domain:
            text = (
                f"{', '.join(domain)} share one ISA (data in the NTT domain is in the native "
                f"order of the ISA that wrote it); {', '.join(alone)} are each chosen alone. "
                f"{P}_isa() names the ISA of the NTT-domain operations."
            )
        else:
            text = f"{', '.join(alone)} are each chosen alone; {first}"
        return _wrapped("Groups: ", text)

    def _policy_lines(self) -> list[str]:
        """The header's paragraph on the policy: the rules and how they were measured."""
        if not self.skips:
            return _wrapped(
                "Policy: ",
                "no measurement of nttgen bench shows an ISA here slower than a narrower one "
                "(nttgen generate --policy takes other measurements).",
            )
        lines = _wrapped(
            "Policy: ",
            "the automatic choice skips an ISA for a group on the CPU families where nttgen "
            "bench measured it slower than a narrower one (median ticks per call):",
        )
        for rule in self.skips:
            lines += _wrapped("          ", rule.describe())
        for cpu, source in dict.fromkeys((r.cpu, r.source) for r in self.skips):
            lines += _wrapped("        ", f"{cpu}: {source}.")
        return lines

    def _entry_text(self, name: str) -> tuple[str, str, str]:
        """(summary, input, output) of an entry point, from a writer that has it; an order
        conversion no ISA has is still the family's, and the richest writer words it."""
        have = [w for w in self.writers if name in dict(w.entry_points())]
        return (have[0] if have else self.richest).entry_text(name)

    def _function_doc(self, name: str) -> tuple[str, ...]:
        """The portable C's documentation with ranges that hold for every ISA: inputs the
        narrowest of the ISAs' contracts, outputs the widest."""
        summary, inputs, output = self._entry_text(name)
        lines = [summary, "", f"Input:  {inputs}", f"Output: {output}"]
        if name in ORDER_ONLY:
            lines.append("A no-op when the active ISA keeps the NTT domain in the standard order.")
        if name not in self.reference:
            n = self.richest.dims()[0]
            return (*lines, f"a[{n}]: unchanged (every ISA here keeps that order)")
        fn = self.reference[name]
        contracts = [w.functions[name].contract for w in self.writers if name in w.functions]
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
        u.items += opening_comment(self._header_lines("h"))
        u.items += header_open(self.stem, *self.richest.dims(), self.richest.cache_length())
        u.items += [
            C.Blank(),
            C.FuncDef(
                "const char",
                f"*{self._name('isa')}",
                (),
                None,
                doc=(f"The name of the ISA of {self.groups[0]} (picks it on the first call).",),
            ),
            C.Blank(),
            C.FuncDef(
                "const char",
                f"*{self._name('isa_of')}",
                (C.Param("const char", "*op"),),
                None,
                doc=(
                    'The name of the ISA that runs the entry point op (e.g. "polymul"; picks',
                    "it on the first call); NULL if the front end has no entry point op.",
                ),
            ),
            C.Blank(),
            C.FuncDef(
                "int",
                self._name("use_isa"),
                (C.Param("const char", "*name"),),
                None,
                doc=(
                    "Forces the ISA called name for every later call: 0 on success, -1 (and no",
                    "change) if it is not compiled in or this CPU or OS cannot run it.",
                ),
            ),
            C.Blank(),
            C.FuncDef(
                "void",
                self._name("init"),
                (),
                None,
                doc=("Picks the ISA now (else the first call does).",),
            ),
        ]
        for entry in self.entries:
            u.items += [
                C.Blank(),
                C.FuncDef(
                    "void",
                    self._name(entry),
                    self._entry_params(entry),
                    None,
                    doc=self._function_doc(entry),
                ),
            ]
        u.items += header_close(self.stem)
        return u.render()

    def source(self) -> str:
        """The .c text: the table of implementations, detection, selection and the wrappers."""
        u = C.Unit()
        u.items += opening_comment(self._header_lines("c"))
        u.items += self._includes()
        u.items += [C.Blank(), *self._atomics(), C.Blank(), *self._table()]
        u.items += [
            C.Blank(),
            C.ShortComment(f"The active ISA of each group ({self._group_index_text()})."),
            C.Global(f"const {self._name('impl')}", f"*{self._name('active')}[{len(self.groups)}]"),
        ]
        parts = (
            self._same_def(),
            self._runs_here(),
            self._suits(),
            self._skipped(),
            self._listed(),
        )
        for fn in parts:
            if fn:  # the policy's part is empty where it has no rule here
                u.items += [C.Blank(), *fn]
        u.items += [C.Blank(), *self._choose(), C.Blank(), *self._pick()]
        u.items += [C.Blank(), self._isa(), C.Blank(), self._isa_of()]
        u.items += [C.Blank(), self._use_isa(), C.Blank(), self._init()]
        for entry in self.entries:
            u.items += [C.Blank(), self._wrapper(entry)]
        return u.render()

    def _includes(self) -> list[C.Top]:
        """The front end's own header, the C library's, and each ISA's header under the macro
        that says its architecture is compiled for."""
        S = self.stem.upper()
        items: list[C.Top] = [
            C.Directive(f'#include "{self.stem}.h"'),
            C.Blank(),
            C.Directive("#include <stddef.h>"),
            C.Directive(f"#ifdef {S}_TESTING"),
            C.Directive("#include <stdio.h>"),
            C.Directive("#include <stdlib.h>"),
            C.Directive("#include <string.h>"),
            C.Directive("#endif"),
            C.Blank(),
            C.Directive(f'#include "{self.portable.stem}.h"'),
        ]
        arches = (
            (
                self.x86,
                "(defined(__x86_64__) || defined(__i386__)) && "
                "(defined(__GNUC__) || defined(__clang__))",
                f"{S}_X86",
                ("cpuid.h",),
            ),
            (self.neon, "defined(__aarch64__) && defined(__ARM_NEON)", f"{S}_NEON", ()),
            (
                self.rvv,
                "defined(__riscv) && defined(__riscv_vector)",
                f"{S}_RVV",
                ("riscv_vector.h",),
            ),
        )
        for ws, cond, macro, system in arches:
            if ws:
                items += [
                    C.Blank(),
                    C.Directive(f"#if {cond}"),
                    C.Directive(f"#define {macro} 1"),
                    *(C.Directive(f"#include <{h}>") for h in system),
                    C.Directive("#endif"),
                ]
                for w in ws:
                    no = self._macro(f"NO_{_macro_name(w.isa.name)}")
                    items += [
                        C.Directive(f"#if defined({macro}) && !defined({no})"),
                        C.Directive(f"#define {self._have(w)} 1"),
                        C.Directive(f'#include "{w.stem}.h"'),
                        C.Directive("#endif"),
                    ]
        return items

    def _atomics(self) -> list[C.Top]:
        """``<STEM>_LOAD(p)``/``<STEM>_STORE(p, v)``: an acquire load and a release store of
        the active ISA (gcc's and clang's builtins, freestanding), plain accesses elsewhere."""
        load, store = self._macro("LOAD"), self._macro("STORE")
        return [
            C.ShortComment("The active ISA is published once, race-free (see the header)."),
            C.Directive("#if defined(__GNUC__) || defined(__clang__)"),
            C.Directive(f"#define {load}(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)"),
            C.Directive(f"#define {store}(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)"),
            C.Directive("#else"),
            C.Directive(f"#define {load}(p) (*(p))"),
            C.Directive(f"#define {store}(p, v) (*(p) = (v))"),
            C.Directive("#endif"),
        ]

    def _table(self) -> list[C.Top]:
        """The struct of one ISA's entry points, how many ISAs are compiled in, and the array
        of them, best first (NULL where an ISA has no order conversion)."""
        fields: list[C.Param | C.FuncPtr] = [C.Param("const char", "*name")]
        fields += [C.FuncPtr("void", e, self._entry_params(e)) for e in self.entries]
        items: list[C.Top] = [
            C.ShortComment("One ISA's entry points."),
            C.TypedefStruct(self._name("impl"), tuple(fields)),
        ]
        rows = tuple(
            C.InitRow(
                (
                    C.Str(w.isa.name),
                    *(C.Name(f"{w.stem}_{e}") if e in w.functions else NULL for e in self.entries),
                ),
                None if self._guard(w) is None else self._have(w),
            )
            for w in self.writers
        )
        impls = self._name("impls")
        return [
            *items,
            C.Blank(),
            C.ShortComment("Every ISA compiled in, best first (the portable C last)."),
            C.InitArray(self._name("impl"), impls, rows),
            C.Global(
                "const size_t",
                self._name("isas"),
                init=C.Bin(
                    "/",
                    C.Call("sizeof", (C.Name(impls),)),
                    C.Call("sizeof", (C.Index(C.Name(impls), C.Int(0)),)),
                ),
            ),
        ]

    def _runs_here(self) -> list[C.Top]:
        """``<prefix>_runs_here(name)``: whether this CPU and OS run an ISA."""
        S = self.stem.upper()
        body: list[C.Stmt] = []
        if self.x86:
            eax, ebx, ecx, edx = (C.Name(r) for r in ("eax", "ebx", "ecx", "edx"))
            lo, hi = C.Name("xcr0_lo"), C.Name("xcr0_hi")
            regs = tuple(C.Unary("&", r) for r in (eax, ebx, ecx, edx))
            osxsave = C.Bin("&", ecx, C.Bin("<<", C.UInt(1), C.Int(27)))
            x86: list[C.Stmt] = [
                C.DeclList("unsigned int", ("eax", "ebx", "ecx", "edx", "xcr0_lo", "xcr0_hi")),
                C.If(
                    C.Logic(
                        "||",
                        (
                            C.Unary("!", C.Call("__get_cpuid", (C.Int(1), *regs))),
                            C.Unary("!", osxsave),
                        ),
                    ),
                    (
                        C.Commented(
                            C.Return(self._same(NAME, C.Str("c"))), "no OSXSAVE: no xgetbv, no AVX"
                        ),
                    ),
                ),
                C.Asm("xgetbv", (("=a", lo), ("=d", hi)), (("c", C.Int(0)),)),
                C.ExprStmt(C.Cast("void", hi)),
                C.If(
                    C.Unary("!", C.Call("__get_cpuid_count", (C.Int(7), C.Int(0), *regs))),
                    (C.Assign(ebx, C.Int(0)),),
                ),
            ]
            for w in self.x86:
                has_ebx = C.UInt(w.isa.cpuid7_ebx, hex=True)
                has_xcr0 = C.UInt(w.isa.xcr0, hex=True)
                both = C.Logic(
                    "&&",
                    (
                        C.Bin("==", C.Bin("&", ebx, has_ebx), has_ebx),
                        C.Bin("==", C.Bin("&", lo, has_xcr0), has_xcr0),
                    ),
                )
                x86.append(C.If(self._is(w), (C.Return(both),)))
            body.append(C.IfDef(f"{S}_X86", tuple(x86)))
        if self.neon:
            always = C.Commented(C.Return(C.Int(1)), "part of every AArch64 core")
            body.append(
                C.IfDef(f"{S}_NEON", tuple(C.If(self._is(w), (always,)) for w in self.neon))
            )
        if self.rvv:
            vlen = C.Name("vlen")
            need = [
                C.If(self._is(w), (C.Return(C.Bin(">=", vlen, C.Int(w.isa.min_vlen))),))
                for w in self.rvv
            ]
            rvv = (
                C.Commented(self._vlen(), "VLEN in bits"),
                *need,
                C.ExprStmt(C.Cast("void", vlen)),
            )
            body.append(C.IfDef(f"{S}_RVV", rvv))
        body.append(C.Return(self._same(NAME, C.Str("c"))))
        hook = self._macro("CUSTOM_RUNS_HERE")
        portable = C.If(self._same(NAME, C.Str("c")), (C.Return(C.Int(1)),))
        body.insert(0, C.IfDef(hook, (portable, C.Return(C.Call(hook, (NAME,))))))
        return [
            C.Directive(f"#ifdef {hook}"),
            C.Directive(f"int {hook}(const char *isa);"),
            C.Directive("#endif"),
            C.Blank(),
            C.ShortComment(
                "Whether this CPU has the ISA's instructions and the OS saves its registers."
            ),
            C.FuncDef(
                "int",
                self._name("runs_here"),
                (C.Param("const char", "*name"),),
                tuple(body),
                storage="static",
            ),
        ]

    @staticmethod
    def _vlen() -> C.Decl:
        """``size_t vlen = ...``: the RISC-V core's VLEN in bits."""
        return C.Decl("size_t", "vlen", C.Bin("*", C.Call("__riscv_vsetvlmax_e8m1", ()), C.Int(8)))

    def _suits(self) -> list[C.Top]:
        """``<prefix>_suits(name)``: whether the automatic choice may take an ISA that runs
        here: code specialised for one RISC-V VLEN only on a core of exactly that VLEN (on a
        longer one it would leave lanes idle, and the VLEN-agnostic code uses them)."""
        body: list[C.Stmt] = []
        fixed = [(w, w.isa.vlen) for w in self.rvv if w.isa.vlen is not None]
        if fixed:
            vlen = C.Name("vlen")
            exact = [
                C.If(self._is(w), (C.Return(C.Bin("==", vlen, C.Int(bits))),)) for w, bits in fixed
            ]
            rvv = (self._vlen(), *exact, C.ExprStmt(C.Cast("void", vlen)))
            body.append(C.IfDef(f"{self.stem.upper()}_RVV", rvv))
        body += [C.ExprStmt(C.Cast("void", NAME)), C.Return(C.Int(1))]
        return [
            C.ShortComment(
                "Whether the automatic choice takes an ISA that runs here (see the header)."
            ),
            C.FuncDef(
                "int",
                self._name("suits"),
                (C.Param("const char", "*name"),),
                tuple(body),
                storage="static",
            ),
        ]

    def _listed(self) -> list[C.Top]:
        """``<prefix>_listed(list, name)``: whether NTTGEN_ISA's list names an ISA."""
        lst, k, n = C.Name("list"), C.Name("k"), C.Name("len")
        body = (
            C.Decl("size_t", "len", C.Call("strlen", (NAME,))),
            C.While(
                C.Bin("!=", C.Unary("*", lst), C.Char("\0")),
                (
                    C.Decl("size_t", "k", C.Call("strcspn", (lst, C.Str(",")))),
                    C.If(
                        C.Logic(
                            "&&",
                            (
                                C.Bin("==", k, n),
                                C.Bin("==", C.Call("strncmp", (lst, NAME, n)), C.Int(0)),
                            ),
                        ),
                        (C.Return(C.Int(1)),),
                    ),
                    C.OpAssign("+", lst, k),
                    C.OpAssign("+", lst, C.Bin("==", C.Unary("*", lst), C.Char(","))),
                ),
            ),
            C.Return(C.Int(0)),
        )
        return [
            C.Directive(f"#ifdef {self._macro('TESTING')}"),
            C.ShortComment("Whether name is one of the comma-separated names in list."),
            C.FuncDef(
                "int",
                self._name("listed"),
                (C.Param("const char", "*list"), C.Param("const char", "*name")),
                body,
                storage="static",
            ),
            C.Directive("#endif"),
        ]

    def _same_def(self) -> list[C.Top]:
        """``<prefix>_same(a, b)``: whether two strings are equal (the C library's strcmp is
        not available freestanding)."""
        a, b = C.Name("a"), C.Name("b")
        step = C.Logic(
            "&&", (C.Bin("!=", C.Unary("*", a), C.Char("\0")), C.Bin("==", C.Unary("*", a),
                                                                    C.Unary("*", b)))
        )  # fmt: skip
        body = (
            C.While(step, (C.OpAssign("+", a, C.Int(1)), C.OpAssign("+", b, C.Int(1)))),
            C.Return(C.Bin("==", C.Unary("*", a), C.Unary("*", b))),
        )
        return [
            C.ShortComment("Whether the strings a and b are equal."),
            C.FuncDef(
                "int",
                self._name("same"),
                (C.Param("const char", "*a"), C.Param("const char", "*b")),
                body,
                storage="static",
            ),
        ]

    def _choose(self) -> list[C.Top]:
        """``<prefix>_choose()``: the best ISA compiled in that suits and runs here (the
        portable C, last, always runs); in test builds the environment variable's best
        listed one that runs here, or abort with a message."""
        only = C.Name("only")
        nth = C.Index(self._sym("impls"), C.Name("i"))
        count = self._sym("isas")

        def first(wanted: C.Expr) -> C.For:
            return C.For(
                "i",
                C.Bin("<", C.Name("i"), count),
                (
                    C.Decl("const char", "*name", C.Member(nth, "name")),
                    C.If(
                        C.Logic("&&", (wanted, self._call("runs_here", NAME))),
                        (C.Return(C.Unary("&", nth)),),
                    ),
                ),
            )

        testing = (
            C.Decl("const char", "*only", C.Call("getenv", (C.Str(self.env),))),
            C.If(
                C.Logic("&&", (C.Bin("!=", only, NULL), C.Bin("!=", C.Unary("*", only),
                                                              C.Char("\0")))),
                (
                    first(self._call("listed", only, NAME)),
                    C.CallStmt(C.Call("fprintf", (C.Name("stderr"),
                                                  C.Str(MESSAGE.format(env=self.env)),
                                                  C.Str(self.stem), only))),
                    C.CallStmt(C.Call("abort", ())),
                ),
            ),
        )  # fmt: skip
        wanted = self._call("suits", NAME)
        if self.skips:
            skipped = self._call("skipped", NAME, C.Name("group"))
            wanted = C.Logic("&&", (wanted, C.Unary("!", skipped)))
        unused = () if self.skips else (C.ExprStmt(C.Cast("void", C.Name("group"))),)
        body = (
            *unused,
            C.IfDef(self._macro("TESTING"), testing),
            first(wanted),
            C.Commented(
                C.Return(C.Unary("&", C.Index(self._sym("impls"), C.Bin("-", count, C.Int(1))))),
                "the portable C",
            ),
        )
        return [
            C.ShortComment("The ISA the automatic choice takes for a group (see the header)."),
            C.FuncDef(
                f"const {self._name('impl')}",
                f"*{self._name('choose')}",
                (C.Param("int", "group"),),
                body,
                storage="static",
            ),
        ]

    def _pick(self) -> list[C.Top]:
        """``<prefix>_pick()``: the active ISA, chosen on the first call and published with
        a release store (threads that race compute the same choice)."""
        impl, group = C.Name("impl"), C.Name("group")
        slot = C.Unary("&", C.Index(self._sym("active"), group))
        load = C.Call(self._macro("LOAD"), (slot,))
        store = C.Call(self._macro("STORE"), (slot, impl))
        body = (
            C.Decl(f"const {self._name('impl')}", "*impl", load),
            C.If(
                C.Bin("==", impl, NULL),
                (C.Assign(impl, self._call("choose", group)), C.CallStmt(store)),
            ),
            C.Return(impl),
        )
        return [
            C.ShortComment(
                "The active ISA of a group: chosen once, on its first call (see the header)."
            ),
            C.FuncDef(
                f"const {self._name('impl')}",
                f"*{self._name('pick')}",
                (C.Param("int", "group"),),
                body,
                storage="static",
            ),
        ]

    def _init(self) -> C.FuncDef:
        """``<prefix>_init()``: picks the active ISA of every group now."""
        body = tuple(C.CallStmt(self._call("pick", C.Int(g))) for g in range(len(self.groups)))
        return C.FuncDef("void", self._name("init"), (), body)

    def _isa(self) -> C.FuncDef:
        """``<prefix>_isa()``: the name of the active ISA."""
        name = C.Member(self._call("pick", C.Int(0)), "name", arrow=True)
        return C.FuncDef("const char", f"*{self._name('isa')}", (), (C.Return(name),))

    def _isa_of(self) -> C.FuncDef:
        """``<prefix>_isa_of(op)``: the name of the ISA that runs an entry point (NULL for a
        name that is none), one test per group."""
        op = C.Name("op")
        body: list[C.Stmt] = []
        for g, group in enumerate(self.groups):
            mine = [e for e in self.entries if group_of(e) == group]
            found = C.Member(self._call("pick", C.Int(g)), "name", arrow=True)
            test = C.Logic("||", tuple(self._same(op, C.Str(e)) for e in mine))
            body.append(C.If(test, (C.Return(found),)))
        body.append(C.Return(NULL))
        return C.FuncDef(
            "const char", f"*{self._name('isa_of')}", (C.Param("const char", "*op"),), tuple(body)
        )

    def _use_isa(self) -> C.FuncDef:
        """``<prefix>_use_isa(name)``: forces an ISA compiled in that runs here (0), else
        changes nothing (-1)."""
        nth = C.Index(self._sym("impls"), C.Name("i"))
        found = C.Logic(
            "&&", (self._same(C.Member(nth, "name"), NAME), self._call("runs_here", NAME))
        )
        loop = C.For(
            "i",
            C.Bin("<", C.Name("i"), self._sym("isas")),
            (
                C.If(
                    found,
                    (
                        *(
                            C.CallStmt(
                                C.Call(
                                    self._macro("STORE"),
                                    (
                                        C.Unary("&", C.Index(self._sym("active"), C.Int(g))),
                                        C.Unary("&", nth),
                                    ),
                                )
                            )
                            for g in range(len(self.groups))
                        ),
                        C.Return(C.Int(0)),
                    ),
                ),
            ),
        )
        return C.FuncDef(
            "int",
            self._name("use_isa"),
            (C.Param("const char", "*name"),),
            (loop, C.Return(C.Int(-1))),
        )

    def _pick_of(self, entry: str) -> C.Call:
        """The call that returns the active ISA of an entry point's group."""
        return self._call("pick", C.Int(self.groups.index(group_of(entry))))

    def _group_index_text(self) -> str:
        """The groups by index, for a comment: ``0 ntt domain, 1 reduce, ...``."""
        return ", ".join(f"{i} {g}" for i, g in enumerate(self.groups))

    def _skipped(self) -> list[C.Top]:
        """``<prefix>_skipped(name, group)``: whether the policy skips an ISA for a group on
        this CPU's vendor and family (x86 only: CPUID leaves 0 and 1). Nothing where the
        policy has no rule for this front end."""
        if not self.skips:
            return []
        S = self.stem.upper()
        eax, ebx, ecx, edx, family = (C.Name(r) for r in ("eax", "ebx", "ecx", "edx", "family"))
        regs = tuple(C.Unary("&", r) for r in (eax, ebx, ecx, edx))
        rules: list[C.Stmt] = []
        for r in self.skips:
            match = C.Logic(
                "&&",
                (
                    C.Bin("==", ebx, C.UInt(r.vendor_word, hex=True)),
                    C.Bin("==", family, C.UInt(r.family, hex=True)),
                    C.Bin("==", C.Name("group"), C.Int(self.groups.index(r.group))),
                    self._same(NAME, C.Str(r.isa)),
                ),
            )
            rules.append(C.Commented(C.If(match, (C.Return(C.Int(1)),)), r.describe()))
        body = (
            C.DeclList("unsigned int", ("eax", "ebx", "ecx", "edx", "family")),
            C.If(C.Unary("!", C.Call("__get_cpuid", (C.Int(1), *regs))), (C.Return(C.Int(0)),)),
            C.Commented(
                C.Assign(family, C.Bin("&", C.Bin(">>", eax, C.Int(8)), C.UInt(0xF, hex=True))),
                "the base family, plus the extended family where the base is 0xf",
            ),
            C.If(
                C.Bin("==", family, C.UInt(0xF, hex=True)),
                (
                    C.OpAssign(
                        "+", family, C.Bin("&", C.Bin(">>", eax, C.Int(20)), C.UInt(0xFF, hex=True))
                    ),
                ),
            ),
            C.Comment("the vendor's first four characters in EBX"),
            C.If(C.Unary("!", C.Call("__get_cpuid", (C.Int(0), *regs))), (C.Return(C.Int(0)),)),
            *rules,
            C.Return(C.Int(0)),
        )
        return [
            C.Directive(f"#ifdef {S}_X86"),
            C.ShortComment("Whether the policy skips the ISA name for a group on this CPU."),
            C.FuncDef(
                "int",
                self._name("skipped"),
                (C.Param("const char", "*name"), C.Param("int", "group")),
                body,
                storage="static",
            ),
            C.Directive("#else"),
            C.ShortComment("No rule applies off x86."),
            C.FuncDef(
                "int",
                self._name("skipped"),
                (C.Param("const char", "*name"), C.Param("int", "group")),
                (
                    C.ExprStmt(C.Cast("void", NAME)),
                    C.ExprStmt(C.Cast("void", C.Name("group"))),
                    C.Return(C.Int(0)),
                ),
                storage="static",
            ),
            C.Directive("#endif"),
        ]

    def _wrapper(self, entry: str) -> C.FuncDef:
        """The ISA-neutral entry point: the active ISA's function (an order conversion the
        active ISA lacks, or that no ISA has: nothing)."""
        params = self._entry_params(entry)
        args = tuple(C.Name(p.name.lstrip("*")) for p in params)
        body: tuple[C.Stmt, ...]
        if entry not in self.reference:
            body = tuple(
                C.Commented(
                    C.ExprStmt(C.Cast("void", a)), "every ISA here keeps the standard order"
                )
                for a in args
            )
        elif entry in ORDER_ONLY:
            impl = C.Name("impl")
            fn = C.Member(impl, entry, arrow=True)
            body = (
                C.Decl(f"const {self._name('impl')}", "*impl", self._pick_of(entry)),
                C.Commented(
                    C.If(C.Bin("!=", fn, NULL), (C.CallStmt(C.Apply(fn, args)),)),
                    "NULL: standard order already",
                ),
            )
        else:
            fn = C.Member(self._pick_of(entry), entry, arrow=True)
            body = (C.CallStmt(C.Apply(fn, args)),)
        return C.FuncDef("void", self._name(entry), params, body)

    def files(self) -> GeneratedFiles:
        """The front end's texts (the manifest lists the ISAs and their files)."""
        manifest = {
            "SPDX-License-Identifier": LICENSE_ID,
            "generator": {"name": "nttgen", "version": __version__, "command": self.command},
            "ring": self.ring.summary(),
            "isas": [
                {"name": w.isa.name, "stem": w.stem, "cflags": list(w.isa.cflags)}
                for w in self.writers
            ],
            "functions": [
                self._name(n) for n in ("isa", "isa_of", "use_isa", "init", *self.entries)
            ],
        }
        text = json.dumps(manifest, indent=2) + "\n"
        return GeneratedFiles(self.stem, self.header(), self.source(), text, self.command)
