"""The constant-time checker's driver: disassemble an object, build each function's control
flow, run the taint analysis of its architecture's model to a fixpoint."""

from __future__ import annotations

import heapq
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .aarch64 import AArch64Model
from .elf import relocations
from .model import Flow, Instr, Model, State, Violation
from .riscv import RiscV64Model
from .x86 import X86Model

ARCHES: dict[str, type[Model]] = {
    "x86_64": X86Model,
    "aarch64": AArch64Model,
    "riscv64": RiscV64Model,
}


_FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_SECTION = re.compile(r"^Disassembly of section (\S+?):?$")


def disassemble(obj: Path, model: Model, objdump: str | None = None) -> dict[str, list[Instr]]:
    """Instructions of every function in an object file, by function name. ``objdump`` picks
    the disassembler (default: the model's preferred one that is installed)."""
    out = subprocess.run(
        [*model.objdump_command(objdump), str(obj)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    relocs, refs = relocations(obj)
    funcs: dict[str, list[Instr]] = {}
    cur: list[Instr] | None = None
    section = ""
    for line in out.splitlines():
        if not line[:1].isspace():  # headers and labels start in column 0, instructions not
            s = _SECTION.match(line.strip())
            if s:
                section, cur = s.group(1), None
                continue
            f = _FUNC.match(line.strip())
            if f:
                if f.group(1).startswith(".L") and cur is not None:
                    continue  # a local label inside the function (kept for RISC-V relaxation)
                cur = funcs.setdefault(f.group(1), [])
                continue
        if cur is not None:
            ins = model.parse(line)
            if ins is not None:
                ins.reloc = relocs.get((section, ins.address))
                ins.taken = (section, ins.address) in refs
                cur.append(ins)
    for code in funcs.values():
        model.finish(code)
    return funcs


def _indirect_targets(code: list[Instr], model: Model, index: dict[int, int]) -> list[int]:
    """Where an indirect jump (a jump table) may lead: the instructions of the function whose
    address the object's data holds (RISC-V tables carry relocations), or, when there are none
    (AArch64 tables are resolved by the assembler), anywhere but the function's entry block: a
    case label is never in the straight-line code that runs before the dispatch, and sending the
    state there would run the prologue again and lose the frame."""
    taken = [j for j, ins in enumerate(code) if ins.taken and j > 0]
    if taken:
        return taken
    targets = {index[ins.target] for ins in code if ins.target in index}
    start = 0
    while start < len(code) and (start == 0 or start not in targets):
        start += 1
        if model.flow(code[start - 1]) is not Flow.FALL:
            break
    return list(range(start, len(code)))


def _successors(code: list[Instr], model: Model, index: dict[int, int], flows: list[Flow]
                ) -> list[list[int]]:  # fmt: skip
    """Where control may go after each instruction (whose :class:`Flow` is ``flows``), as
    instruction indices."""
    out: list[list[int]] = []
    indirect: list[int] | None = None
    for i, ins in enumerate(code):
        kind = flows[i]
        succ: list[int] = []
        if kind in (Flow.COND, Flow.JUMP) and ins.target is not None and ins.target in index:
            succ.append(index[ins.target])
        if kind in (Flow.FALL, Flow.COND) and i + 1 < len(code):
            succ.append(i + 1)
        if kind is Flow.INDIRECT:
            if indirect is None:
                indirect = _indirect_targets(code, model, index)
            succ = indirect
        out.append(succ)
    return out


def _blocks(code: list[Instr], flows: list[Flow], successors: list[list[int]]) -> dict[int, int]:
    """The basic blocks: first instruction -> one past the last. A block starts at the entry,
    at every branch target and after every instruction that does not simply fall through."""
    leaders = {0}
    for i, flow in enumerate(flows):
        if flow is not Flow.FALL:
            leaders.update(successors[i])
            leaders.add(i + 1)
    starts = sorted(x for x in leaders if x < len(code))
    return dict(zip(starts, [*starts[1:], len(code)], strict=True))


def check_function(name: str, code: list[Instr], model: Model) -> list[Violation]:
    """Run the taint analysis of one function to a fixpoint; return its violations. States are
    kept at the entries of basic blocks only: inside a block each instruction's state follows
    from the one before it, so stepping through the block from its entry state is the same
    analysis at a fraction of the copies."""
    if not code:
        return []
    index = {ins.address: i for i, ins in enumerate(code)}
    flows = [model.flow(ins) for ins in code]
    successors = _successors(code, model, index, flows)
    blocks = _blocks(code, flows, successors)
    states: dict[int, State] = {0: model.entry()}
    # pending blocks, lowest address first: a loop's body is walked once per change of its
    # header's state instead of once per path that reaches it
    work = [0]
    pending = {0}
    found: dict[tuple[int, str], Violation] = {}
    while work:
        first = heapq.heappop(work)
        pending.discard(first)
        cur = states[first].copy()
        last = blocks[first] - 1
        for ins in code[first : last + 1]:
            report: list[tuple[Instr, str]] = []
            model.step(ins, cur, report)
            for bad, why in report:
                found[(bad.address, why)] = Violation(name, bad.address, bad.text, why)
        for j in successors[last]:
            sj = states.get(j)
            if sj is None:
                states[j] = cur.copy()
            elif not sj.join(cur):
                continue
            if j not in pending:
                pending.add(j)
                heapq.heappush(work, j)
    return sorted(found.values(), key=lambda v: v.address)


def check_object(
    obj: Path,
    arch: str = "x86_64",
    functions: Iterable[str] | None = None,
    objdump: str | None = None,
) -> list[Violation]:
    """Check every function (or the named ones) of a compiled object file for ``arch`` (a key
    of :data:`ARCHES`); ``objdump`` overrides the disassembler. Returns the violations found,
    by function and address."""
    model = ARCHES[arch]()
    funcs = disassemble(obj, model, objdump)
    names = list(functions) if functions is not None else list(funcs)
    out: list[Violation] = []
    for name in names:
        if name not in funcs:
            raise KeyError(f"{obj} has no function {name}")
        out += check_function(name, funcs[name], model)
    return out
