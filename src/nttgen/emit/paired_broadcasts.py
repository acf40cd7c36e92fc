"""16-bit broadcasts from tables as 32-bit ones, for ISAs where that saves an instruction.

On x86, a broadcast of a 16-bit element from memory (``vpbroadcastw ymm, m16``) is two
operations, the load and a shuffle, where a broadcast of a 32-bit element (``vpbroadcastd``)
is the load alone (Intel Emerald Rapids: four ``vpbroadcastw`` beside four ``vpshufb`` take
the shuffle pipes twice as long as the shuffles alone; four ``vpbroadcastd`` add nothing).
The transforms are bound by their vector pipes, so where a 16-bit-lane
function broadcasts table entries (the twiddles of a transform's first layers, read once per
call), :func:`paired_broadcasts_for` reads them instead from a copy of the table whose 32-bit
entries hold each 16-bit entry in both halves: every 16-bit lane of the 32-bit broadcast then
holds the entry. The copy is the same entries (:attr:`Table.paired` changes only how the C
stores them), so every interpreter reads the rewritten function as before. (Intel
Emerald Rapids, gcc 12, which reads these tables from memory: Kyber-r1's AVX2 ``ntt`` 158 ->
155 ticks, its AVX-512 ``ntt`` 132 -> 128; clang, which turns them into whole-vector
constants of its own, is unchanged. See docs/measurements.md.)
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

from ..dsl.ir import Affine, Function, Load, Loop, LoopVar, Stmt, Table, walk
from .isa.base import Isa

SUFFIX = "_x2"


def paired(t: Table, entries: list[int]) -> Table:
    """The ``entries`` of ``t``, in that order, as a paired table (:attr:`Table.paired`:
    stored as words that hold each entry in both halves), named ``t``'s name plus ``_x2``."""
    at = {i: k for k, i in enumerate(entries)}
    notes = tuple((at[i], text) for i, text in t.notes if i in at)
    doc = f"{t.doc} (each entry in both halves of a word, for broadcasts of a word)"
    values = tuple(t.values[i] for i in entries)
    return Table(t.name + SUFFIX, t.lane, values, notes=notes, doc=doc, paired=True)


def _fixed_broadcast(s: Stmt) -> bool:
    """Whether ``s`` broadcasts an entry of a static table at a fixed index (no loop
    counter, no lookup: the unrolled transforms' twiddles)."""
    return (
        isinstance(s, Load)
        and s.broadcast
        and isinstance(s.src, Table)
        and not s.src.in_frame
        and not s.index.terms
        and s.index.lookup is None
    )


def _entries_read(body: list[Stmt], t: Table, lanes: int) -> set[int] | None:
    """Every entry of ``t`` a load in ``body`` other than a fixed broadcast reads, over every
    trip of its loops (None where a run-time trip count leaves that open)."""
    read: set[int] = set()

    def visit(body: list[Stmt], counts: dict[LoopVar, int | None]) -> bool:
        for s in body:
            if isinstance(s, Loop):
                # a run-time count with a cap reads no more than its cap's trips
                n = s.count.const if s.count.static else s.count.cap
                if not visit(s.body, {**counts, s.var: n}):
                    return False
            elif isinstance(s, Load) and s.src is t and not _fixed_broadcast(s):
                index = s.index
                loop_vars = [v for v, _ in index.terms]
                if index.lookup is not None and index.lookup.var not in loop_vars:
                    loop_vars.append(index.lookup.var)
                trips = [counts.get(v) for v in loop_vars]
                if any(n is None for n in trips):
                    return False
                width = (0,) if s.broadcast else (s.lanes_at or tuple(range(lanes)))
                for values in product(*(range(n) for n in trips if n is not None)):
                    at = dict(zip(loop_vars, values, strict=True))
                    e = index.const + sum(c * at[v] for v, c in index.terms)
                    if index.lookup is not None:
                        e += index.lookup.table.values[at[index.lookup.var]]
                    read.update(e + k for k in width)
        return True

    return read if visit(body, {}) else None


def paired_broadcasts_for(fn: Function, isa: Isa) -> Function:
    """``fn`` as the backend ``isa`` reads its 16-bit broadcasts: where it prefers 32-bit ones
    (:attr:`Isa.paired_broadcasts`) and ``fn`` has 16-bit lanes, a copy whose broadcasts of
    static table entries at fixed indices read a :func:`paired` copy of just those entries
    (a table no other load reads is dropped); otherwise ``fn`` itself. Broadcasts indexed by
    loop counters are left as they are: their entries spread over the whole table, whose
    32-bit copy would cost more static data than the loads save."""
    if not isa.paired_broadcasts or fn.lane.bits != 16:
        return fn
    reads: dict[Table, set[int]] = {}
    for s in walk(fn.body):
        if _fixed_broadcast(s):
            assert isinstance(s, Load) and isinstance(s.src, Table)
            reads.setdefault(s.src, set()).add(s.index.const)
    if not reads:
        return fn
    entries = {t: sorted(e) for t, e in reads.items()}
    copies = {t: paired(t, e) for t, e in entries.items()}
    # what is left of a table once its fixed broadcasts read the copy: the entries no load
    # reads any more are stored as 0 (no number in the file that nothing reads), and those
    # before the first whole vector and after the last entry still read are cut off (the
    # loads' indices move with them, by whole vectors: aligned loads stay aligned); a table
    # no load reads any more is dropped
    L = fn.lanes
    kept: dict[Table, tuple[Table, int]] = {}
    for t in reads:
        live = _entries_read(fn.body, t, L)
        if live is None:
            kept[t] = (t, 0)
        elif live:
            lo, hi = min(live) // L * L, max(live)
            values = tuple(t.values[i] * (i in live) for i in range(lo, hi + 1))
            notes = tuple((i - lo, text) for i, text in t.notes if lo <= i <= hi)
            kept[t] = (replace(t, values=values, notes=notes), lo)

    def rewrite(body: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, Loop):
                s = replace(s, body=rewrite(s.body))
            elif _fixed_broadcast(s):
                assert isinstance(s, Load) and isinstance(s.src, Table)
                at = Affine(entries[s.src].index(s.index.const))
                s = replace(s, src=copies[s.src], index=at)
            elif isinstance(s, Load) and s.src in kept:
                assert isinstance(s.src, Table)
                table, lo = kept[s.src]
                s = replace(s, src=table, index=replace(s.index, const=s.index.const - lo))
            out.append(s)
        return out

    tables = [kept[t][0] if t in kept else t for t in fn.tables if t not in reads or t in kept]
    return replace(fn, body=rewrite(fn.body), tables=[*tables, *copies.values()])
