"""Lane moves of the layout planner: swaps (``shuffle``) and grouped interleaves (``zip``).

* The semantics of ``zip`` (both directions) against the index-bit rotation the planner assumes
  (:meth:`nttgen.plan.layout.MemOrder.zip`), for every lane count, group and element width.
* The planner's choice of moves: valid plans (each butterfly finds its bit in a slot), never
  dearer than swaps alone, and the cheapest of every mix it enumerates.
* Transforms built with zips, evaluated exactly (products, native order, order conversions) and
  compiled for every ISA that implements ``zip``, including the moves the presets do not use
  (the byte-shuffle de-interleave of 16-bit elements on x86, ``zip``/``uzp`` on NEON).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

import nttgen
import nttgen.api as api
from conftest import require_isa
from nttgen.dsl import semantics
from nttgen.emit.isa import isa_class
from nttgen.families import clear_caches
from nttgen.generate import default_config, generate, kernel_set
from nttgen.interp.bounds import analyse
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import LANE_TYPES
from nttgen.plan.layout import (
    Butterfly,
    MemOrder,
    MoveCosts,
    Shuffle,
    Zip,
    _BadChoice,
    _plan_pass,
    apply_move,
    plan_forward,
    plan_pass,
)
from nttgen.programs.kernels import build_kernels
from nttgen.reference import schoolbook_batch
from nttgen.rings import PRESETS
from nttgen.verify import verify_kernel

# every zip made cheap, both ways (so that plans use them wherever they can)
ZIPS_EVERYWHERE = {
    16: MoveCosts(swap=((9, 9),) * 6, zip_group=3, zip=((1, 1), (2, 2), (3, 3))),
    32: MoveCosts(swap=((9, 9),) * 6, zip_group=2, zip=((1, 1), (2, 2))),
}


def _positions(order: MemOrder, lanes: int, slot: int) -> tuple[np.ndarray, np.ndarray]:
    """The logical positions held by the two registers that differ in position bit ``slot``
    (the others 0), lane by lane, in a memory order."""
    regs = []
    for r in (0, 1):
        regs.append(np.array([order.index(k + (r << slot)) for k in range(lanes)]))
    return regs[0], regs[1]


@pytest.mark.parametrize("lanes", [2, 4, 8, 16, 32])
def test_zip_moves_lanes_as_the_order_says(lanes: int) -> None:
    lane_bits = lanes.bit_length() - 1
    bits = lane_bits + 2
    rng = np.random.default_rng(lanes)
    for g in range(1, lane_bits + 1):
        for w in range(g):
            for inverse in (0, 1):
                perm = tuple(int(x) for x in rng.permutation(bits))
                order = MemOrder(perm)
                slot = lane_bits + 1
                a, b = _positions(order, lanes, slot)
                x, y = semantics.zip_lanes(w, g, inverse, a, b)
                after = order.zip(slot, w, g, inverse=bool(inverse))
                want = _positions(after, lanes, slot)
                assert np.array_equal(x, want[0]) and np.array_equal(y, want[1])
                # the inverse undoes, and the widest element is the swap at that distance
                u, v = semantics.zip_lanes(w, g, 1 - inverse, x, y)
                assert np.array_equal(u, a) and np.array_equal(v, b)
                if w == g - 1:
                    s0, s1 = semantics.shuffle(1 << (g - 1), a, b)
                    assert np.array_equal(x, s0) and np.array_equal(y, s1)
                src0, src1 = semantics.zip_lane_sources(w, g, inverse, lanes)
                regs = (a, b)
                assert list(x) == [regs[r][k] for r, k in src0]
                assert list(y) == [regs[r][k] for r, k in src1]


def test_zip_refuses_bad_shapes() -> None:
    a = np.arange(8)
    with pytest.raises(ValueError, match="w=3 < g=3"):
        semantics.zip_lanes(3, 3, 0, a, a)
    with pytest.raises(ValueError, match="2\\^g"):
        semantics.zip_lanes(0, 4, 0, a, a)


def _check_plan(plans: list, lane_bits: int, log_n: int) -> None:
    order = MemOrder.identity(log_n)
    for p in plans:
        assert p.order_in == order
        cur = p.order_in
        for st in p.steps:
            if isinstance(st, Butterfly):
                assert cur.perm[p.slots[st.slot]] == st.bit
                assert p.slots[st.slot] >= lane_bits
            else:
                assert isinstance(st, (Shuffle, Zip))
                if isinstance(st, Zip):
                    assert st.width < st.group <= lane_bits
                cur = apply_move(cur, p.slots, st)
        assert cur == p.order_out
        assert sorted(cur.perm) == list(range(log_n))
        order = p.order_out


@pytest.mark.parametrize("lane_bits,bits", [(3, 16), (4, 16), (5, 16), (2, 32), (3, 32)])
def test_planner_picks_the_cheapest_valid_moves(lane_bits: int, bits: int) -> None:
    """Plans with zips stay valid, cost no more than swaps alone, and a brute-force search
    over every mix of moves for the last pass finds nothing cheaper."""
    costs = isa_class("avx512" if lane_bits == 5 else "avx2").move_costs(LANE_TYPES[bits])
    costs = costs or ZIPS_EVERYWHERE[bits]
    log_n = 8
    for merge in ([4, 4], [2, 3, 3], [8], [3, 5]):
        for park in ((), (0,)):
            with_zips = plan_forward(log_n, 8, lane_bits, merge, park_bits=park, costs=costs)
            swaps = plan_forward(log_n, 8, lane_bits, merge, park_bits=park)
            _check_plan(with_zips, lane_bits, log_n)

            def cost(plans: list) -> int:
                return sum(
                    costs.of(st) for p in plans for st in p.steps if not isinstance(st, Butterfly)
                )

            assert cost(with_zips) <= cost(swaps)
            last = with_zips[-1]
            layers = list(last.layers)
            best = cost([last])
            moves = [st for st in last.steps if not isinstance(st, Butterfly)]
            options = ["swap", *range((costs.zip_group or 1) - 1)]
            for choices in itertools.product(options, repeat=len(moves)):
                try:
                    alt = _plan_pass(
                        last.order_in, layers, log_n, lane_bits, 0, 0, park,
                        zip_group=costs.zip_group, choices=choices,
                    )  # fmt: skip
                except _BadChoice:
                    continue
                assert cost([alt]) >= best or len(alt.slots) != len(last.slots)


def test_planner_without_zips_keeps_swaps() -> None:
    """An ISA without move costs (portable C, NEON, RVV) plans exactly as before."""
    order = MemOrder.identity(8)
    p = plan_pass(order, [4, 5, 6, 7], 8, 4)
    assert all(isinstance(st, (Butterfly, Shuffle)) for st in p.steps)
    none = MoveCosts(swap=((4, 4),) * 4)
    assert plan_pass(order, [4, 5, 6, 7], 8, 4, costs=none) == p


CASES = [("mlkem", 16), ("kyber-r1", 16), ("newhope512", 16), ("mldsa", 8), ("mlkem", 8)]


@pytest.mark.parametrize("name,lanes", CASES)
def test_transforms_with_zips_evaluate_exactly(name: str, lanes: int) -> None:
    ring = PRESETS[name]
    config = replace(
        default_config(ring, "avx2"),
        lanes=lanes,
        move_costs=ZIPS_EVERYWHERE[ring.lane.bits],
    )
    if lanes != default_config(ring, "avx2").lanes:
        config = replace(config, merge=None, extra_slots=None)
    ks = build_kernels(ring, config)
    steps = [st for p in ks.passes for st in p.steps]
    assert any(isinstance(st, Zip) and st.width == 0 for st in steps)
    rng = np.random.default_rng(3)
    a = rng.integers(-(ring.q - 1), ring.q, size=(3, ring.n))
    a[0] = ring.q - 1
    b = np.roll(a, 1, axis=0)
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
    nat = evaluate(ks.functions["ntt"], ks.arith, {"a": a[-1:]}, checked=True)["a"][0] % ring.q
    std = np.empty_like(nat)
    for p in range(ring.n):
        std[ks.order.index(p)] = nat[p]
    assert list(std) == ks.alg.reference_ntt(list(a[-1]))
    conv = evaluate(ks.functions["to_standard"], ks.arith, {"a": nat[None]})["a"][0]
    assert np.array_equal(conv, std)
    back = evaluate(ks.functions["from_standard"], ks.arith, {"a": std[None]})["a"][0]
    assert np.array_equal(back, nat)
    for fn in ks.functions.values():
        assert analyse(fn, ks.arith) == fn.contract.outputs


def test_presets_use_zips_on_x86_16bit_only() -> None:
    for name, isa in (("mlkem", "avx2"), ("newhope512", "avx512")):
        assert "_mm" in generate(PRESETS[name], isa).source
        steps = [st for p in kernel_set(PRESETS[name], isa).passes for st in p.steps]
        assert any(isinstance(st, Zip) for st in steps)
    for name, isa in (("mldsa", "avx2"), ("mlkem", "neon"), ("mlkem", "rvv128")):
        steps = [st for p in kernel_set(PRESETS[name], isa).passes for st in p.steps]
        assert not any(isinstance(st, Zip) for st in steps)


@pytest.mark.parametrize(
    "name,isa,style",
    [("mlkem", "avx2", None), ("newhope512", "avx2", None), ("mldsa", "avx2", None),
     ("mlkem", "avx512", None), ("mldsa", "avx512", None), ("mlkem", "neon", None),
     ("mldsa", "neon", None), ("mlkem", "rvv128", "slide"), ("mldsa", "rvv128", "slide"),
     ("mlkem", "rvv256", "slide"), ("mlkem", "rvv128", "compress"),
     ("mldsa", "rvv256", "compress")],
)  # fmt: skip
def test_every_zip_compiles_and_verifies(
    name: str, isa: str, style: str | None, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Every ISA's zip in both directions, at every element width it offers, compiled and
    checked by the full differential verification (presets use only some of them; RVV in
    both of its de-interleave styles, its presets' indexed loads set aside)."""
    require_isa(isa)
    ring = PRESETS[name]
    cls = isa_class(isa)
    own = cls.move_costs(ring.lane, style or "default")
    if own is not None and own.zip_group is not None:  # the ISA's own moves, zips made cheap
        costs = replace(own, zip=tuple((1, 1) for _ in own.zip))
    else:
        costs = ZIPS_EVERYWHERE[ring.lane.bits]
    monkeypatch.setattr(cls, "move_costs", classmethod(lambda c, lane, style="default": costs))
    if style:
        import nttgen.generate as gen

        monkeypatch.setitem(gen.TUNED, (name, isa), {"shuffles": style})
    clear_caches()
    api._LOADED.clear()
    try:
        steps = [st for p in kernel_set(ring, isa).passes for st in p.steps]
        assert any(isinstance(st, Zip) and st.width == 0 for st in steps)
        k = nttgen.load(ring, isa)
        results = verify_kernel(k, trials=4, seed=7)
        assert not [f"{r.name}: {r.failure}" for r in results if not r.ok]
    finally:
        clear_caches()
        api._LOADED.clear()
