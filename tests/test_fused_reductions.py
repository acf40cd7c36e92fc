"""The C emitter writes the sum of two Barrett reductions as one (the ISA's ``barrett_sum``:
x86 in 16-bit lanes) only where the two reductions come just before the sum and nothing else
reads them; the kernels built that way still equal the evaluator (``nttgen verify``)."""

from __future__ import annotations

import pytest

from nttgen.dsl.builder import Builder
from nttgen.dsl.ir import Affine, Function
from nttgen.emit import c_ast as C
from nttgen.emit.c_emit import CEmitter
from nttgen.emit.isa import isa_class
from nttgen.emit.isa.base import EmitContext
from nttgen.lanes import I16
from nttgen.plan.constants import Arith

ARITH = Arith(12289, I16)


def _program(shape: str) -> Function:
    """r = barrett(a) + barrett(b), with the reductions adjacent to the sum (``adjacent``),
    one of them stored as well (``reused``), or another op between them (``apart``)."""
    S = Builder("sum", ARITH, 16, "sum of two reductions")
    a = S.input("a", 16, (-30000, 30000))
    b = S.input("b", 16, (-30000, 30000))
    r = S.output("r", 16)
    x, y = S.load(a, Affine(0)), S.load(b, Affine(0))
    rx = S.barrett(x)
    if shape == "apart":
        S.store(r, Affine(0), S.mullo(x, y))
    ry = S.barrett(y)
    S.store(r, Affine(0), S.add(rx, ry))
    if shape == "reused":
        S.store(r, Affine(0), rx)
    return S.finish()


def _c(fn: Function, isa: str) -> str:
    backend = isa_class(isa)(EmitContext(ARITH, "t"))
    return C.Unit([CEmitter(fn, backend, lambda f: f.name, lambda f, t: t.name).emit()]).render()


@pytest.mark.parametrize(
    "shape,isa,fused",
    [
        ("adjacent", "avx2", True),
        ("adjacent", "avx512", True),
        ("adjacent", "c", False),  # no cheaper form: a multiply-subtract per reduction already
        ("adjacent", "neon", False),
        ("reused", "avx2", False),
        ("apart", "avx2", False),
    ],
)
def test_two_reductions_and_their_sum_fuse_only_when_nothing_else_needs_them(
    shape: str, isa: str, fused: bool
) -> None:
    text = _c(_program(shape), isa)
    assert ("t_barrett_add(" in text) == fused
    assert ("t_barrett(" in text) != fused
