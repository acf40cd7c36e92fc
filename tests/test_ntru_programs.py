"""NTRU Prime multiplication as generated code (nttgen.programs.ntru, nttgen.emit.ntru_files).

Checked three ways: the exact evaluator of the recorded programs and the compiled C of every
NTRU ISA (portable C, AVX2, NEON under QEMU) against an independent schoolbook product mod
(q, x^p - x - 1) over the integers, against galois over GF(q), and the SIMD C against the
portable C; on random, all-extreme, alternating, sparse and zero inputs. Each stage is also
checked alone against the ring map it lowers, every transfer application of the analysis is
proven, the objects are checked for constant time, and bad inputs and ISAs are refused.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import compiled_object, compilers_for, require_isa, require_tool
from nttgen.api import Kernel, load
from nttgen.ctcheck import check_object
from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import Function, Load, Loop, Store
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import (
    NTRU_ISAS,
    NTRU_PIPELINES,
    generate_ntru,
    line_thresholds,
    ntru_config,
    ntru_functions,
)
from nttgen.errors import InputError, IsaUnavailableError, NttgenError, UnknownNameError
from nttgen.interp.cost import count_ops
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16
from nttgen.ntru_rings import NTRU_PRESETS, get_ntru_ring, make_ntru_ring
from nttgen.plan.constants import Arith
from nttgen.plan.maps.good_thomas import GoodThomasMap
from nttgen.programs.ntru import (
    GoodRaderShape,
    NtruFunctions,
    build_good_rader,
    forward_signs,
    good_rader_shape,
    packs_last_group,
    pairs_fit,
    transpose,
)
from nttgen.programs.ntru_config import BaseProducts, LineThresholds, NtruConfig
from nttgen.programs.ntru_shift import build_shift_pipeline, shift_shape
from nttgen.programs.ntru_ternary import (
    _program_forward_two_loops,
    program_forward_rotated,
    program_forward_ternary,
    ternary_lines,
)
from nttgen.proofs import unproven
from nttgen.tuning import NTRU_CHOICES, NTRU_TUNED, NtruTuning
from test_ringmaps import ref_ntru as schoolbook  # exact integers, x^p = x + 1, centred

P, Q = 761, 4591
H = (Q - 1) // 2
LINES = NtruConfig(dft_lines=True)
ROOT = Path(__file__).resolve().parent.parent


def cases(p: int, q: int, seed: int) -> list[tuple[list[int], list[int], list[int]]]:
    """(a, b, s): random, every extreme, alternating extremes, sparse and zero operands."""
    h = (q - 1) // 2
    rng = random.Random(seed)
    out = []
    for _ in range(3):
        out.append(
            (
                [rng.randint(-h, h) for _ in range(p)],
                [rng.randint(-h, h) for _ in range(p)],
                [rng.randint(-1, 1) for _ in range(p)],
            )
        )
    out.append(([h] * p, [h] * p, [1] * p))
    out.append(([-h] * p, [h] * p, [-1] * p))
    out.append(([(-1) ** i * h for i in range(p)], [-h] * p, [(-1) ** i for i in range(p)]))
    sparse = [0] * p
    sparse[0], sparse[p - 1], sparse[p // 2] = h, -h, 1
    out.append((sparse, list(reversed(sparse)), [0] * (p - 1) + [1]))
    out.append(([0] * p, [rng.randint(-h, h) for _ in range(p)], [0] * p))
    return out


def _evaluate(
    p: int,
    q: int,
    lanes: int,
    seed: int,
    zip_group: int | None = None,
    products: BaseProducts = "karatsuba",
    cyclotomic: bool = True,
    dft_lines: bool = False,
    small_forward: bool = True,
    line_thresholds: LineThresholds | None = None,
    ternary_forward: bool = False,
    rotated_forward: bool = False,
    indexed_outputs: bool = False,
    looped_products: bool = False,
) -> NtruFunctions:
    config = NtruConfig(
        base_products=products,
        cyclotomic=cyclotomic,
        dft_lines=dft_lines,
        small_forward=small_forward,
        line_thresholds=line_thresholds,
        ternary_forward=ternary_forward,
        rotated_forward=rotated_forward,
        indexed_outputs=indexed_outputs,
        looped_products=looped_products,
    )
    fs = build_good_rader(p, q, Arith(q, I16), lanes, zip_group, config)
    # polymul_small transforms the small operand by its own DFT, or by the shared one
    assert ("forward_small" in fs.functions) == small_forward
    cs = cases(p, q, seed)
    a = np.array([c[0] for c in cs])
    b = np.array([c[1] for c in cs])
    s = np.array([c[2] for c in cs])
    arith = Arith(q, I16)
    big = evaluate(fs.functions["polymul"], arith, {"a": a, "b": b}, checked=True)["r"]
    small = evaluate(fs.functions["polymul_small"], arith, {"a": a, "b": s}, checked=True)["r"]
    for k, (x, y, z) in enumerate(cs):
        assert list(big[k]) == schoolbook(x, y, p, q), f"polymul case {k}"
        assert list(small[k]) == schoolbook(x, z, p, q), f"polymul_small case {k}"
    return fs


@pytest.mark.parametrize("products", ["karatsuba", "wide"])
@pytest.mark.parametrize(
    ("lanes", "zip_group"), [(1, None), (2, None), (8, None), (16, 3), (32, 3)]
)
def test_programs_compute_the_product(
    lanes: int, zip_group: int | None, products: BaseProducts
) -> None:
    """Checked evaluation (a lane overflow, double-width ones included, would raise) equals
    the schoolbook product (at 32 lanes: blocks of 32, DFT 17 x 3 and the Cooley–Tukey split
    of the base products), with the base's products by Karatsuba and as double-width sums.
    The transposes use the moves of the ISAs at that width: NEON's ``trn`` swaps at 8 lanes,
    x86's 128-bit-group zips at 16 and 32."""
    _evaluate(P, Q, lanes, seed=lanes, zip_group=zip_group, products=products)


@pytest.mark.parametrize(("lanes", "zip_group"), [(16, 3), (32, 3)])
def test_looped_wide_products_compute_the_product(lanes: int, zip_group: int | None) -> None:
    """The base's double-width sums as loops over each product's coefficients, reading the
    wrapped operand back from a scratch array: the same product under checked evaluation.
    Only split pieces take the loops (32 lanes); at 16 lanes the choice changes nothing."""
    looped = _evaluate(P, Q, lanes, 40 + lanes, zip_group, "wide", looped_products=True)
    base = looped.functions["base"]
    assert ("ye" in [b.name for b in base.locals]) == (lanes == 32)
    if lanes == 32:  # a loop over the coefficients inside the loop over the products
        assert any(
            isinstance(s, Loop) and any(isinstance(t, Loop) for t in s.body) for s in base.body
        )


@pytest.mark.parametrize(("lanes", "zip_group"), [(2, None), (16, 3), (16, None)])
def test_pair_sums_compute_the_product(lanes: int, zip_group: int | None) -> None:
    """The base as pair sums where a piece fills a register (16 lanes: x86's zips of 32-bit
    elements, or ``shuffle`` alone), and where it does not (2 lanes) the Karatsuba it falls
    back to: checked evaluation against the schoolbook product, for sntrup761 and for
    p = 857, q = 5167."""
    shape = good_rader_shape(P, Q, lanes)
    assert pairs_fit(shape) == (lanes == 16)
    _evaluate(P, Q, lanes, seed=40 + lanes, zip_group=zip_group, products="pairs")
    if lanes == 16:
        _evaluate(857, 5167, lanes, seed=857, zip_group=zip_group, products="pairs")


@pytest.mark.parametrize("lanes", [1, 16])
def test_polymul_small_through_the_shared_forward(lanes: int) -> None:
    """Where an ISA clears ``small_forward`` (AVX2 did until it had the ternary forward; the
    choice stays for an ISA that measures it so), polymul_small sends its small operand
    through the same forward DFT as the other one, and the file has no ``forward_small``:
    checked evaluation against the schoolbook product (the base then takes the big
    operand's range for both)."""
    _evaluate(P, Q, lanes, seed=60 + lanes, zip_group=3 if lanes == 16 else None,
              products="pairs", dft_lines=True, small_forward=False)  # fmt: skip
    fs = build_good_rader(
        P, Q, Arith(Q, I16), lanes, None, NtruConfig(small_forward=False)
    ).functions
    assert fs["base"].contract.inputs["b"] == fs["forward"].contract.outputs["r"]


@pytest.mark.parametrize(
    ("forward", "inverse"),
    [((None, 2), (None, None, 2)), ((3, 2), (2, 5, None)), ((2, 2), (2, 2, 2))],
    ids=["avx2", "mixed", "tight"],
)
@pytest.mark.parametrize("lanes", [1, 16])
def test_dfts_by_lines_with_a_threshold_per_pass(
    lanes: int, forward: tuple[int | None, int | None], inverse: tuple[int | None, ...]
) -> None:
    """Each pass of the DFTs as lines takes its own reducer threshold (``LineThresholds``,
    AVX2's tuned choice among them): every choice still multiplies correctly in checked
    evaluation (a lane overflow raises), and each pass's threshold reaches its pass."""

    def lines(fwd: tuple[int | None, ...], inv: tuple[int | None, ...]) -> LineThresholds:
        f = [None if k is None else k * Q for k in fwd]
        i = [None if k is None else k * Q for k in inv]
        return LineThresholds(forward=(f[0], f[1]), inverse=(i[0], i[1], i[2]))

    zip_group = 3 if lanes == 16 else None
    fs = _evaluate(P, Q, lanes, seed=70 + lanes, zip_group=zip_group, products="pairs",
                   dft_lines=True, small_forward=False,
                   line_thresholds=lines(forward, inverse))  # fmt: skip
    none = build_good_rader(P, Q, Arith(Q, I16), lanes, zip_group, NtruConfig(
        base_products="pairs", dft_lines=True, small_forward=False)).functions  # fmt: skip

    def reductions(functions: dict[str, Function], name: str) -> int:
        return count_ops(functions[name])["reductions"]

    for name in ("forward", "inverse"):
        assert reductions(fs.functions, name) != reductions(none, name), name


def test_avx2_thresholds_per_pass_reduce_less(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """AVX2's measured thresholds per pass (``NTRU_TUNED``) place fewer reductions in
    sntrup761's polymul than the one inverse threshold it replaced (4q in every pass): the
    op counter's 471 against 591 coarse reductions (611 against 845 when it was chosen,
    before the ternary and rotated forwards: the forward's twiddles now take the place of
    most of its frequencies pass's reductions, and the small operand's transform leaves the
    base's second input wider, which changes the base's output range and the inverse's
    reductions; 561 before the inverse's last pass became a loop, whose body reduces by the
    hull of its blocks' ranges where the straight-line pass left 30 narrower blocks
    alone)."""
    tuned = NTRU_TUNED[(P, Q, "avx2")]
    assert line_thresholds(tuned, Q) == LineThresholds(
        forward=(None, 2 * Q), inverse=(None, None, 2 * Q)
    )
    assert line_thresholds(NtruTuning(inverse_threshold_q=4), Q) is None
    ring = get_ntru_ring("sntrup761")
    per_pass = ntru_functions(ring, "avx2").functions["polymul"]
    monkeypatch.setitem(NTRU_TUNED, (P, Q, "avx2"), NtruTuning(inverse_threshold_q=4))
    one = ntru_functions(ring, "avx2").functions["polymul"]
    assert count_ops(per_pass)["barrett_coarse"] == 471
    assert count_ops(one)["barrett_coarse"] == 591


def test_base_products_refuses_an_unknown_choice() -> None:
    """A base-products name outside the three is refused by name, not read as Karatsuba."""
    with pytest.raises(ValueError, match=r"base products 'toom'.*karatsuba, wide, pairs"):
        build_good_rader(P, Q, Arith(Q, I16), 16, 3, NtruConfig(base_products="toom"))  # type: ignore[arg-type]


@pytest.mark.parametrize(("lanes", "zip_group"), [(1, None), (16, 3), (32, 3)])
def test_programs_modulo_the_whole_x_mn_minus_one(lanes: int, zip_group: int | None) -> None:
    """Without ``cyclotomic`` the programs multiply modulo the whole x^(m n) - 1, the pieces at
    Rader's zero frequency included (the shape a ring gets where Phi_r(x^(m n / r)) is too
    small for its product), and are right too."""
    shape = good_rader_shape(P, Q, lanes, cyclotomic=False)
    assert not shape.cyclotomic and len(shape.pieces) == shape.n
    assert shape.modulus == f"x^{shape.m * shape.n} - 1"
    _evaluate(P, Q, lanes, seed=40 + lanes, zip_group=zip_group, cyclotomic=False)


@pytest.mark.parametrize("cyclotomic", [True, False], ids=["phi", "whole"])
@pytest.mark.parametrize(("lanes", "zip_group"), [(1, None), (8, None), (16, 3), (32, 3)])
def test_dfts_by_lines_compute_the_product(
    lanes: int, zip_group: int | None, cyclotomic: bool
) -> None:
    """The DFTs as loops over lines (``dft_lines``: one axis kernel per loop body, scratch
    arrays between the passes) give the schoolbook product too, modulo Phi_17(x^96) and modulo
    the whole x^1632 - 1, at every lane count (blocks of 32 at 32 lanes: DFT 17 x 3)."""
    _evaluate(
        P, Q, lanes, seed=60 + lanes, zip_group=zip_group, cyclotomic=cyclotomic, dft_lines=True
    )
    if lanes == 16 and cyclotomic:
        _evaluate(857, 5167, lanes, seed=858, dft_lines=True)


@pytest.mark.parametrize("cyclotomic", [True, False], ids=["phi", "whole"])
@pytest.mark.parametrize(("lanes", "zip_group"), [(1, None), (8, None), (16, 3), (32, 3)])
def test_ternary_forward_computes_the_product(
    lanes: int, zip_group: int | None, cyclotomic: bool
) -> None:
    """polymul_small with its small operand transformed by sums of exact products and
    twiddles (``ternary_forward``, :mod:`nttgen.programs.ntru_ternary`): checked evaluation
    (a lane overflow raises) against the schoolbook product at every lane count, modulo
    Phi_17(x^96) and the whole x^1632 - 1, straight-line and looped DFTs for the other
    operand, and for p = 857, q = 5167."""
    _evaluate(P, Q, lanes, seed=70 + lanes, zip_group=zip_group, cyclotomic=cyclotomic,
              dft_lines=lanes != 8, ternary_forward=True)  # fmt: skip
    if lanes == 16 and cyclotomic:
        _evaluate(857, 5167, lanes, seed=859, dft_lines=True, ternary_forward=True)


@pytest.mark.parametrize("cyclotomic", [True, False], ids=["phi", "whole"])
@pytest.mark.parametrize(("lanes", "zip_group"), [(1, None), (8, None), (16, 3), (32, 3)])
def test_rotated_forward_computes_the_product(
    lanes: int, zip_group: int | None, cyclotomic: bool
) -> None:
    """The forward DFT as the ternary forward's two loops with Rader's algorithm on each
    line's nonzero blocks (``rotated_forward``: no grid, twiddles in the frequencies pass):
    checked evaluation against the schoolbook product at every lane count, modulo Phi_17(x^96)
    and the whole x^1632 - 1, with and without the ternary forward for the small operand,
    and for p = 857, q = 5167; it writes the same pieces as the forward through the grid."""
    _evaluate(P, Q, lanes, seed=80 + lanes, zip_group=zip_group, cyclotomic=cyclotomic,
              dft_lines=True, ternary_forward=lanes != 8, rotated_forward=True)  # fmt: skip
    if lanes == 16 and cyclotomic:
        _evaluate(857, 5167, lanes, seed=860, dft_lines=True, rotated_forward=True)
        grid = build_good_rader(P, Q, Arith(Q, I16), lanes, None, LINES).functions
        rot = build_good_rader(
            P, Q, Arith(Q, I16), lanes, None, NtruConfig(dft_lines=True, rotated_forward=True)
        ).functions
        rng = random.Random(81)
        x = {"a": np.array([rng.randint(-H, H) for _ in range(P)])}
        want = evaluate(grid["forward"], Arith(Q, I16), x, checked=True)["r"][0]
        got = evaluate(rot["forward"], Arith(Q, I16), x, checked=True)["r"][0]
        assert ((got - want) % Q == 0).all()
        assert "grid" not in {b.name for b in rot["forward"].locals}


@pytest.mark.parametrize("cyclotomic", [True, False], ids=["phi", "whole"])
@pytest.mark.parametrize(("lanes", "zip_group"), [(1, None), (8, None), (16, 3), (32, 3)])
def test_indexed_outputs_compute_the_product(
    lanes: int, zip_group: int | None, cyclotomic: bool
) -> None:
    """The inverse's last pass as a loop reading its blocks' Good–Thomas positions from
    tables of offsets (``indexed_outputs``): checked evaluation against the schoolbook
    product at every lane count, modulo Phi_17(x^96) (groups of six blocks, one per top
    block) and the whole x^1632 - 1 (no tops: one block per iteration), and for p = 857,
    q = 5167; its outputs are the straight-line pass's residues, within the bound the fold
    relies on, and its tables hold every output block's position once."""
    _evaluate(P, Q, lanes, seed=90 + lanes, zip_group=zip_group, cyclotomic=cyclotomic,
              dft_lines=True, rotated_forward=lanes != 8, indexed_outputs=True)  # fmt: skip
    if lanes == 16 and cyclotomic:
        _evaluate(857, 5167, lanes, seed=861, dft_lines=True, indexed_outputs=True)
        shape = good_rader_shape(P, Q, lanes)
        fs = {
            flag: build_good_rader(
                P, Q, Arith(Q, I16), lanes, None, NtruConfig(dft_lines=True, indexed_outputs=flag)
            ).functions["inverse"]
            for flag in (False, True)
        }
        rng = random.Random(91)
        lo, hi = fs[True].contract.inputs["c"]
        x = {"c": np.array([rng.randint(lo, hi) for _ in range(shape.rows * shape.m)])}
        x["c"][: shape.m] = hi  # an extreme row too
        want = evaluate(fs[False], Arith(Q, I16), x, checked=True)["r"]
        got = evaluate(fs[True], Arith(Q, I16), x, checked=True)["r"]
        # the same residues (reduced where each pass's ranges said: a loop body sees the
        # hull of its blocks' ranges), within the output bound the fold relies on
        assert ((got - want) % Q == 0).all()
        lo, hi = fs[True].contract.outputs["r"]
        assert lo <= got.min() and got.max() <= hi <= Arith(Q, I16).lane.max // 3
        tables = [t for t in fs[True].tables if t.name.startswith("out_at")]
        assert len(tables) == 6 and all(len(t.values) == 16 for t in tables)
        where = shape.map.in_perm
        assert sorted(v for t in tables for v in t.values) == sorted(
            where[j] * shape.m for j in range(shape.blocks_out)
        )


@pytest.mark.parametrize("isa", NTRU_ISAS)
def test_indices_depend_on_counters_and_public_tables(isa: str) -> None:
    """Constant time by construction, for every NTRU Prime stage as each ISA builds it: every
    memory index is affine in the counters of the loops around it, plus at most one offset
    read by such a counter from a table of the function's own, fixed at generation time and
    as long as the loop (the inverse with ``indexed_outputs`` reads its output positions
    so)."""
    looked_up = 0

    def check(fn: Function, body: list, trips: dict) -> None:  # type: ignore[type-arg]
        nonlocal looked_up
        for st in body:
            if isinstance(st, Loop):
                check(fn, st.body, {**trips, st.var: st.count.const})
            elif isinstance(st, Load | Store):
                assert all(v in trips for v in st.index.loop_vars), (fn.name, st)
                if st.index.lookup is not None:
                    looked_up += 1
                    table, var = st.index.lookup.table, st.index.lookup.var
                    assert any(t is table for t in fn.tables)
                    assert len(table.values) == trips[var] and min(table.values) >= 0

    ring = get_ntru_ring("sntrup761")
    for fn in ntru_functions(ring, isa).functions.values():
        check(fn, fn.body, {})
    assert (looked_up > 0) == ntru_config(ring, isa).indexed_outputs


@pytest.mark.parametrize("lanes", [1, 16])
def test_ternary_forward_writes_the_pieces(lanes: int) -> None:
    """The ternary forward writes exactly the pieces the looped forward writes (as residues),
    for every input in [-1, 1] pattern tried (random, all -1, all 1, one nonzero coefficient
    at each end), multiplies only by ``mullo`` in its sums (one per nonzero block and kept
    frequency) and refuses inputs outside [-1, 1]."""
    shape = good_rader_shape(P, Q, lanes)
    fs = build_good_rader(
        P, Q, Arith(Q, I16), lanes, None, NtruConfig(dft_lines=True, ternary_forward=True)
    ).functions
    rng = random.Random(lanes)
    unit_low, unit_high = [1] + [0] * (P - 1), [0] * (P - 1) + [-1]
    for s in ([rng.randint(-1, 1) for _ in range(P)], [-1] * P, [1] * P, unit_low, unit_high):
        x = {"a": np.array(s)}
        got = evaluate(fs["forward_small"], Arith(Q, I16), x, checked=True)["r"][0]
        want = evaluate(fs["forward"], Arith(Q, I16), x, checked=True)["r"][0]
        assert ((got - want) % Q == 0).all()
    ops = count_ops(fs["forward_small"])
    lines = ternary_lines(shape)
    width = shape.n // shape.axes[0]
    nonzero = sum(1 for row in lines.sums for g in row if g not in (1, Q - 1))
    assert ops.get("mullo", 0) == nonzero * width * shape.m // lanes
    S = Builder("bad", Arith(Q, I16), lanes, "")
    with pytest.raises(ValueError, match=r"needs inputs in \[-1, 1\]"):
        program_forward_ternary(S, shape, (-2, 2))


@pytest.mark.parametrize("lanes", [1, 16])
def test_rotated_forward_writes_the_pieces(lanes: int) -> None:
    """``program_forward_rotated`` takes the whole centred range and writes the pieces the
    looped forward writes (as residues), for random, all -H, all H and alternating inputs, by
    Rader's algorithm: fewer Montgomery products than the sums of the same two loops take on
    that range (which the public ternary form refuses)."""
    shape = good_rader_shape(P, Q, lanes)
    arith = Arith(Q, I16)
    looped = build_good_rader(P, Q, arith, lanes, None, LINES).functions["forward"]
    S = Builder("forward", arith, lanes, "")
    S.unroll_default = lanes > 1
    program_forward_rotated(S, shape, (-H, H))
    rotated = S.finish()
    rng = random.Random(7 * lanes)
    alternating = [H if i % 2 else -H for i in range(P)]
    for s in ([rng.randint(-H, H) for _ in range(P)], [-H] * P, [H] * P, alternating):
        x = {"a": np.array(s)}
        got = evaluate(rotated, arith, x, checked=True)["r"][0]
        want = evaluate(looped, arith, x, checked=True)["r"][0]
        assert ((got - want) % Q == 0).all()
    sums = Builder("forward", arith, lanes, "")
    sums.unroll_default = lanes > 1
    _program_forward_two_loops(sums, shape, (-H, H), (None, None), rader=False)
    assert count_ops(rotated)["montmul"] < count_ops(sums.finish())["montmul"]
    with pytest.raises(ValueError, match=r"needs inputs in \[-1, 1\]"):
        program_forward_ternary(Builder("bad", arith, lanes, ""), shape, (-H, H))


@pytest.mark.parametrize("lanes", [1, 16])
def test_dft_by_lines_writes_the_pieces(lanes: int) -> None:
    """The looped forward writes each piece itself (sign +1), row by row in map order, and
    zero padding rows; its stage is a few loops, not the whole trace unrolled."""
    shape = good_rader_shape(P, Q, lanes)
    fs = build_good_rader(P, Q, Arith(Q, I16), lanes, None, LINES).functions
    rng = random.Random(lanes)
    for a in ([rng.randint(-H, H) for _ in range(P)], [H] * P, [-1] * P):
        got = evaluate(fs["forward"], Arith(Q, I16), {"a": np.array(a)}, checked=True)["r"][0]
        m = shape.m
        pieces = GoodThomasMap(Q, m, shape.axes).forward(a + [0] * (m * shape.n - P))
        for row, k in enumerate(shape.pieces):
            piece = [x % Q for x in got[row * m : (row + 1) * m]]
            assert piece == [x % Q for x in pieces[k]], f"piece {k}"
        assert not got[len(shape.pieces) * m :].any()
    straight = build_good_rader(P, Q, Arith(Q, I16), lanes).functions
    for name in ("forward", "inverse"):
        # each kernel is a loop body, so it appears once: far fewer statements
        assert 2 * statements(fs[name].body) < statements(straight[name].body), name


def statements(body: list) -> int:  # type: ignore[type-arg]
    """Statements of a program body, those inside loops counted once."""
    return sum(1 + statements(st.body) if isinstance(st, Loop) else 1 for st in body)


def test_cyclotomic_shape_only_where_the_product_fits() -> None:
    """Phi_17(x^96) has degree 1536 >= 2p - 1 = 1521 for p = 761: granted, 96 pieces (none at
    Rader's zero frequency) in 96 rows at 16 lanes instead of 102 in 112; for p = 787
    (2p - 1 = 1573 > 1536) the shape keeps x^1632 - 1, and asking for it directly is refused
    with the rule."""
    shape = good_rader_shape(P, Q, 16)
    assert (shape.cyclotomic, shape.modulus, len(shape.pieces), shape.rows) == (
        True,
        "Phi_17(x^96)",
        96,
        96,
    )
    assert all(shape.map.points[k][0][0] != 0 for k in shape.pieces)
    assert not good_rader_shape(787, Q, 16).cyclotomic
    with pytest.raises(ValueError, match=r"Phi_17\(x\^96\) is too small for p = 787"):
        GoodRaderShape(787, Q, 16, (17, 3, 2), 16, cyclotomic=True)


def _check_compiled(k: Kernel, ref: Kernel, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both products of ``k`` on :func:`cases` against the schoolbook product and ``ref`` (a
    portable C kernel); returns (a, b, polymul(a, b))."""
    cs = cases(P, Q, seed=seed)
    a, b, s = (np.array([c[i] for c in cs]) for i in range(3))
    big, small = k.polymul(a, b), k.polymul_small(a, s)
    for i, (x, y, z) in enumerate(cs):
        assert list(big[i]) == schoolbook(x, y, P, Q), f"{k.isa} polymul case {i}"
        assert list(small[i]) == schoolbook(x, z, P, Q), f"{k.isa} polymul_small case {i}"
    assert (big == ref.polymul(a, b)).all() and (small == ref.polymul_small(a, s)).all()
    return a, b, big


# every choice of the base's products an ISA can emit, other than its default (pairs: x86)
OTHER_PRODUCTS = [
    (isa, choice)
    for isa in NTRU_ISAS
    for choice in ("karatsuba", "wide", "pairs")
    if choice != NTRU_CHOICES[isa].get("base_products", "karatsuba")
    and (choice != "pairs" or isa in ("avx2", "avx512"))
]
# the text only each choice emits
PRODUCT_MARKERS = {"karatsuba": None, "wide": "_mredw(", "pairs": "_pair_mred("}


def test_compiled_wide_products_unrolled() -> None:
    """AVX-512's base by double-width sums (not its default pair sums) with the products of
    its split pieces unrolled, the other way from the loops over their coefficients that
    test_compiled_base_products runs: against the schoolbook product, the exact evaluator of
    the same program and the default portable C."""
    require_isa("avx512")
    ring = get_ntru_ring("sntrup761")
    assert ntru_config(ring, "avx512").looped_products
    config = dataclasses.replace(
        ntru_config(ring, "avx512"), base_products="wide", looped_products=False
    )
    k = Kernel(ring, "avx512", files=generate_ntru(ring, "avx512", config=config))
    assert "_mredw(" in k.files.source and "ye[" not in k.files.source
    looped = dataclasses.replace(config, looped_products=True)
    assert "ye[" in generate_ntru(ring, "avx512", config=looped).source
    a, b, big = _check_compiled(k, load("sntrup761", "c"), seed=43)
    fs = ntru_functions(ring, "avx512", config=config)
    exact = evaluate(fs.functions["polymul"], Arith(Q, I16), {"a": a, "b": b}, checked=True)
    assert (big == exact["r"]).all()


@pytest.mark.parametrize(("isa", "choice"), OTHER_PRODUCTS)
def test_compiled_base_products(isa: str, choice: BaseProducts) -> None:
    """Each ISA's C with the base's products made each other way it can emit, so that every
    form runs compiled on every backend that has it (every backend's ``madd``, ``addw`` and
    ``mredw``; Karatsuba on AVX-512, NEON and AVX2, whose defaults are the sums). Against the
    schoolbook product, the exact evaluator of the same program and the default portable C."""
    require_isa(isa)
    ring = get_ntru_ring("sntrup761")
    config = dataclasses.replace(ntru_config(ring, isa), base_products=choice)
    k = Kernel(ring, isa, files=generate_ntru(ring, isa, config=config))
    for other, marker in PRODUCT_MARKERS.items():
        if marker is not None:
            assert (marker in k.files.source) == (other == choice), (other, marker)
    a, b, big = _check_compiled(k, load("sntrup761", "c"), seed=len(isa) + len(choice))
    fs = ntru_functions(ring, isa, config=config)
    exact = evaluate(fs.functions["polymul"], Arith(Q, I16), {"a": a, "b": b}, checked=True)
    assert (big == exact["r"]).all()


@pytest.mark.parametrize("isa", [i for i in NTRU_ISAS if not isa_class(i).op_groups])
def test_a_schedule_asking_for_pair_sums_is_refused_where_not_emitted(isa: str) -> None:
    """A schedule that asks for the pair products on an ISA that does not declare the
    ``pair_sums`` op group is refused by name before anything is built, never emitted as
    something else."""
    config = dataclasses.replace(
        ntru_config(get_ntru_ring("sntrup761"), isa), base_products="pairs"
    )
    with pytest.raises(IsaUnavailableError, match=f"which {isa} does not emit"):
        ntru_functions(get_ntru_ring("sntrup761"), isa, config=config)


OTHER_WAYS = {
    # NtruConfig field: (text only its True form emits, seed)
    "dft_lines": ("freqs[", 21),
    "coarse_reductions": ("_barrett_coarse(", 23),
    "small_forward": ("_forward_small(", 25),
    "ternary_forward": ("_forward_small_tw[", 27),
    "rotated_forward": ("_forward_tw[", 29),
    "indexed_outputs": ("_inverse_out_at0[", 31),
}


@pytest.mark.parametrize("flag", list(OTHER_WAYS))
@pytest.mark.parametrize("isa", NTRU_ISAS)
def test_compiled_both_ways(isa: str, flag: str) -> None:
    """Each ISA's C with a choice the other way from its default, so that both forms run
    compiled on every backend: the DFTs (loops over lines where it keeps the straight-line
    trace, and the reverse). Against the schoolbook product, the exact evaluator of the same
    program and the default portable C."""
    require_isa(isa)
    ring = get_ntru_ring("sntrup761")
    tuned = ntru_config(ring, isa)
    other = not getattr(tuned, flag)
    config = dataclasses.replace(tuned, **{flag: other})
    if flag in ("rotated_forward", "indexed_outputs") and other:
        # the rotated forward and the indexed outputs are forms of the DFTs as lines
        config = dataclasses.replace(config, dft_lines=True)
    marker, seed = OTHER_WAYS[flag]
    k = Kernel(ring, isa, files=generate_ntru(ring, isa, config=config))
    assert (marker in k.files.source) == other
    a, b, big = _check_compiled(k, load("sntrup761", "c"), seed=len(isa) + seed)
    fs = ntru_functions(ring, isa, config=config)
    exact = evaluate(fs.functions["polymul"], Arith(Q, I16), {"a": a, "b": b}, checked=True)
    assert (big == exact["r"]).all()


@pytest.mark.parametrize("elem_bits", [0, 1])
@pytest.mark.parametrize(
    ("lanes", "zip_group"), [(2, None), (4, 2), (8, 3), (8, None), (16, 3), (16, None), (32, 3)]
)
def test_transpose_is_a_transpose(lanes: int, zip_group: int | None, elem_bits: int) -> None:
    """``transpose`` of R rows of R elements of 2^elem_bits lanes gives out[c] element e =
    row e element c, with zips inside groups of 2^zip_group lanes (the relabelling of rows
    and columns it works out) or swaps."""
    arith = Arith(Q, I16)
    E = 1 << elem_bits
    R = lanes // E
    S = Builder("tr", arith, lanes, "transpose")
    src = S.input("a", R * lanes, (-H, H), doc="rows")
    dst = S.output("r", R * lanes, doc="columns")
    rows = [S.load(src, r * lanes) for r in range(R)]
    for c, v in enumerate(transpose(S, rows, zip_group, elem_bits)):
        S.store(dst, c * lanes, v)
    fn = S.finish()
    x = np.arange(R * lanes).reshape(1, R * lanes) - R * lanes // 2
    got = evaluate(fn, arith, {"a": x})["r"].reshape(R, R, E)
    assert (got == x.reshape(R, R, E).transpose(1, 0, 2)).all()


@pytest.mark.parametrize("lanes", [1, 16])
def test_another_parameter_set(lanes: int) -> None:
    """p = 857, q = 5167 (NTRU Prime's sntrup857): the plan's own sizes, same program."""
    _evaluate(857, 5167, lanes, seed=857)


@pytest.mark.parametrize(
    ("lanes", "products", "looped"),
    [
        (16, "karatsuba", False),
        (16, "pairs", False),
        (32, "karatsuba", False),
        (32, "wide", False),
        (32, "wide", True),
        (32, "pairs", True),
    ],
)
def test_forward_and_base_stages_alone(lanes: int, products: BaseProducts, looped: bool) -> None:
    """forward's row k is the map's piece k times the trace's sign; base's row k is the
    product of the rows mod x^m - t_k, times beta^-1 (and times 2 where the base splits
    the pieces: at 32 lanes, where every t_k is a square), whichever way it multiplies."""
    shape = good_rader_shape(P, Q, lanes)
    assert (shape.m, shape.axes, shape.base_scale) == (
        (16, (17, 3, 2), 1) if lanes == 16 else (32, (17, 3), 2)
    )
    config = NtruConfig(base_products=products, looped_products=looped)
    fs = build_good_rader(P, Q, Arith(Q, I16), lanes, 3, config)
    gt = GoodThomasMap(Q, shape.m, shape.axes)
    rng = random.Random(7)
    a = [rng.randint(-H, H) for _ in range(P)]
    b = [rng.randint(-H, H) for _ in range(P)]
    arith = Arith(Q, I16)
    fa = evaluate(fs.functions["forward"], arith, {"a": np.array(a)}, checked=True)["r"][0]
    fb = evaluate(fs.functions["forward"], arith, {"a": np.array(b)}, checked=True)["r"][0]
    pad = a + [0] * (shape.m * shape.n - P)
    pieces = gt.forward(pad)
    signs = forward_signs(shape)
    assert set(signs) <= {1, -1}
    m = shape.m
    # Phi_17(x^(m n / 17)): the rows are the pieces off Rader's zero frequency, in map order
    assert shape.cyclotomic and shape.pieces == [k for k, (i, _) in enumerate(gt.points) if i[0]]
    for row, k in enumerate(shape.pieces):
        got = [int(x) * signs[row] % Q for x in fa[row * m : (row + 1) * m]]
        assert got == [x % Q for x in pieces[k]], f"piece {k}"
    assert not fa[len(shape.pieces) * m :].any()  # the padding rows
    prod = evaluate(fs.functions["base"], arith, {"a": fa, "b": fb}, checked=True)["r"][0]
    assert not prod[len(shape.pieces) * m :].any()  # the padding rows
    rinv = shape.base_scale * pow(1 << 16, -1, Q)
    for k, t in enumerate(shape.points):
        x, y = fa[k * m : (k + 1) * m], fb[k * m : (k + 1) * m]
        want = [0] * m
        for i in range(m):
            for j in range(m):
                f = t if i + j >= m else 1
                want[(i + j) % m] += int(x[i]) * int(y[j]) * f
        assert [int(v) % Q for v in prod[k * m : (k + 1) * m]] == [w * rinv % Q for w in want], (
            f"product {k}"
        )


@pytest.mark.parametrize(("products", "looped"), [("wide", False), ("wide", True), ("pairs", True)])
def test_split_base_shares_a_half_group_between_the_last_halves(
    products: BaseProducts, looped: bool
) -> None:
    """At 32 lanes sntrup761's 48 pieces take 64 rows: the last group's 16 pieces fill half
    its lanes, so its two halves (mod x^16 - s_k and x^16 + s_k) are multiplied in one
    half-group: the products' loops run 3 trips, not 4. At 16 lanes nothing is split."""
    assert not packs_last_group(good_rader_shape(P, Q, 16))
    shape = good_rader_shape(P, Q, 32)
    assert (len(shape.pieces), shape.rows) == (48, 64) and packs_last_group(shape)
    config = NtruConfig(base_products=products, looped_products=looped)
    base = build_good_rader(P, Q, Arith(Q, I16), 32, 3, config).functions["base"]
    trips = [s.count.const for s in base.body if isinstance(s, Loop) and s.var.hint == "half"]
    assert trips == ([3, 3] if looped else [3])


def test_every_transfer_application_is_proven() -> None:
    """The bounds the programs rely on: each (op, input ranges) -> output range the analysis
    used is proven exhaustively over 16-bit inputs (nttgen.proofs)."""
    for lanes, products in ((1, "karatsuba"), (16, "karatsuba"), (16, "pairs")):
        fs = build_good_rader(P, Q, Arith(Q, I16), lanes, 3, NtruConfig(base_products=products))  # type: ignore[arg-type]
        arith = Arith(Q, I16)
        count, failed = unproven(fs.functions.values(), arith)
        assert count > 10
        assert not failed, failed[:3]


@pytest.mark.parametrize("vlen", [256, 512, 1024])
def test_strip_mined_rvv_at_every_vlen(vlen: int) -> None:
    """The VLEN-agnostic RVV code (strip-mined: vl chosen at run time) on wider cores than the
    128 bits of test_compiled_kernels: the DFT strips then cover the whole block of 16 in one
    vl and the pieces' loop takes 16, 32 or 64 pieces at a time (strided loads)."""
    require_isa("rvv")
    k = load("sntrup761", "rvv", vlen=vlen)
    cs = cases(P, Q, seed=vlen)
    a = np.array([c[0] for c in cs])
    b = np.array([c[1] for c in cs])
    s = np.array([c[2] for c in cs])
    big, small = k.polymul(a, b), k.polymul_small(a, s)
    for i, (x, y, z) in enumerate(cs):
        assert list(big[i]) == schoolbook(x, y, P, Q), f"vlen {vlen} polymul case {i}"
        assert list(small[i]) == schoolbook(x, z, P, Q), f"vlen {vlen} polymul_small case {i}"
    with pytest.raises(IsaUnavailableError, match="vlen applies to riscv64 only"):
        load("sntrup761", "c", vlen=vlen)


def test_contracts() -> None:
    """Proven ranges: inputs as the scheme stores them, outputs centred."""
    fs = build_good_rader(P, Q, Arith(Q, I16), 16).functions
    assert fs["polymul"].contract.inputs == {"a": (-H, H), "b": (-H, H)}
    assert fs["polymul_small"].contract.inputs == {"a": (-H, H), "b": (-1, 1)}
    for name in ("polymul", "polymul_small"):
        assert fs[name].contract.outputs == {"r": (-H, H)}


# --------------------------------------------------------------------------- compiled C
@pytest.mark.parametrize("isa", NTRU_ISAS)
@pytest.mark.parametrize("ring", list(NTRU_PRESETS), ids=str)
def test_compiled_kernels(isa: str, ring: str) -> None:
    """Each ISA's C against the schoolbook product and the portable C; one case against
    galois polynomial arithmetic over GF(q) as well."""
    require_isa(isa)
    k = load(ring, isa)
    ref = load(ring, "c")
    cs = cases(P, Q, seed=len(isa))
    a = np.array([c[0] for c in cs])
    b = np.array([c[1] for c in cs])
    s = np.array([c[2] for c in cs])
    big, small = k.polymul(a, b), k.polymul_small(a, s)
    for i, (x, y, z) in enumerate(cs):
        assert list(big[i]) == schoolbook(x, y, P, Q), f"{isa} polymul case {i}"
        assert list(small[i]) == schoolbook(x, z, P, Q), f"{isa} polymul_small case {i}"
    assert (big == ref.polymul(a, b)).all() and (small == ref.polymul_small(a, s)).all()
    galois = pytest.importorskip("galois")
    gf = galois.GF(Q)
    f = galois.Poly([1] + [0] * (P - 2) + [Q - 1, Q - 1], field=gf)  # x^p - x - 1

    def poly(v: list[int]) -> object:
        return galois.Poly([x % Q for x in reversed(v)], field=gf)

    want = (poly(cs[0][0]) * poly(cs[0][1])) % f
    coeffs = [int(x) for x in reversed(want.coeffs)] + [0] * P
    assert [x % Q for x in big[0]] == coeffs[:P]


SHIFT_CASES = [(pipe, lanes) for pipe in ("good-schoenhage-bruun", "schoenhage-nussbaumer")
               for lanes in (1, 8, 16, 32)]  # fmt: skip


def _evaluate_shift(pipeline: str, p: int, q: int, lanes: int, seed: int) -> None:
    zip_group = 3 if lanes >= 16 else None
    fs = build_shift_pipeline(pipeline, p, q, Arith(q, I16), lanes, zip_group)
    cs = cases(p, q, seed)
    a, b, s = (np.array([c[i] for c in cs]) for i in range(3))
    arith = Arith(q, I16)
    big = evaluate(fs.functions["polymul"], arith, {"a": a, "b": b}, checked=True)["r"]
    small = evaluate(fs.functions["polymul_small"], arith, {"a": a, "b": s}, checked=True)["r"]
    for k, (x, y, z) in enumerate(cs):
        assert list(big[k]) == schoolbook(x, y, p, q), f"{pipeline} polymul case {k}"
        assert list(small[k]) == schoolbook(x, z, p, q), f"{pipeline} polymul_small case {k}"
    for name in ("polymul", "polymul_small"):
        assert fs.functions[name].contract.outputs == {"r": (-(q // 2), q // 2)}


@pytest.mark.parametrize(("pipeline", "lanes"), SHIFT_CASES)
def test_schoenhage_programs_compute_the_product(pipeline: str, lanes: int) -> None:
    """The Schönhage pipelines' programs, in checked evaluation (a lane overflow raises),
    equal the schoolbook product on random, extreme, alternating, sparse and zero inputs, at
    every lane count the ISAs use (1: portable C and strip-mined RVV, 8: NEON, 16: AVX2, 32:
    AVX-512, where Good–Schönhage–Bruun's pieces double to x^64 + 1)."""
    _evaluate_shift(pipeline, P, Q, lanes, seed=lanes)


@pytest.mark.parametrize(
    ("pipeline", "p", "q", "lanes"),
    [
        ("schoenhage-nussbaumer", 653, 4621, 8),  # truncated Schönhage; no other pipeline
        ("schoenhage-nussbaumer", 857, 5167, 16),  # cyclic Schönhage on x^2048 - 1
        ("good-schoenhage-bruun", 857, 5167, 32),
    ],
)
def test_schoenhage_programs_on_other_rings(pipeline: str, p: int, q: int, lanes: int) -> None:
    """Other NTRU Prime parameter sets through the Schönhage programs."""
    _evaluate_shift(pipeline, p, q, lanes, seed=p)


def test_schoenhage_forward_matches_the_map() -> None:
    """The forward stage's leaves are the checked map's (pieces in lanes), coefficient by
    coefficient, for both Schönhage pipelines."""
    from nttgen.plan.maps.pipelines import build_pipeline

    rng = random.Random(5)
    for pipeline in ("good-schoenhage-bruun", "schoenhage-nussbaumer"):
        lanes = 8
        shape = shift_shape(pipeline, P, Q, lanes)
        fs = build_shift_pipeline(pipeline, P, Q, Arith(Q, I16), lanes)
        x = [rng.randint(-H, H) for _ in range(P)]
        got = evaluate(fs.functions["forward"], Arith(Q, I16), {"a": np.array([x])})["r"][0]
        want = build_pipeline(pipeline, P, Q).forward(x)
        LC = shape.leaf_length
        for k in range(shape.n):
            g, lane = divmod(k, lanes)
            leaves = [want[k * len(shape.leaves) + t] for t in range(len(shape.leaves))]
            flat = [c for leaf in leaves for c in leaf]
            mine = [int(got[(g * LC + i) * lanes + lane]) % Q for i in range(LC)]
            assert mine == [c % Q for c in flat], f"{pipeline} piece {k}"


@pytest.mark.parametrize("isa", NTRU_ISAS)
@pytest.mark.parametrize("pipeline", ["good-schoenhage-bruun", "schoenhage-nussbaumer"])
def test_compiled_schoenhage_pipelines(isa: str, pipeline: str) -> None:
    """Each ISA's C of the Schönhage pipelines against the schoolbook product, their portable
    C and the default pipeline's portable C."""
    require_isa(isa)
    k = load("sntrup761", isa, pipeline=pipeline)
    ref = load("sntrup761", "c", pipeline=pipeline)
    a, b, big = _check_compiled(k, ref, seed=len(isa) + len(pipeline))
    assert (big == load("sntrup761", "c").polymul(a, b)).all()
    assert k.manifest["pipeline"] == pipeline


def test_refusals() -> None:
    """Inputs outside the contract, wrong shapes, ISAs and pipelines without NTRU code are
    refused with the rule named, never computed."""
    k = load("sntrup761", "c")
    with pytest.raises(InputError, match=r"\[-2295, 2295\]"):
        k.polymul([2296] * P, [0] * P)
    with pytest.raises(InputError, match=r"\[-1, 1\]"):
        k.polymul_small([0] * P, [2] * P)
    with pytest.raises(InputError, match="p = 761"):
        k.polymul([0] * 760, [0] * 760)
    with pytest.raises(IsaUnavailableError, match="not yet for rvv256"):
        ntru_functions(get_ntru_ring("sntrup761"), "rvv256")
    with pytest.raises(IsaUnavailableError, match="64 lanes do not divide 16"):
        build_good_rader(P, Q, Arith(Q, I16), 64)
    with pytest.raises(UnknownNameError, match="unknown pipeline 'fft'"):
        load("sntrup761", "c", pipeline="fft")
    with pytest.raises(NttgenError, match=r"q=4621 = 1 .mod 4."):  # Bruun needs q = 3 mod 4
        ntru_functions(make_ntru_ring(653, 4621), "c", "good-schoenhage-bruun")
    with pytest.raises(NttgenError, match="Rader"):  # p = 653, q = 4621: no Good–Rader plan
        ntru_functions(make_ntru_ring(653, 4621), "c", "good-rader-bruun")


def test_header_names_generator_command_and_ring() -> None:
    files = generate_ntru(get_ntru_ring("sntrup761"), "avx2")
    head = files.source[:600]
    assert "generated by nttgen" in head
    assert "nttgen generate --ring sntrup761 --isa avx2" in head
    assert "x^761 - x - 1" in head and "q = 4591" in head
    meta = json.loads(files.manifest)
    assert meta["ring"]["p"] == 761 and meta["isa"]["lanes"] == 16


@pytest.mark.parametrize("pipeline", NTRU_PIPELINES)
@pytest.mark.parametrize("isa", NTRU_ISAS)
def test_objects_are_constant_time(isa: str, pipeline: str) -> None:
    """No branch or address on data and no division in any function of the compiled objects
    (the entry points, the stages they call, kept out of line, and the helpers unoptimised
    code calls; gcc and clang, -O0 and -O3, compiled warning-free with the strict flags),
    statically (nttgen.ctcheck), for every pipeline."""
    require_tool("objdump")
    files = generate_ntru(get_ntru_ring("sntrup761"), isa, pipeline)
    arch = isa_class(isa).arch or "x86_64"
    for compiler in compilers_for(isa):
        for opt in ("-O0", "-O3"):
            violations = check_object(compiled_object(compiler, isa, files, opt), arch)
            assert not violations, f"{compiler} {opt}: " + "\n".join(map(str, violations[:10]))


def test_stages_take_distinct_arrays_declared_restrict() -> None:
    """The internal stages never get one array for two parameters: the builder refuses such a
    call, so their C parameters can be ``restrict`` (without it gcc kept the inverse DFT's
    column loop scalar: sntrup761 portable polymul 50,071 -> 23,093 ticks with it)."""
    fs = build_good_rader(P, Q, Arith(Q, I16), 16).functions
    for name in ("forward", "forward_small", "base", "inverse", "fold"):
        assert fs[name].distinct_buffers, name
    S = Builder("caller", Arith(Q, I16), 16)
    rows = good_rader_shape(P, Q, 16).rows * 16
    x = S.local("x", rows)
    S.call(fs["forward"], r=x, a=S.input("a", P, (-H, H)))
    with pytest.raises(ValueError, match=r"restrict.*different array"):
        S.call(fs["base"], r=x, a=x, b=x)
    source = generate_ntru(get_ntru_ring("sntrup761"), "c").source
    assert f"int16_t r[restrict {good_rader_shape(P, Q, 1).rows * 16}]" in source
    # the entry points keep plain parameters: a caller may pass r == a
    assert "void nttgen_sntrup761_c_polymul(int16_t r[761], const int16_t a[761]" in source


def test_pair_base_reads_its_tables_from_a_frame_copy() -> None:
    """The AVX2 base (pair sums) copies its t_k tables into its frame and reads the copy
    through an opaque pointer, so that no compiler reads the static tables instead: read from
    static data between the loop's stack stores, they made that stage up to 1.6x slower,
    depending on where the caller's stack lay (docs/design.md). The op counter includes the
    copy (a load and a store per vector). The other ISAs' bases read the static tables: a
    copy measured slower in the portable C and is not measured on the others."""
    ring = get_ntru_ring("sntrup761")
    source = generate_ntru(ring, "avx2").source
    start = source.index("static NTTGEN_NOINLINE void nttgen_sntrup761_avx2_base(")
    base = source[start : source.index("\n}\n", start)]
    loop = base[base.index("for (size_t grp_0") :]
    for name in ("t", "tq"):
        assert f"NTTGEN_ALIGN(64) int16_t {name}_frame_0[192];" in base
        # copied a vector at a time: a copy loop became `rep movsq` with gcc, as slow as the
        # rest of the stage's gap to clang
        assert f"const int16_t *const {name}_src_0 = nttgen_sntrup761_avx2_base_{name};" in base
        rows = re.findall(
            rf"const __m256i ({name}_row_\d+) = _mm256_load_si256\(\(const __m256i \*\)"
            rf"&{name}_src_0\[(\d+)\]\);\n    _mm256_storeu_si256\(\(__m256i \*\)"
            rf"&{name}_frame_0\[(\d+)\], (\w+)\);",
            base,
        )
        assert [(int(at), int(to)) for _, at, to, _ in rows] == [(k, k) for k in range(0, 192, 16)]
        assert all(row == stored for row, _, _, stored in rows)
        assert "for (size_t i_" not in base
        assert f"const int16_t *{name}_0 = {name}_frame_0;\n    NTTGEN_OPAQUE({name}_0);" in base
        assert f"&{name}_0[grp_0 * 16]" in loop
        assert f"nttgen_sntrup761_avx2_base_{name}[" not in loop
    assert "#define NTTGEN_OPAQUE(p) __asm__" in source

    base_fn = ntru_functions(ring, "avx2").functions["base"]
    frame = [t for t in base_fn.tables if t.in_frame]
    assert sorted(t.name for t in frame) == ["t", "tq"]
    plain = dataclasses.replace(
        base_fn, tables=[dataclasses.replace(t, in_frame=False) for t in base_fn.tables]
    )
    with_copy, without = count_ops(base_fn), count_ops(plain)
    assert with_copy["load"] - without["load"] == 2 * 192 // 16
    assert with_copy["store"] - without["store"] == 2 * 192 // 16
    for isa in ("c", "avx512", "neon", "rvv"):
        assert "_frame_" not in generate_ntru(ring, isa).source, isa


def test_frame_copies_need_whole_vectors() -> None:
    """A table copied into the frame is copied a vector at a time, so its length must be a
    whole number of vectors: the builder refuses another length by name."""
    S = Builder("f", Arith(Q, I16), 16)
    S.table("whole", list(range(32)), in_frame=True)
    with pytest.raises(ValueError, match=r"table part: a copy in the frame needs whole vectors"):
        S.table("part", list(range(24)), in_frame=True)
