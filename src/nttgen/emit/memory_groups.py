"""Grouped loads: consecutive vectors loaded by one instruction.

AArch64 loads up to four consecutive registers with one ``ld1``, where compilers pair single
loads into ``ldp`` at best. The emitter records every plain load and store it writes
(:class:`Access`); after the function body is complete, :func:`group_loads` rewrites each block
of statements: loads of g consecutive vectors of one array at one variable index (constant
parts c, c + L, ..., c + (g - 1)L for L lanes) become one group load, placed where the first of
them was, and each original load becomes a read of its register of the group, where it was.

A load that moves up must not pass a statement that may write what it reads. The arrays passed
to one call are the same array or disjoint (an output may be an input of the same call, never
overlap one in part: docs/c-guide.md), so a store at the same variable index overlaps a load
only if their constant ranges do, whatever their arrays; a store at another variable index, a
call or a loop is assumed to. Tables are never written. A load that moves up also holds its
register longer than the program did: a group is formed only while such registers stay within
half the ISA's registers at every statement, so that the compiler need not spill. Only the
straight-line statements of one block are grouped, never across a loop boundary. Sizes are the
ISA's ``memory_groups``, largest first; the lowest constant part not yet grouped starts the
next group.

Stores are not grouped: the registers of a group must be consecutive, and values computed in
other registers would first be moved there (NEON under QEMU, grouped stores alone: ML-DSA
basemul_acc k = 5 2,140 -> 2,172 instructions, ML-KEM k = 3 1,137 -> 1,161). Nor does RVV
load register groups, although its accesses take no offset and each costs an address addition
besides (ML-DSA's pointwise product at VLEN 128 measured 714 -> 395 instructions): register i
of a group holds elements i*VLEN/SEW onwards, so code for VLEN = V that loads groups computes
wrong results on a core with a longer VLEN, where the VLEN-specialised backends promise to run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import c_ast as C
from .isa.base import Isa


@dataclass(frozen=True)
class Access:
    """One plain vector access (``vectors`` consecutive ones for a group): array ``base`` at
    the index ``variable`` + ``const`` (the variable part, which consecutive accesses share);
    ``table``: a file-scope table, never written."""

    base: C.Expr
    variable: C.Expr
    const: int
    table: bool = False
    vectors: int = 1

    @property
    def key(self) -> tuple[str, str]:
        """What the loads of one group have in common."""
        return C.format_expr(self.base), C.format_expr(self.variable)

    def index(self) -> C.Expr:
        """The full index."""
        return C.add(self.variable, C.Int(self.const))


@dataclass
class AccessLog:
    """The accesses an emitter wrote: loads by the name they are bound to, stores by the
    identity of their statement."""

    loads: dict[str, Access] = dataclasses.field(default_factory=dict)
    stores: dict[int, Access] = dataclasses.field(default_factory=dict)


def group_loads(
    block: Sequence[C.Stmt],
    log: AccessLog,
    isa: Isa,
    kernel: str,
    lanes: int,
    fresh: Callable[[str], str],
) -> list[C.Stmt]:
    """``block`` (and every loop body in it) of kernel ``kernel`` with the logged loads of
    consecutive vectors grouped as ``isa`` allows there (see the module's docstring); ``fresh``
    names a new local from a hint."""
    out = [
        dataclasses.replace(s, body=tuple(group_loads(s.body, log, isa, kernel, lanes, fresh)))
        if isinstance(s, C.For)
        else s
        for s in block
    ]
    sizes = isa.memory_groups_in(kernel)
    if not sizes:
        return out
    loads = {
        i: log.loads[s.name]
        for i, s in enumerate(out)
        if isinstance(s, C.Decl) and s.name in log.loads
    }

    def conflicts(p: int, load: Access) -> bool:
        """Whether statement p may write what ``load`` reads."""
        s = out[p]
        if id(s) in log.stores:
            return _overlap(log.stores[id(s)], load, lanes)
        return isinstance(s, C.ExprStmt | C.For | C.PP | C.CallStmt)

    before: dict[int, C.Stmt] = {}
    for where in _runs(loads, lanes, sizes, conflicts, budget=isa.registers // 2):
        g, first = len(where), loads[where[0]]
        name = fresh("g")
        load = isa.load_group(first.base, first.index(), g)
        before[min(where)] = C.Decl(isa.group_type(g), name, load, const=True)
        for part, p in enumerate(where):
            decl = out[p]
            assert isinstance(decl, C.Decl)
            out[p] = dataclasses.replace(decl, init=isa.group_part(C.Name(name), part, g))
    grouped: list[C.Stmt] = []
    for i, s in enumerate(out):
        if i in before:
            grouped.append(before[i])
        grouped.append(s)
    return grouped


def _runs(
    positions: dict[int, Access],
    lanes: int,
    sizes: tuple[int, ...],
    conflicts: Callable[[int, Access], bool],
    *,
    budget: int,
) -> list[list[int]]:
    """Groups of statement positions whose loads are consecutive vectors of one key: the
    lowest constant part first, each group as long as ``sizes`` allows. Grouping moves every
    load up to the group's first position: no statement it passes may conflict with it
    (``conflicts(p, load)``), and at no statement may the loads moved above it exceed
    ``budget``."""
    by_key: dict[tuple[str, str], dict[int, int]] = {}
    for pos, acc in positions.items():
        by_key.setdefault(acc.key, {}).setdefault(acc.const, pos)
    held: dict[int, int] = {}  # per statement, the loads moved above it
    groups: list[list[int]] = []
    for consts in by_key.values():
        taken: set[int] = set()
        for c in sorted(consts):
            if c in taken:
                continue
            for g in sizes:
                members = [c + j * lanes for j in range(g)]
                if any(m not in consts or m in taken for m in members):
                    continue
                where = [consts[m] for m in members]
                passed = [(p, positions[m]) for m in where for p in range(min(where) + 1, m)]
                passed = [(p, acc) for p, acc in passed if p not in where]
                if any(conflicts(p, acc) for p, acc in passed):
                    continue
                more: dict[int, int] = {}
                for p, _ in passed:
                    more[p] = more.get(p, 0) + 1
                if any(held.get(p, 0) + n > budget for p, n in more.items()):
                    continue
                for p, n in more.items():
                    held[p] = held.get(p, 0) + n
                taken.update(members)
                groups.append(where)
                break
    return groups


def _overlap(a: Access, b: Access, lanes: int) -> bool:
    """Whether two accesses may touch a common element (see the module's docstring)."""
    if a.table or b.table:
        return False
    if C.format_expr(a.variable) != C.format_expr(b.variable):
        return True
    return a.const < b.const + b.vectors * lanes and b.const < a.const + a.vectors * lanes


__all__ = ["Access", "AccessLog", "group_loads"]
