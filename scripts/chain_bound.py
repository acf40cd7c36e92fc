#!/usr/bin/env python3
"""How fast could one call of each straight-line x86 kernel be? A lower bound from its
dependence chain.

``scripts/port_bound.py`` bounds a kernel by the pipes its instructions need; a kernel whose
instructions wait on each other runs slower than that. This script bounds it by latency:

1. Measures, with an inline-assembly loop of one dependent chain, the latency in TSC ticks of
   each class of vector instruction the kernels use (:data:`PROBES`, ymm and zmm), and of a
   store followed by a load of the same address (a spilled value read back).
2. Compiles the ring's file for the ISA (the file's own flags, ``-O3``) to assembly and, for
   every operation whose function is one straight line of code (no loop), follows each value
   from instruction to instruction: an instruction starts when its register operands (and a
   value it reloads from where the function stored it) are ready, and its result is ready one
   latency later. The longest such path is the bound. Loads of the inputs and of constants are
   counted as free and register copies as eliminated, so the figure is a true lower bound for
   one call: no schedule of these instructions on this core finishes sooner.

    scripts/chain_bound.py [--json bench.json] [--cc CC] [ring ...]

With ``--json`` (from ``nttgen bench --json``) it prints the measured ticks beside the bound.
A kernel measured close to its chain is latency-bound: only a shorter chain (fewer layers,
cheaper products or shuffles) makes it faster, not a better schedule or more pipes.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from nttgen.bench.probes import time_probes
from nttgen.bench.report import medians_by_kernel
from nttgen.cpu import hardware_isas
from nttgen.emit.isa import isa_class
from nttgen.families import family_of, get_ring
from nttgen.rings import PRESETS

ITERS = 200_000
CHAIN = 20
REGS = {"avx2": "ymm", "avx512": "zmm"}
OPS = ("ntt", "intt", "basemul", "polymul")

# latency classes: the chain each is timed by, for the register kinds it exists in (AT&T)
PROBES = {
    "add": ("vpaddw %{r}1, %{r}0, %{r}0", ("ymm", "zmm")),
    "mul": ("vpmulhw %{r}1, %{r}0, %{r}0", ("ymm", "zmm")),
    "cross": ("vpermt2q %{r}1, %{r}2, %{r}0", ("zmm",)),
    "perm2": ("vperm2i128 $49, %{r}1, %{r}0, %{r}0", ("ymm",)),
    "permq": ("vpermq $78, %{r}0, %{r}0", ("ymm", "zmm")),
    "insert": ("vinserti128 $1, %xmm1, %{r}0, %{r}0", ("ymm",)),
    "insert4": ("vinserti64x4 $1, %ymm1, %{r}0, %{r}0", ("zmm",)),
    "spill": ("{mov} %{r}0, {m}\n{mov} {m}, %{r}0", ("ymm", "zmm")),
}
MUL = re.compile(r"vpmul|vpmadd")
CROSS = re.compile(r"vpermt2|vpermi2|vshuf[if](32x4|64x2)|vperm[wdb]\b|vpermps|vpermpd")
# instructions that permute across 128-bit blocks with the latency of vpermq (ymm: the only
# lane-crossing kind a ymm file uses besides vperm2i128 and vinserti128)
PERMQ = re.compile(r"vpermq|vpermpd")
VREG = re.compile(r"%[xyz]mm(\d+)")
LOADS = re.compile(r"vmovdq|vmovup|vmovap|vpbroadcast|vbroadcast|vpmovsx|vpmovzx")


def latency_class(mnemonic: str, reg: str) -> str:
    """The probe whose latency an instruction is given (``add`` for every one not listed:
    the shortest latency a vector instruction has, so the bound stays a lower bound)."""
    if MUL.match(mnemonic):
        return "mul"
    if mnemonic.startswith("vperm2i128"):
        return "perm2"
    if mnemonic.startswith("vinserti128"):
        return "insert"
    if mnemonic.startswith(("vinserti64x4", "vinserti32x8")):
        return "insert4"
    if PERMQ.match(mnemonic):
        return "permq"
    if CROSS.match(mnemonic):
        return "cross" if reg == "zmm" else "permq"
    return "add"


def measure(regs: Iterable[str]) -> dict[tuple[str, str], float]:
    """TSC ticks of one instruction of each class of :data:`PROBES` in a dependent chain (one
    store and load for ``spill``), for each register kind of ``regs`` it exists in."""
    lines = ["static _Alignas(64) char slot[64];"]
    calls = []
    for name, (pattern, kinds) in PROBES.items():
        for reg in regs:
            if reg not in kinds:
                continue
            mov = "vmovdqu64" if reg == "zmm" else "vmovdqu"
            text = pattern.replace("{r}", reg).replace("{mov}", mov).replace("\n", "\\n\\t")
            body = "\\n\\t".join([text] * CHAIN).replace("%", "%%").replace("{m}", "(%0)")
            fn = f"probe_{name}_{reg}"
            lines.append(
                f"static double {fn}(void) {{ uint64_t t = tsc();"
                f' for (long i = 0; i < {ITERS}; i++) __asm__ volatile("{body}" :: "r"(slot) :'
                ' "xmm0", "xmm1", "xmm2", "memory");'
                f" return (double)(tsc() - t) / ({CHAIN}.0 * {ITERS}); }}"
            )
            calls.append((fn, name, reg))
    return time_probes(lines, calls, "zmm" in regs, rounds=9)


class Chain(NamedTuple):
    """The dependence chain of one function: its instructions and its longest path (ticks),
    or ``loops`` where it has a branch (no bound is computed then)."""

    instructions: int
    ticks: float
    loops: bool = False


def _operands(text: str) -> list[str]:
    """The comma-separated operands of an AT&T instruction (commas inside parentheses kept)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*out, cur.strip()] if cur.strip() else out


def chain_of(lines: Iterable[str], latency: dict[tuple[str, str], float]) -> Chain:
    """The longest dependence path through a function's instructions (AT&T assembly, one per
    line; labels and directives skipped), each vector instruction taking the latency of its
    class (:func:`latency_class`) for its widest register; see the module docstring."""
    ready: dict[str, float] = {}  # vector register number -> when its value is ready
    stored: dict[str, float] = {}  # memory operand text -> when the value stored there is
    end, count = 0.0, 0
    for raw in lines:
        line = raw.split("#")[0].strip()
        if not line or line.endswith(":") or line.startswith("."):
            continue
        mnemonic, *rest = line.split(None, 1)
        count += 1
        if mnemonic.startswith("j"):
            return Chain(count, 0.0, loops=True)
        ops = _operands(rest[0]) if rest else []
        if not ops or not mnemonic.startswith("v"):
            continue  # scalar work: addresses and counters, not on the vector chain
        reg = "zmm" if "zmm" in line else "ymm"
        dst, srcs = ops[-1], ops[:-1]
        merging = "{%k" in dst and "{z}" not in dst
        dst = re.sub(r"\{.*?\}", "", dst).strip()
        if merging or mnemonic.startswith(("vpermt2", "vpermi2")):
            srcs = [*srcs, dst]  # the destination is read too
        start, loaded = 0.0, False
        for s in srcs:
            m = VREG.fullmatch(s)
            if m:
                start = max(start, ready.get(m.group(1), 0.0))
            elif "(" in s:
                loaded = True
                if s in stored:
                    start = max(start, stored[s] + latency[("spill", reg)])
        target = VREG.fullmatch(dst)
        if target is None:
            if "(" in dst:
                stored[dst] = start
            continue
        if LOADS.match(mnemonic) and (loaded or not any(VREG.fullmatch(s) for s in srcs)):
            done = start  # a load: free unless it reads back a value stored here
        elif mnemonic.startswith(("vmovdq", "vmovap", "vmovup")):
            done = start  # a register copy, eliminated at rename
        else:
            done = start + latency[(latency_class(mnemonic, reg), reg)]
        ready[target.group(1)] = done
        end = max(end, done)
    return Chain(count, end)


def function_lines(asm: str, name: str) -> list[str]:
    """The instruction lines of function ``name`` in compiler assembly output."""
    end = r"(?:^\s*\.cfi_endproc|^\.Lfunc_end)"
    body = re.search(rf"^{re.escape(name)}:[^\n]*\n(.*?){end}", asm, re.S | re.M)
    if body is None:
        raise SystemExit(f"{name}: not in the assembly")
    return [ln for ln in body.group(1).splitlines() if ln.strip()]


def resolve(asm: str, name: str) -> list[str]:
    """The lines of ``name``, or of the function it only calls or jumps to (an entry point
    that forwards to a static helper, such as ``ntt`` to ``ntt_from``)."""
    lines = function_lines(asm, name)
    real = [ln.split("#")[0].split() for ln in lines]
    real = [p for p in real if p and not p[0].startswith(".") and not p[0].endswith(":")]
    calls = [p[1] for p in real if p[0] in ("jmp", "callq", "call") and len(p) > 1]
    if len(calls) == 1 and calls[0].split("@")[0] != name and len(real) <= 12:
        return function_lines(asm, calls[0].split("@")[0])
    return lines


def assembly(ring_name: str, isa: str, cc: str) -> tuple[str, str]:
    """The assembly of a ring's file for ``isa`` built by ``cc`` with the file's flags, and
    the file's function prefix."""
    ring = get_ring(ring_name)
    files = family_of(ring).generate(ring, isa)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            (Path(tmp) / name).write_text(text)
        out = Path(tmp) / "k.s"
        src = Path(tmp) / f"{files.stem}.c"
        flags = isa_class(isa).cflags
        subprocess.run([cc, "-O3", *flags, "-S", str(src), "-o", str(out)], check=True)
        return out.read_text(), files.stem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rings", nargs="*", default=list(PRESETS))
    ap.add_argument("--json", help="nttgen bench --json output, for the measured column")
    ap.add_argument("--cc", default="clang-19", help="the compiler whose code is followed")
    args = ap.parse_args()
    for name in args.rings:
        if name not in PRESETS:
            ap.error(f"unknown ring {name!r}: presets are {', '.join(PRESETS)}")
    runs = [isa for isa in REGS if isa in hardware_isas()]
    for isa in REGS:
        if isa not in runs:
            print(f"{isa}: left out (no {isa.upper()} on this CPU)")
    if not runs:
        return
    latency = measure(tuple(REGS[isa] for isa in runs))
    print("latency, TSC ticks per instruction (one dependent chain):")
    for (name, reg), t in sorted(latency.items()):
        print(f"  {name:8s} {reg}  {t:.3f}")
    measured = medians_by_kernel(Path(args.json), OPS, args.cc) if args.json else {}
    print(f"\ndependence chain of one call in ticks ({args.cc}; loads free, copies eliminated)")
    print(f"{'ring':12s} {'op':8s} {'isa':7s} {'instrs':>7s} {'chain':>7s} {'measured':>9s}")
    for name in args.rings:
        for isa in runs:
            asm, stem = assembly(name, isa, args.cc)
            for op in OPS:
                c = chain_of(resolve(asm, f"{stem}_{op}"), latency)
                bound = "loops" if c.loops else f"{c.ticks:.1f}"
                got = measured.get((name, isa, op))
                shown = f"{got:9.0f}" if got else f"{'-':>9s}"
                print(f"{name:12s} {op:8s} {isa:7s} {c.instructions:7d} {bound:>7s} {shown}")


if __name__ == "__main__":
    main()
