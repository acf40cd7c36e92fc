"""The programs, run by the exact evaluator: correctness for every ring, every lane count and
layer-merge plan (the same programs future SIMD backends use), and the layout planner."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import ALL_RINGS, ring_id, ring_isa_cases
from nttgen.dsl.ir import ScalarParam
from nttgen.emit import c_ast as C
from nttgen.generate import kernel_set
from nttgen.interp.bounds import analyse
from nttgen.interp.evaluate import evaluate
from nttgen.plan.layout import Butterfly, MemOrder, Shuffle, plan_forward
from nttgen.programs.build_config import BuildConfig
from nttgen.programs.kernels import build_kernels
from nttgen.reference import schoolbook, schoolbook_batch
from nttgen.rings import PRESETS, make_ring
from nttgen.verify import coefficient_cases


def _inputs(n: int, q: int, seed: int, trials: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([a for _, a in coefficient_cases(n, q, rng, trials)])


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_evaluated_polymul_is_the_schoolbook_product(ring) -> None:  # type: ignore[no-untyped-def]
    ks = kernel_set(ring, "c")
    a = _inputs(ring.n, ring.q, 1)
    b = np.roll(a, 1, axis=0)
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_evaluated_ntt_is_evaluation_at_the_roots(ring) -> None:  # type: ignore[no-untyped-def]
    ks = kernel_set(ring, "c")
    a = _inputs(ring.n, ring.q, 2, trials=2)
    got = evaluate(ks.functions["ntt"], ks.arith, {"a": a}, checked=True)["a"] % ring.q
    for x, y in zip(a, got, strict=True):
        assert list(y) == ks.alg.reference_ntt(list(x))


@pytest.mark.parametrize("ring,isa", ring_isa_cases())
def test_the_in_place_ntt_is_the_out_of_place_one_on_one_array(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """Where the forward body is shared, ntt(a) calls ntt_from(a, a): with the two arrays one,
    every pass must still read each position before it stores it. Evaluated on one array and
    on two, on every ISA's pass plan (an ISA's lanes, merges, slots and gathers), the results
    are the same."""
    ks = kernel_set(ring, isa)
    a = _inputs(ring.n, ring.q, 5, trials=1)
    same = evaluate(ks.functions["ntt"], ks.arith, {"a": a}, checked=True)["a"]
    apart = evaluate(ks.functions["ntt_from"], ks.arith, {"a": a, "r": 0 * a}, checked=True)["r"]
    assert np.array_equal(same, apart)


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_replayed_analysis_reproduces_every_contract(ring) -> None:  # type: ignore[no-untyped-def]
    """The recorded IR alone (replayed through a fresh interval interpreter) proves the same
    output ranges the builder stated: no decision relied on anything but the analysis."""
    ks = kernel_set(ring, "c")
    for fn in ks.functions.values():
        assert analyse(fn, ks.arith) == fn.contract.outputs


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_contract_extremes_do_not_overflow(ring) -> None:  # type: ignore[no-untyped-def]
    """Every kernel on inputs at the ends of its input contract, in checked mode: no lane
    ever wraps where the analysis says it cannot, and outputs stay inside the contract."""
    ks = kernel_set(ring, "c")
    rng = np.random.default_rng(3)
    for fn in ks.functions.values():
        scalars = {p.name: 4 for p in fn.params if isinstance(p, ScalarParam)}
        inputs = {}
        for buf in fn.buffers:
            if buf.role not in ("in", "inout"):
                continue
            lo, hi = buf.contract  # type: ignore[misc]
            length = buf.length * (4 if buf.per_param else 1)
            picks = rng.integers(0, 3, size=(6, length))
            inputs[buf.name] = np.where(picks == 0, lo, np.where(picks == 1, hi, 0))
            inputs[buf.name][0] = lo
            inputs[buf.name][1] = hi
        out = evaluate(fn, ks.arith, inputs, scalars, checked=True)
        for name, arr in out.items():
            lo, hi = fn.contract.outputs[name]
            assert lo <= arr.min() and arr.max() <= hi, (fn.name, name)


VECTOR_CASES = [
    ("mlkem", 16, (1, 6), (2, 0)),
    ("mlkem", 32, (7,), None),
    ("mlkem", 8, (3, 4), None),
    ("mlkem", 16, (2, 2, 3), None),
    ("mlkem", 2, (1, 1, 1, 1, 1, 1, 1), None),
    ("mldsa", 8, (2, 3, 3), None),
    ("mldsa", 16, (8,), None),
    ("kyber-r1", 16, (1, 7), (2, 0)),
    ("newhope1024", 16, (3, 3, 4), None),
    ("newhope1024", 32, (5, 5), None),
    ("newhope512", 4, (9,), None),
    ("newhope512", 4, (4, 5), (1, 0)),
]


@pytest.mark.parametrize("name,lanes,merge,extra", VECTOR_CASES)
def test_vector_layouts(
    name: str, lanes: int, merge: tuple[int, ...], extra: tuple[int, ...] | None
) -> None:
    """The same programs with L lanes per value, merged layers and shuffles (as SIMD backends
    will run them), evaluated exactly: the product is right and the NTT, read through the
    native order the plan reports, is the ring's NTT."""
    ring = PRESETS[name]
    ks = build_kernels(ring, BuildConfig(lanes=lanes, merge=merge, extra_slots=extra))
    a = _inputs(ring.n, ring.q, 4, trials=2)
    b = np.roll(a, 3, axis=0)
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
    nat = evaluate(ks.functions["ntt"], ks.arith, {"a": a[-1:]}, checked=True)["a"][0] % ring.q
    std = np.empty_like(nat)
    for p in range(ring.n):
        std[ks.order.index(p)] = nat[p]
    assert list(std) == ks.alg.reference_ntt(list(a[-1]))
    for fn in ks.functions.values():
        assert analyse(fn, ks.arith) == fn.contract.outputs


GATHER_CASES = [
    ("mlkem", 8, (4, 3), (0, 1), "gs"),
    ("mlkem", 16, (4, 3), None, "dit"),
    ("kyber-r1", 16, (4, 4), None, "dit"),
    ("mldsa", 4, (4, 4), None, "gs"),
    ("newhope512", 8, (1, 4, 4), None, "gs"),
    ("newhope1024", 16, (2, 4, 4), (1, 0, 0), "dit"),
]


@pytest.mark.parametrize("name,lanes,merge,extra,network", GATHER_CASES)
def test_gathered_layouts(
    name: str, lanes: int, merge: tuple[int, ...], extra: tuple[int, ...] | None, network: str
) -> None:
    """Plans that move lane bits into slots by gathering at load time (and scattering the
    inverse's stores) compute the same kernels: exact product, the ring's NTT through the
    native order, the conversions to and from the standard order, proven contracts."""
    ring = PRESETS[name]
    park = (0,) if ring.base_degree == 2 else ()
    config = BuildConfig(
        lanes=lanes, merge=merge, extra_slots=extra, park_bits=park, gathers=True,
        intt_networks=(network,),  # type: ignore[arg-type]
    )  # fmt: skip
    ks = build_kernels(ring, config)
    assert any(p.gathered for p in ks.passes)
    assert not any(isinstance(st, Shuffle) for p in ks.passes for st in p.steps)
    a = _inputs(ring.n, ring.q, 7, trials=2)
    b = np.roll(a, 1, axis=0)
    got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
    assert np.array_equal(got, schoolbook_batch(a, b, ring.q))
    nat = evaluate(ks.functions["ntt"], ks.arith, {"a": a}, checked=True)["a"]
    std = evaluate(ks.functions["to_standard"], ks.arith, {"a": nat})["a"] % ring.q
    for x, y in zip(a, std, strict=True):
        assert list(y) == ks.alg.reference_ntt(list(x))
    back = evaluate(ks.functions["from_standard"], ks.arith, {"a": std})["a"]
    assert np.array_equal(back, nat % ring.q)
    inv = evaluate(ks.functions["intt"], ks.arith, {"a": nat}, checked=True)["a"]
    plain = build_kernels(ring, replace(config, gathers=False))
    plain_nat = evaluate(plain.functions["from_standard"], plain.arith, {"a": std})["a"]
    want = evaluate(plain.functions["intt"], plain.arith, {"a": plain_nat})["a"]
    assert np.array_equal(inv % ring.q, want % ring.q)
    for fn in ks.functions.values():
        assert analyse(fn, ks.arith) == fn.contract.outputs


@pytest.mark.parametrize("lane_bits", [1, 2, 3, 4])
def test_gathered_plans(lane_bits: int) -> None:
    """A gathered pass needs no lane move: the loaded order has every butterfly bit above
    the lanes, and the gather offsets read, for register r and lane k, the memory address
    (in the pass's input order) that holds the logical position the loaded order puts there;
    the chunk is stored as loaded, so the pass's output order is the loaded order."""
    log_n = 8
    for merge, park in (([4, 4], ()), ([4, 3], (0,)), ([2, 3, 3], ()), ([1, 3, 4], ())):
        depth = sum(merge)
        order = MemOrder.identity(log_n)
        for p in plan_forward(log_n, depth, lane_bits, merge, gather=True, park_bits=park):
            assert p.order_in == order
            assert not any(isinstance(st, Shuffle) for st in p.steps)
            loaded = p.loaded_order
            for st in p.steps:
                assert loaded.perm[p.slots[st.slot]] == st.bit  # type: ignore[union-attr]
            assert p.order_out == loaded
            registers, lanes = p.gather_offsets() if p.gathered else (None, None)
            if registers is not None:
                assert lanes is not None
                virtual = [sum(((r >> j) & 1) << s for j, s in enumerate(p.slots))
                           for r in range(p.registers)]  # fmt: skip
                loop_bits = [b for b in range(lane_bits, log_n) if b not in p.slots]
                for base_bits in range(1 << len(loop_bits)):
                    base = sum(((base_bits >> i) & 1) << b for i, b in enumerate(loop_bits))
                    for r in range(p.registers):
                        for lane in range(1 << lane_bits):
                            at = base + registers[r] + lanes[lane]
                            assert p.order_in.index(at) == loaded.index(base + virtual[r] + lane)
            order = p.order_out


def test_gather_offsets_are_checked() -> None:
    """The builder refuses lane offsets that are not L distinct non-negative numbers."""
    ks = build_kernels(PRESETS["mlkem"], BuildConfig(lanes=4))
    S = ks.builder("probe", "probe")
    a = S.inout("a", 256, (0, 3328))
    for bad in ((0, 1, 2), (0, 1, 1, 2), (-1, 0, 1, 2)):
        with pytest.raises(ValueError, match="must be 4 distinct non-negative offsets"):
            S.load(a, 0, lanes_at=bad)
    S.store(a, 8, S.load(a, 0, lanes_at=(0, 1, 2, 3)))  # consecutive: an ordinary access
    assert S.load(a, 0, lanes_at=(0, 4, 1, 5)) is not None


@pytest.mark.parametrize("lanes", [16, 32])
def test_vector_layouts_at_the_largest_q(lanes: int) -> None:
    for ring in (make_ring(256, 32257), make_ring(256, 2147483137)):
        ks = build_kernels(
            ring, BuildConfig(lanes=lanes if ring.lane.bits == 16 else lanes // 2, merge=(2, 3, 3))
        )
        a = _inputs(ring.n, ring.q, 5, trials=2)
        b = np.roll(a, 2, axis=0)
        got = evaluate(ks.functions["polymul"], ks.arith, {"a": a, "b": b}, checked=True)["r"]
        assert np.array_equal(got, schoolbook_batch(a, b, ring.q))


def test_basemul_acc_loop_orders_agree() -> None:
    ring = PRESETS["mlkem"]
    rng = np.random.default_rng(6)
    outs = []
    for outer in (True, False):
        ks = build_kernels(ring, BuildConfig(products_outer=outer))
        fn = ks.functions["basemul_acc"]
        lo, hi = fn.contract.inputs["a"]
        A = rng.integers(lo, hi + 1, size=(2, 5 * ring.n)) if not outs else outs[0][1]
        B = rng.integers(lo, hi + 1, size=(2, 5 * ring.n)) if not outs else outs[0][2]
        r = evaluate(fn, ks.arith, {"a": A, "b": B}, {"k": 5}, checked=True)["r"]
        outs.append((r, A, B))
    assert np.array_equal(outs[0][0] % ring.q, outs[1][0] % ring.q)


@pytest.mark.parametrize("lane_bits", [0, 1, 3, 4, 5])
def test_layout_planner(lane_bits: int) -> None:
    """Each butterfly runs on the slot that holds its layer's index bit; shuffles only swap a
    slot with a lane bit; the order is a permutation throughout."""
    log_n = 8
    for merge in ([1] * 8, [2, 3, 3], [4, 4], [8]):
        order = MemOrder.identity(log_n)
        for p in plan_forward(log_n, 8, lane_bits, merge):
            assert p.order_in == order
            cur = p.order_in
            for st in p.steps:
                if isinstance(st, Shuffle):
                    assert st.lane_bit < lane_bits
                    cur = cur.swap(p.slots[st.slot], st.lane_bit)
                else:
                    assert isinstance(st, Butterfly)
                    assert cur.perm[p.slots[st.slot]] == st.bit
                    assert p.slots[st.slot] >= lane_bits
            assert cur == p.order_out
            assert sorted(cur.perm) == list(range(log_n))
            order = p.order_out


def test_schoolbook_reference_is_exact() -> None:
    # (x^(n-1)) * x = x^n = -1 in Z_q[x]/(x^n + 1)
    n, q = 16, 97
    a = np.zeros(n, dtype=np.int64)
    b = np.zeros(n, dtype=np.int64)
    a[n - 1] = 1
    b[1] = 1
    want = np.zeros(n, dtype=np.int64)
    want[0] = q - 1
    assert np.array_equal(schoolbook(a, b, q), want)
    # big q: object arithmetic
    q = 2147483137
    a = np.full(n, q - 1)
    assert schoolbook(a, a, q)[0] == (sum((q - 1) ** 2 * (-1 if i else 1) for i in range(n))) % q


@pytest.mark.parametrize("unroll", [False, True])
def test_table_lookup_indices(unroll: bool) -> None:
    """An index may read one offset from a public table by a loop counter (the Good–Thomas
    output order of the NTRU Prime inverse is affine in no counter): the evaluator follows
    it, the C reads the file-scope table by the counter (or the offset itself where the loop
    is unrolled), and the misuses are refused by name."""
    from nttgen.dsl.builder import Builder
    from nttgen.dsl.ir import Affine, LoopVar
    from nttgen.emit.c_emit import CEmitter
    from nttgen.emit.isa import isa_class
    from nttgen.emit.isa.base import EmitContext
    from nttgen.lanes import I16
    from nttgen.plan.constants import Arith

    arith, L = Arith(3329, I16), 4
    perm = [5, 2, 7, 0, 3, 6, 1, 4]
    S = Builder("permute", arith, L, "blocks in a public order")
    a = S.input("a", 8 * L, (-1664, 1664))
    r = S.output("r", 8 * L)
    at = S.offsets("at", [b * L for b in perm])
    S.loop(8, lambda v: S.store(r, Affine.of(v) * L, S.load(a, Affine.looked_up(at, v))),
           hint="blk", unroll=unroll)  # fmt: skip
    fn = S.finish()
    x = np.arange(8 * L).reshape(1, -1) - 16
    got = evaluate(fn, arith, {"a": x}, checked=True)["r"][0]
    assert list(got) == [int(x[0, b * L + i]) for b in perm for i in range(L)]
    isa = isa_class("c")(EmitContext(arith, "t"))
    text = C.Unit([CEmitter(fn, isa, lambda f: f.name, lambda f, t: f"t_{t.name}").emit()]).render()
    # read through a constant pointer to the file-scope table (never an opaque one: the
    # constant-time check must see the offsets as public)
    assert ("const int32_t *const at_0 = t_at;" in text) != unroll
    assert ("a[at_0[blk_0]]" in text) != unroll
    if unroll:
        assert "a[20]" in text and "a[28]" in text  # blocks 5 and 7, read as constants
    v = LoopVar("i", 0)
    with pytest.raises(ValueError, match="at most one table lookup"):
        _ = Affine.looked_up(at, v) + Affine.looked_up(at, v)
    with pytest.raises(ValueError, match="does not scale"):
        _ = Affine.looked_up(at, v) * 2
    with pytest.raises(ValueError, match="has 8 entries, read at 8"):
        (Affine.looked_up(at, v) + 1).evaluate({v: 8})
    assert (Affine.looked_up(at, v) + 3).evaluate({v: 1}) == 2 * L + 3
    with pytest.raises(ValueError, match=r"offsets bad: need offsets in \[0, 2\^31\)"):
        S.offsets("bad", [0, -4])
