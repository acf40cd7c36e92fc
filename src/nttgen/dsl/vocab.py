"""The vocabulary: every lane operation a program may use, with its shape.

This table is the single source of truth for what an interpreter or an ISA backend must
implement: a schema test checks that each of them defines a method per entry with these
parameters. Ops never branch or index memory on lane values: the vocabulary has no
data-dependent control flow, comparison-to-branch or gather, which is what makes every program
constant-time by construction.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
    """One vocabulary entry: its value operands, its attributes (compile-time integers) and how
    many results it returns."""

    name: str
    operands: tuple[str, ...]
    attrs: tuple[str, ...] = ()
    results: int = 1
    doc: str = ""
    # operand and result kinds: "n" a lane of the arithmetic's width, "w" a lane of twice it
    # (an exact sum of products, before its one Montgomery reduction), "p" a pair sum: half as
    # many lanes of twice the width, lane i summing the products of lanes 2i and 2i+1
    widths: str = ""
    # the optional op group (:data:`OP_GROUPS`) the op belongs to; "" for the core ops, which
    # every interpreter and every ISA implements
    group: str = ""

    def operand_kind(self, k: int) -> str:
        """The kind of operand k: "n", "w" or "p" (see ``widths``)."""
        return self.widths[k] if self.widths else "n"

    def operand_wide(self, k: int) -> bool:
        """Whether operand k is a wide (double-width) value."""
        return self.operand_kind(k) == "w"

    @property
    def result_kind(self) -> str:
        """The kind of the result: "n", "w" or "p"."""
        return self.widths[-1] if self.widths else "n"

    @property
    def result_wide(self) -> bool:
        """Whether the result has double-width lanes (a wide value or a pair sum)."""
        return self.result_kind in ("w", "p")


PAIR_SUMS = "pair_sums"

OP_GROUPS: dict[str, str] = {
    PAIR_SUMS: "adjacent-lane multiply-adds into double-width pair sums (x86 vpmaddwd), 16-bit "
    "lanes",
}
"""The optional op groups: an ISA declares the ones it emits (:attr:`Isa.op_groups`), a
program asks for one through its schedule (NTRU Prime's ``base_products="pairs"``), and the
emitter refuses a group the ISA does not declare. Interpreters implement every group."""


def group_ops(group: str) -> tuple[str, ...]:
    """The names of the ops of an optional group, in vocabulary order."""
    return tuple(name for name, spec in VOCABULARY.items() if spec.group == group)


VOCABULARY: dict[str, OpSpec] = {
    s.name: s
    for s in (
        OpSpec("const", (), ("value",), doc="broadcast of a compile-time integer"),
        OpSpec("add", ("a", "b"), doc="a + b; the analysis proves it does not overflow"),
        OpSpec("sub", ("a", "b"), doc="a - b; the analysis proves it does not overflow"),
        OpSpec("mullo", ("a", "b"), doc="low half of a*b (wraps by contract)"),
        OpSpec("mulhi", ("a", "b"), doc="high half of a*b, floor(a*b/beta)"),
        OpSpec("sra", ("a",), ("k",), doc="arithmetic shift right by k"),
        OpSpec(
            "montmul",
            ("a", "z", "zq"),
            doc="signed Montgomery product a*z/beta mod q with precomputed zq = z/q mod beta",
        ),
        OpSpec(
            "shoupmul",
            ("a", "z", "zs"),
            doc="a*z mod q as a*z - hi(a*zs)*q with precomputed zs = round(z*beta/q) (Shoup)",
        ),
        OpSpec("montmul_var", ("a", "b"), doc="signed Montgomery product a*b/beta mod q"),
        OpSpec(
            "montmul_twist",
            ("a", "b", "bq"),
            doc="signed Montgomery product a*b/beta mod q given a twist bq = b/q mod beta from "
            "memory: montmul's instructions, hi(a*b) - hi(lo(a*bq)*q), whose range is analysed "
            "for any bq (a wrong twist gives a wrong residue, never an overflow)",
        ),
        OpSpec("barrett", ("a",), doc="signed Barrett reduction to about [-q/2, q/2]"),
        OpSpec(
            "barrett_coarse",
            ("a",),
            doc="Barrett reduction by one rounding high product (16-bit lanes): "
            "a - round(a*v/2^15)*q, v = round(2^15/q); wider than barrett, cheaper",
        ),
        OpSpec("cond_add_q", ("a",), doc="a + q where a < 0 (from the sign mask)"),
        OpSpec(
            "madd",
            ("a0", "b0", "a1", "b1"),
            widths="nnnnw",
            doc="a0*b0 + a1*b1 exactly, in a double-width lane (x86 vpmaddwd after interleaving "
            "the pairs, Arm smull/smlal, RISC-V vwmul/vwmacc)",
        ),
        OpSpec(
            "mulw",
            ("a", "b"),
            widths="nnw",
            doc="a*b exactly, in a double-width lane (x86 vpmuldq of the even and odd lanes, "
            "Arm smull, RISC-V vwmul)",
        ),
        OpSpec("addw", ("a", "b"), widths="www", doc="a + b of double-width values"),
        OpSpec(
            "mredw",
            ("a",),
            widths="wn",
            doc="signed Montgomery reduction of a double-width value: a/beta mod q in one lane",
        ),
        OpSpec(
            "pair_madd",
            ("a", "b"),
            widths="nnp",
            doc="pair sums: lane i of the result (L/2 lanes of double width) is "
            "a[2i]*b[2i] + a[2i+1]*b[2i+1] exactly (x86 vpmaddwd, no interleave)",
            group=PAIR_SUMS,
        ),
        OpSpec("pair_add", ("a", "b"), widths="ppp", doc="a + b of pair sums", group=PAIR_SUMS),
        OpSpec(
            "pair_mred",
            ("even", "odd"),
            widths="ppn",
            doc="signed Montgomery reductions of two pair sums into one vector: lane 2i is "
            "even[i]/beta mod q, lane 2i+1 odd[i]/beta mod q",
            group=PAIR_SUMS,
        ),
        OpSpec("pair_swap", ("a",), doc="lanes 2i and 2i+1 exchanged", group=PAIR_SUMS),
        OpSpec(
            "pair_blend", ("a", "b"), doc="even lanes from a, odd lanes from b", group=PAIR_SUMS
        ),
        OpSpec(
            "shuffle",
            ("a", "b"),
            ("d",),
            results=2,
            doc="interleave two vectors at lane distance d (an involution)",
        ),
        OpSpec(
            "zip",
            ("a", "b"),
            ("w", "g", "inverse"),
            results=2,
            doc="interleave (or, inverse, de-interleave) elements of 2^w lanes of two vectors "
            "inside groups of 2^g lanes: a rotation of index bits",
        ),
    )
}
