"""Every interpreter and every ISA backend implements the whole vocabulary with the same
parameters (operands positional, attributes keyword-only)."""

from __future__ import annotations

import inspect

import pytest

from nttgen.dsl.builder import Builder
from nttgen.dsl.vocab import OP_GROUPS, VOCABULARY, group_ops
from nttgen.emit.isa import ISAS
from nttgen.emit.isa.base import EmitContext, Isa
from nttgen.errors import IsaUnavailableError
from nttgen.interp.bounds import BoundsInterp
from nttgen.interp.evaluate import Evaluator
from nttgen.lanes import I16
from nttgen.plan.constants import Arith

IMPLEMENTATIONS = [Evaluator, BoundsInterp, *ISAS.values()]


def _shape(fn: object) -> tuple[list[str], list[str]]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    params = [p for p in sig.parameters.values() if p.name != "self"]
    pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    kw = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
    return pos, kw


def _groups(impl: type) -> set[str]:
    """The op groups an implementation must define: every group for an interpreter, the
    declared ones for an ISA."""
    return set(impl.op_groups) if issubclass(impl, Isa) else set(OP_GROUPS)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=lambda c: c.__name__)
def test_implements_the_vocabulary(impl: type) -> None:
    """The core ops and the ops of every group it declares, with the vocabulary's parameters;
    an ISA defines no op of a group it does not declare (so nothing can emit one by
    accident)."""
    assert _groups(impl) <= set(OP_GROUPS), sorted(_groups(impl) - set(OP_GROUPS))
    for name, spec in VOCABULARY.items():
        fn = getattr(impl, name, None)
        if spec.group and spec.group not in _groups(impl):
            assert fn is None, f"{impl.__name__} defines {name} without its group {spec.group}"
            continue
        assert fn is not None, f"{impl.__name__} lacks {name}"
        pos, kw = _shape(fn)
        assert len(pos) == len(spec.operands), (impl.__name__, name, pos)
        assert kw == list(spec.attrs), (impl.__name__, name, kw)


@pytest.mark.parametrize("name", list(ISAS))
def test_an_undeclared_op_group_is_refused_by_name(name: str) -> None:
    backend = ISAS[name](EmitContext(Arith(3329, I16), "p"))
    for group in set(OP_GROUPS) - set(backend.op_groups):
        for op in group_ops(group):
            with pytest.raises(IsaUnavailableError, match=f"{name} has no {op}: .*{group}"):
                backend.template(op)
    for group in backend.op_groups:
        for op in group_ops(group):
            assert callable(backend.template(op))


def test_builder_offers_the_vocabulary() -> None:
    """Programs call S.op(operands..., attributes..., hint)."""
    for name, spec in VOCABULARY.items():
        pos, _ = _shape(getattr(Builder, name))
        want = [*spec.operands, *spec.attrs]
        assert pos[: len(want)] == want, (name, pos)
        assert pos[len(want) :] in (["hint"], ["hints"]), (name, pos)


# Parameters of one family of backends, read only by that family's own templates (the
# register width, RVV's LMUL, the instruction x86's mredw forms m with).
FAMILY_ATTRIBUTES = {"width", "lmul", "mredw_m"}


@pytest.mark.parametrize("name", list(ISAS))
def test_capabilities_are_declared(name: str) -> None:
    """Every setting a backend makes is declared, with its default, on the Isa base class
    (generation reads capabilities as attributes of that record, never by a guess with
    getattr); the NTRU Prime program variants are no capabilities at all but schedule
    choices (tuning.NTRU_CHOICES)."""
    cls = ISAS[name]
    made = {
        attr
        for klass in cls.__mro__
        if issubclass(klass, Isa) and klass is not Isa
        for attr, value in vars(klass).items()
        if not attr.startswith("_") and not callable(value)
        and not isinstance(value, (classmethod, staticmethod, property))
    }  # fmt: skip
    assert made - FAMILY_ATTRIBUTES <= set(dir(Isa)), sorted(made - set(dir(Isa)))
    assert not {"dft_lines", "base_products", "coarse_reductions"} & set(dir(Isa))
