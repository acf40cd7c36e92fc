"""16-bit broadcasts from tables as whole-vector loads, for ISAs where that saves instructions.

On x86, a broadcast of a 16-bit element from memory (``vpbroadcastw ymm, m16``) is two
operations, the load and a shuffle (Intel Emerald Rapids: four ``vpbroadcastw`` beside four
``vpshufb`` take the shuffle pipes twice as long as the shuffles alone), and even a broadcast
that is the load alone is an instruction of its own; a load of a whole vector folds into the
instruction that reads it as its memory operand. So where a 16-bit-lane function broadcasts
table entries at fixed indices (the twiddles of a transform's first layers, read once per
call), :func:`vector_broadcasts_for` reads them instead from a copy of just those entries,
each repeated over a whole vector (the lanes of the k-th vector all hold entry k), by aligned
vector loads. The loads read the same values into every lane as the broadcasts did, so every
interpreter reads the rewritten function as before. (Intel Emerald Rapids, gcc 12, which
reads these tables from memory through an opaque pointer: ML-KEM's AVX2 ``ntt`` 579 -> 522
instructions and 0.980 of the time, Kyber-r1's 0.986; clang, which turns the entries into
whole-vector constants of its own, is unchanged on AVX2. See docs/measurements.md.)
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

from ..dsl.ir import Affine, Function, Load, Loop, LoopVar, Stmt, Table, walk
from .isa.base import Isa

SUFFIX = "_v"


def spread(t: Table, entries: list[int], lanes: int) -> Table:
    """The ``entries`` of ``t``, in that order, each repeated over a whole vector of ``lanes``
    lanes (entry k at k*lanes .. k*lanes + lanes - 1), named ``t``'s name plus ``_v``."""
    at = {i: k for k, i in enumerate(entries)}
    notes = tuple((at[i] * lanes, text) for i, text in t.notes if i in at)
    doc = f"{t.doc} (each entry over a whole vector, for loads of a vector)"
    values = tuple(t.values[i] for i in entries for _ in range(lanes))
    return Table(t.name + SUFFIX, t.lane, values, notes=notes, doc=doc, constants=True)


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


def vector_broadcasts_for(fn: Function, isa: Isa) -> Function:
    """``fn`` as the backend ``isa`` reads its broadcasts of static table entries at fixed
    indices: where the ISA asks for it (:attr:`Isa.vector_broadcasts`) and ``fn`` has 16-bit
    lanes, a copy whose such broadcasts are aligned vector loads of a :func:`spread` copy of
    just those entries (a table no other load reads is dropped); otherwise ``fn`` itself.
    Broadcasts indexed by loop counters are left as they are: their entries spread over the
    whole table, whose copy would cost more static data than the loads save."""
    # 32-bit lanes are left alone: a 32-bit broadcast is one load already, and whole vectors
    # of ML-DSA's AVX-512 entries (6 KB more static data) took gcc's ntt 0.97 and clang's 1.02
    # times as long
    if not isa.vector_broadcasts or fn.lane.bits != 16:
        return fn
    reads: dict[Table, set[int]] = {}
    for s in walk(fn.body):
        if _fixed_broadcast(s):
            assert isinstance(s, Load) and isinstance(s.src, Table)
            reads.setdefault(s.src, set()).add(s.index.const)
    if not reads:
        return fn
    entries = {t: sorted(e) for t, e in reads.items()}
    L = fn.lanes
    copies = {t: spread(t, e, L) for t, e in entries.items()}
    # what is left of a table once its fixed broadcasts read the copy: the entries no load
    # reads any more are stored as 0 (no number in the file that nothing reads), and those
    # before the first whole vector and after the last entry still read are cut off (the
    # loads' indices move with them, by whole vectors: aligned loads stay aligned); a table
    # no load reads any more is dropped
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
                # the k-th vector of the copy: every lane holds entry k
                k = entries[s.src].index(s.index.const)
                s = replace(s, src=copies[s.src], index=Affine(k * L), broadcast=False)
            elif isinstance(s, Load) and s.src in kept:
                assert isinstance(s.src, Table)
                table, lo = kept[s.src]
                s = replace(s, src=table, index=replace(s.index, const=s.index.const - lo))
            out.append(s)
        return out

    tables = [kept[t][0] if t in kept else t for t in fn.tables if t not in reads or t in kept]
    return replace(fn, body=rewrite(fn.body), tables=[*tables, *copies.values()])
