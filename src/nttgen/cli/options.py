"""What every command shares: the ring, pipeline and ISA selection of the options, the
lines of its report, and rough costs to schedule its steps by."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NoReturn

from .. import cpu
from ..aliases import aliases_of
from ..cross import isa_target
from ..emit.isa import ISAS, isa_class
from ..errors import NttgenError
from ..families import (
    all_presets,
    family_of,
    get_ring,
    ring_from_options,
)
from ..ring_family import RingSpec

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    pass


def say(text: str) -> None:
    """One line of the command's report on standard output."""
    print(text, flush=True)


def note(text: str) -> None:
    """One line of advice on standard error (the run goes on)."""
    sys.stderr.write(f"nttgen: note: {text}\n")


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)


class Once(argparse.Action):
    """An option that takes one value: given twice, the command stops with a usage error
    instead of keeping the last value silently."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        before = getattr(namespace, self.dest, None)
        if before is not None:
            parser.error(f"{option_string} takes one value, given {before} and {values}")
        setattr(namespace, self.dest, values)


def add_ring_args(p: argparse.ArgumentParser, many: bool) -> None:
    help_ring = "preset name (see 'nttgen list'), or n<N>_q<Q> / p<P>_q<Q> for a custom ring"
    if many:
        p.add_argument("--ring", action="append", help=help_ring + "; repeatable; 'all' = presets")
    else:
        p.add_argument("--ring", action=Once, help=help_ring + "; one (--presets: all of them)")
    p.add_argument(
        "--n", type=int, action=Once, help="custom ring x^n + 1 (n a power of two; with --q)"
    )
    p.add_argument("--q", type=int, action=Once, help="custom ring: the prime modulus q")
    p.add_argument(
        "--f", action=Once, help="custom NTRU Prime ring: the modulus 'x^p - x - 1' (with --q)"
    )
    p.add_argument(
        "--lane-bits", type=int, choices=(16, 32), action=Once, help="force 16- or 32-bit lanes"
    )
    p.add_argument(
        "--pipeline",
        action="append",
        help="NTRU Prime rings: the multiplication pipeline (good-rader-bruun, "
        "good-schoenhage-bruun, schoenhage-nussbaumer, or all; default: the first of these the "
        "ring admits, marked * by 'nttgen plans'); repeatable",
    )


def selected_rings(args: argparse.Namespace, default_all: bool) -> list[RingSpec]:
    """The rings the options name: a custom ring (--n/--q or --q/--f), the --ring names of any
    family ('all': every preset), or with neither every preset when ``default_all``."""
    names = args.ring if isinstance(args.ring, list) else ([args.ring] if args.ring else [])
    if args.n is not None or args.q is not None or args.f is not None:
        if names:
            raise NttgenError("give either --ring or a custom ring (--n/--q, --q/--f), not both")
        return [ring_from_options(args.q, args.n, args.f, args.lane_bits)]
    if not names:
        if default_all:
            return list(all_presets().values())
        raise NttgenError("choose a ring with --ring NAME, --n N --q Q or --q Q --f 'x^p - x - 1'")
    out: list[RingSpec] = []
    for name in names:
        out += list(all_presets().values()) if name.lower() == "all" else [get_ring(name)]
    return list(dict.fromkeys(out))


def selected_variants(ring: RingSpec, names: list[str] | None) -> list[str | None]:
    """The programs --pipeline names for ``ring`` ('all': every one with generated C); None
    stands for the default. Raises naming the rule for a name the ring's family lacks."""
    if not names:
        return [None]
    fam = family_of(ring)
    out: list[str | None] = []
    for name in names:
        if name == "all":
            if not fam.variants(ring):
                fam.check_variant(ring, name)  # raises: the family has one program
            out += fam.variants(ring)
        else:
            fam.check_variant(ring, name)
            out.append(name)
    return list(dict.fromkeys(out))


def selected_isas(values: list[str] | None, default: list[str], every: list[str]) -> list[str]:
    """The ISAs --isa names (``default`` when none; 'all': ``every``), each checked to exist."""
    names: list[str] = []
    for name in values or default:
        names += every if name.lower() == "all" else [name.lower()]
    for name in names:
        isa_class(name)  # raises naming the known ISAs
    return list(dict.fromkeys(names))


def runnable_isas() -> list[str]:
    """Every ISA whose kernels can run here: natively, or under QEMU where its tools are
    installed ('--isa all' of verify and bench)."""
    emulated = [i for i in ISAS if is_emulated(i) and not isa_target(ISAS[i]).missing_tools()]
    return cpu.usable_isas() + emulated


def ring_label(ring: RingSpec) -> str:
    """A ring's name followed by the scheme names that share its ring, e.g. ``newhope512
    (falcon512)``: the row of a table stands for all of them."""
    also = [a.name for a in aliases_of(ring.name)] if ring.preset else []
    return f"{ring.name} ({', '.join(also)})" if also else ring.name


def work_cost(ring: RingSpec, isa: str) -> float:
    """A rough estimate of how long checking or building ``ring`` on ``isa`` takes, to start
    the long ones first: NTRU Prime rings and the portable C take longest."""
    ntt = ring.degree & (ring.degree - 1) == 0
    return ring.degree * (1 if ntt else 4) * (2 if isa == "c" else 1)


def is_emulated(isa: str) -> bool:
    """Whether an ISA belongs to another architecture than the host's (run under QEMU)."""
    return not isa_target(isa_class(isa)).native


def compilers_of(isas: list[str]) -> dict[str, str]:
    from ..toolchain import compiler, compiler_version

    return {isa: compiler_version(compiler(isa_class(isa).compilers)) for isa in isas}
