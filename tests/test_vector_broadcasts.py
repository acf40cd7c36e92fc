"""16-bit broadcasts of table entries as whole-vector loads (nttgen.emit.vector_broadcasts).

On x86 a 16-bit broadcast from memory is a load and a shuffle, and a whole vector's load folds
into the instruction that reads it, so the emitter reads the twiddles that the unrolled
transforms broadcast from a copy of those entries, each repeated over a whole vector. The
rewrite must keep every entry's value in every lane (the compiled kernels' three-way checks run
on the files it shapes), touch only the fixed-index broadcasts of 16-bit functions on ISAs that
ask for it, and keep the static data small."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import Affine, Function, Load, LoopVar, Table, walk
from nttgen.emit.isa import isa_class
from nttgen.emit.isa.base import EmitContext, Isa
from nttgen.emit.vector_broadcasts import spread, vector_broadcasts_for
from nttgen.generate import generate
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16, I32
from nttgen.plan.constants import Arith
from nttgen.rings import get_ring

Q, L = 3329, 16
VALUES = [17, -1, -32768, 32767, 1729, -2, 0, 5]  # the extremes of a 16-bit entry
SMALL = [17, -1, -1000, 1000, 1729, -2, 0, 5]  # entries a program adds without overflow


def _backend(isa: str, lane: int = 16) -> Isa:
    return isa_class(isa)(EmitContext(Arith(Q, I16 if lane == 16 else I32), "t"))


def _program(lane: int = 16) -> Function:
    """Broadcasts of entries 3, 1 and 3 again at fixed indices, one broadcast per trip of a
    loop (entry 4 + i), and a vector load of the same table."""
    S = Builder("f", Arith(Q, I16 if lane == 16 else I32), L)
    a = S.input("a", 4 * L, (-Q, Q))
    r = S.output("r", 4 * L)
    t = S.table("w", SMALL + [0] * (2 * L - len(SMALL)), doc="entries")
    fixed = [S.load(t, k, broadcast=True) for k in (3, 1, 3)]
    S.store(r, 0, S.add(S.add(S.load(a, 0), fixed[0]), S.sub(fixed[1], fixed[2])))
    S.store(r, L, S.add(S.load(a, L), S.load(t, L)))

    def body(i: LoopVar) -> None:
        w = S.load(t, Affine.of(i) + 4, broadcast=True)
        S.store(r, Affine.of(i) * L + 2 * L, S.add(S.load(a, Affine.of(i) * L + 2 * L), w))

    S.loop(2, body, hint="i")
    return S.finish()


def _broadcasts(fn: Function) -> list[Load]:
    return [s for s in walk(fn.body) if isinstance(s, Load) and s.broadcast]


def test_spread_entries_fill_a_vector_each() -> None:
    """The k-th vector of a spread copy holds the k-th chosen entry in every lane, the
    extremes of a 16-bit entry included."""
    t = Table("w", I16, tuple(VALUES), notes=((4, "second half"),))
    chosen = [4, 0, 2]
    p = spread(t, chosen, L)
    assert p.lane == I16 and p.name == "w_v" and p.constants
    assert len(p.values) == len(chosen) * L
    for k, i in enumerate(chosen):
        assert p.values[k * L : (k + 1) * L] == (VALUES[i],) * L
    assert p.notes == ((0, "second half"),)


def test_fixed_broadcasts_read_a_copy_of_just_their_entries() -> None:
    """The two fixed entries (3 and 1, read three times) go to a two-vector copy, in index
    order, read by aligned vector loads; the loop's broadcast and the vector load keep the
    table."""
    fn = _program()
    out = vector_broadcasts_for(fn, _backend("avx2"))
    (copy,) = [t for t in out.tables if t.name == "w_v"]
    assert copy.values == (SMALL[1],) * L + (SMALL[3],) * L
    fixed = [s for s in walk(out.body) if isinstance(s, Load) and s.src is copy]
    assert [s.index.const for s in fixed] == [L, 0, L]  # entries 3, 1, 3
    assert not any(s.broadcast or s.index.terms for s in fixed)
    looped = _broadcasts(out)
    assert len(looped) == 1 and looped[0].index.terms
    # the 16-bit table stays for the loop's broadcast (entries 4, 5) and the vector load
    # (entries L .. 2L - 1), with the entries no load reads any more stored as 0
    (kept,) = [t for t in out.tables if t.name == "w"]
    live = {4, 5, *range(L, 2 * L)}
    original = fn.tables[0].values
    assert kept.values == tuple(v if i in live else 0 for i, v in enumerate(original))
    assert looped[0].src is kept and copy in out.tables


def test_the_table_left_is_cut_to_the_entries_still_read() -> None:
    """A table whose first vector only fixed broadcasts read loses that vector, and the
    loads that are left move down by it (still whole vectors: aligned loads stay aligned)."""
    S = Builder("h", Arith(Q, I16), L)
    a = S.input("a", 2 * L, (-Q, Q))
    r = S.output("r", 2 * L)
    t = S.table("w", SMALL + [0] * (3 * L - len(SMALL)), doc="entries")
    S.store(r, 0, S.add(S.load(a, 0), S.load(t, 2, broadcast=True)))
    S.store(r, L, S.add(S.load(a, L), S.load(t, 2 * L)))
    fn = S.finish()
    out = vector_broadcasts_for(fn, _backend("avx2"))
    (kept,) = [x for x in out.tables if x.name == "w"]
    assert kept.values == fn.tables[0].values[2 * L : 3 * L]
    (vector,) = [s for s in walk(out.body) if isinstance(s, Load) and s.src is kept]
    assert vector.index.const == 0
    a_in = np.random.default_rng(2).integers(-Q, Q + 1, size=(4, 2 * L))
    arith = Arith(Q, I16)
    before = evaluate(fn, arith, {"a": a_in}, checked=True)["r"]
    assert (evaluate(out, arith, {"a": a_in}, checked=True)["r"] == before).all()


def test_a_table_read_only_by_fixed_broadcasts_is_replaced() -> None:
    S = Builder("g", Arith(Q, I16), L)
    a = S.input("a", L, (-Q, Q))
    r = S.output("r", L)
    t = S.table("w", SMALL, doc="entries")
    S.store(r, 0, S.add(S.load(a, 0), S.load(t, 5, broadcast=True)))
    out = vector_broadcasts_for(S.finish(), _backend("avx512"))
    assert [x.name for x in out.tables] == ["w_v"]
    assert out.tables[0].values == (SMALL[5],) * L


def test_the_rewritten_function_computes_the_same() -> None:
    """The exact evaluator reads the loads of the spread copy as the broadcasts: same
    outputs."""
    fn = _program()
    out = vector_broadcasts_for(fn, _backend("avx2"))
    a = np.random.default_rng(1).integers(-Q, Q + 1, size=(8, 4 * L))
    arith = Arith(Q, I16)
    before = evaluate(fn, arith, {"a": a}, checked=True)["r"]
    assert (evaluate(out, arith, {"a": a}, checked=True)["r"] == before).all()


@pytest.mark.parametrize(("isa", "lane"), [("neon", 16), ("c", 16), ("avx2", 32)])
def test_other_isas_and_32_bit_lanes_are_left_alone(isa: str, lane: int) -> None:
    fn = _program(lane)
    assert vector_broadcasts_for(fn, _backend(isa, lane)) is fn


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_ml_kem_transforms_load_twiddle_vectors(isa: str) -> None:
    """The shipped ML-KEM files: the unrolled forward transform's broadcast twiddles are
    aligned loads of a small spread table; no 16-bit broadcast reads a table at a fixed index
    there, and the copy holds a few dozen vectors, not the twiddle table."""
    source = generate(get_ring("mlkem"), isa).source
    width = 256 if isa == "avx2" else 512
    m = re.search(r"static const int16_t nttgen_mlkem_\w+_v\[(\d+)\]", source)
    assert m is not None and int(m.group(1)) <= 64 * (width // 16)
    assert re.search(
        rf"_mm{width}_load_si{width}\(\(const __m{width}i \*\)&\w+_v_\d+\[\d+\]\)", source
    )
    assert not re.search(rf"_mm{width}_set1_epi16\(\w+\[\d+\]\)", source)
