"""Broadcast constants read where they are used (nttgen.emit.const_loads) and the in-frame
table copies of the C emitter.

x86 instructions take a memory operand, so a function with more broadcast constants than
registers reads each from a table next to the statement that uses it, instead of building
them all before its loops (where gcc spilled them). The rewrite must keep every result, and
the emitted C must keep the loads in the loops."""

from __future__ import annotations

import random
import re

import numpy as np

from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import Affine, Function, Load, Loop, LoopVar, Op, Stmt, walk
from nttgen.emit.const_loads import broadcast_constants, constants_from_memory
from nttgen.emit.ntru_files import generate_ntru
from nttgen.interp.evaluate import evaluate
from nttgen.lanes import I16
from nttgen.ntru_rings import get_ntru_ring
from nttgen.plan.constants import Arith

Q, L, N = 4591, 16, 64


def _program(n_consts: int) -> Function:
    """A loop over N/L vectors: each a sum of products by ``n_consts`` constant pairs (the
    constants made before the loop, as the NTRU Prime programs make theirs), one
    constant added once more outside it."""
    arith = Arith(Q, I16)
    S = Builder("f", arith, L)
    a = S.input("a", N, (-Q // 2, Q // 2))
    r = S.output("r", N)
    rng = random.Random(n_consts)
    pairs = [arith.twisted(rng.randrange(1, Q)) for _ in range(n_consts)]
    consts = [(S.const(z, "w"), S.const(zq, "wq")) for z, zq in pairs]
    extra = S.const(7, "k")

    def body(i: LoopVar) -> None:
        x = S.load(a, Affine.of(i) * L)
        acc = S.mulconst(x, *consts[0])
        for z, zq in consts[1:]:
            acc = S.barrett(S.add(acc, S.mulconst(x, z, zq)))
        S.store(r, Affine.of(i) * L, S.add(acc, extra))

    S.loop(N // L, body, hint="v")
    return S.finish()


def _blocks(body: list[Stmt]) -> list[list[Stmt]]:
    out = [body]
    for s in body:
        if isinstance(s, Loop):
            out += _blocks(s.body)
    return out


def test_constants_that_fit_in_registers_stay_broadcasts() -> None:
    """Up to one constant per register the function is returned as it is."""
    fn = _program(7)  # 15 distinct nonzero constants
    assert len(set(broadcast_constants(fn).values())) == 15
    assert constants_from_memory(fn, 16) is fn


def test_constants_beyond_the_registers_are_read_where_used() -> None:
    """With more distinct constants than registers, no nonzero ``const`` op is left; each
    statement that read one is preceded, in its own block, by an aligned load of it from one
    ``consts`` table (each value over L lanes, first appearance first); the original is
    untouched; and the exact evaluator gives the same outputs on random and extreme inputs."""
    fn = _program(12)
    values = list(dict.fromkeys(broadcast_constants(fn).values()))
    assert len(values) == 25
    before = sum(1 for _ in walk(fn.body))
    out = constants_from_memory(fn, 16)
    assert out is not fn and sum(1 for _ in walk(fn.body)) == before
    assert not any(
        isinstance(s, Op) and s.kind == "const" and dict(s.attrs)["value"] for s in walk(out.body)
    )
    (table,) = [t for t in out.tables if t.constants]
    assert table.name == "consts" and table.values == tuple(v for v in values for _ in range(L))
    loads = [s for s in walk(out.body) if isinstance(s, Load) and s.src is table]
    assert loads and all(s.index.const % L == 0 and not s.index.terms for s in loads)
    for block in _blocks(out.body):
        for k, s in enumerate(block):
            if isinstance(s, Load) and s.src is table:
                user = next(u for u in block[k + 1 :] if not isinstance(u, Load))
                assert s.result in getattr(user, "args", (getattr(user, "value", None),))
    arith = Arith(Q, I16)
    rng = np.random.default_rng(1)
    lo, hi = -(Q // 2), Q // 2
    batch = np.vstack(
        [rng.integers(lo, hi + 1, size=(6, N)), np.full((1, N), lo), np.full((1, N), hi)]
    )
    want = evaluate(fn, arith, {"a": batch}, checked=True)["r"]
    got = evaluate(out, arith, {"a": batch}, checked=True)["r"]
    assert np.array_equal(want, got)


def _function(source: str, name: str) -> str:
    start = source.index(f"static NTTGEN_NOINLINE void nttgen_sntrup761_avx2_{name}(")
    return source[start : source.index("\n}\n", start)]


def test_ntru_prime_avx2_reads_its_constants_in_its_loops() -> None:
    """sntrup761's AVX2 transforms (78 and 76 constants) build none before their loops: each
    loop body reads them through a pointer made opaque to gcc there, so gcc cannot hoist the
    loads and spill them. The base (no constants) and the portable C are unchanged."""
    source = generate_ntru(get_ntru_ring("sntrup761"), "avx2").source
    for name in ("forward", "inverse"):
        fn = _function(source, name)
        assert "keep(_mm256_set1_epi16(" not in fn, name
        loops = fn.split("    for (size_t ")[1:]
        reading = [body for body in loops if "_consts;" in body]
        assert reading, name
        for body in reading:
            pointer = re.search(r"const int16_t \*(consts_\d+) = \w+_consts;", body)
            assert pointer is not None
            assert f"NTTGEN_GCC_OPAQUE({pointer.group(1)});" in body
    assert "_consts" not in _function(source, "base")
    assert "_consts" not in generate_ntru(get_ntru_ring("sntrup761"), "c").source


def test_the_threshold_is_the_isa_register_file() -> None:
    """AVX-512 has 32 registers: its transforms (68 and 64 constants) read theirs from
    memory, the small operand's forward transform (18) keeps its broadcasts, which on AVX2
    (16 registers) it does not."""
    ring = get_ntru_ring("sntrup761")
    wide = generate_ntru(ring, "avx512").source
    for name in ("forward", "inverse"):
        assert f"nttgen_sntrup761_avx512_{name}_consts[" in wide, name
    assert "nttgen_sntrup761_avx512_forward_small_consts" not in wide
    assert "nttgen_sntrup761_avx2_forward_small_consts[" in generate_ntru(ring, "avx2").source
