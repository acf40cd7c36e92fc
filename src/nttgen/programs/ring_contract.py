"""The contract every ISA's entry points of one x^n + 1 ring meet (:class:`RingContract`), and
how the portable C's kernel set publishes it (:func:`publish`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..dsl.ir import Function
from ..flows import intt_bound, tomont_bound
from ..rings import Ring

Range = tuple[int, int]


@dataclass(frozen=True)
class RingContract:
    """The ranges every ISA's entry points of one ring meet, so that code written against one
    ISA runs on every other: each entry point accepts at least ``inputs[op][buffer]`` and
    leaves at most ``outputs[op][buffer]``. The portable C's kernel set publishes it (see
    :meth:`KernelSet.build`): its inputs are the C's, and each output is as wide as the next
    step accepts (the NTT's what the base multiplications accept, theirs what the inverse
    accepts, the inverse's what the schemes' flows allow, :func:`nttgen.flows.intt_bound`), so
    the ranges chain and other ISAs reduce only where their own ranges would not."""

    inputs: dict[str, dict[str, Range]]
    outputs: dict[str, dict[str, Range]]

    def output(self, op: str, buffer: str) -> Range | None:
        """The range ``op`` must leave ``buffer`` in (None: no such output)."""
        return self.outputs.get(op, {}).get(buffer)

    def input(self, op: str, buffer: str) -> Range | None:
        """The range ``op`` must accept in ``buffer`` (None: no such input)."""
        return self.inputs.get(op, {}).get(buffer)


def publish(
    ring: Ring, functions: Mapping[str, Function], hat_in: Range, intt_in: Range
) -> RingContract:
    """The ring's contract from the reference set's entry points ``functions``: their inputs,
    their exact outputs (reduce, polymul), and for the others as much as the next step accepts
    (``hat_in``: what the NTT-domain products accept; ``intt_in``: what the inverse accepts);
    an output no step constrains (the inverse NTT and the Montgomery conversions of a ring
    without a scheme's flows) is left out, so other ISAs keep their own range there. The
    transforms of k polynomials promise what the single ones do."""
    entries = {name: fn for name, fn in functions.items() if not fn.internal}
    inputs = {name: dict(fn.contract.inputs) for name, fn in entries.items()}
    outputs = {name: dict(fn.contract.outputs) for name, fn in entries.items()}
    outputs["ntt"] = outputs["ntt_vec"] = {"a": hat_in}
    outputs["basemul"] = {"r": intt_in}
    outputs["basemul_acc"] = {"r": intt_in}
    outputs["basemul_acc_cached"] = {"r": intt_in}
    # the promise of the cheapest reduction is (-q, q), whatever the C's Barrett leaves
    outputs["reduce_partial"] = {"a": (-(ring.q - 1), ring.q - 1)}
    hat = max(-hat_in[0], hat_in[1])
    for op, bound in (
        ("intt", intt_bound(ring.name, ring.q, ring.lane.bits)),
        ("tomont", tomont_bound(ring.name, ring.lane.bits, hat)),
        ("frommont", None),
    ):
        if bound is None:
            del outputs[op]
        else:
            outputs[op] = {"a": (-bound, bound)}
    if "intt" in outputs:
        outputs["intt_vec"] = outputs["intt"]
    else:
        del outputs["intt_vec"]
    return RingContract(inputs, outputs)
