"""Compare build configurations of one ring and ISA in a single benchmark run.

Every variant is generated under its own symbol prefix and linked into one harness binary, so
every sample times all variants back to back: their ratios are meaningful even when the
machine's speed drifts. Used to choose the default pass plans (see ``scripts/tune.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..build import compiler
from ..emit.files import FileWriter
from ..emit.isa import isa_class
from ..generate import canonical_command, kernel_set
from ..programs.build_config import BuildConfig
from ..programs.kernels import build_kernels
from ..rings import Ring
from . import Entry, op_label, run_entries


@dataclass(frozen=True)
class Variant:
    """A named build configuration, optionally compiled with another compiler (default: the
    one ``nttgen bench`` uses for the ISA)."""

    name: str
    config: BuildConfig
    cc: str | None = None
    cflags: tuple[str, ...] = ()


def compare(
    ring: Ring,
    isa: str,
    variants: Iterable[Variant],
    ops: Iterable[str] = ("ntt", "intt", "basemul", "polymul"),
    *,
    samples: int = 400,
    repeats: int = 2,
) -> dict[str, dict[str, float]]:
    """Median ticks per call of each op for each variant: {variant: {op: ticks}}."""
    cls = isa_class(isa)
    entries = []
    # every variant meets the ring's one contract, as the shipped kernels do
    contract = None if isa == "c" else kernel_set(ring, "c").published
    for v in variants:
        ks = build_kernels(ring, v.config, contract, reference=isa == "c")
        prefix = f"nttgen_{ring.c_name}_{isa}_{v.name}"
        files = FileWriter(ks, cls, canonical_command(ring, isa), prefix=prefix).files()
        # the compiler `nttgen bench` builds this ISA with, unless the variant names another
        cc = v.cc or compiler(cls.compilers)
        entries.append(Entry(v.name, files, (*cls.cflags, *v.cflags), cc))
    out: dict[str, dict[str, float]] = {}
    for rec in run_entries(ring, entries, ops, samples=samples, repeats=repeats, ks=(3,)):
        label = op_label(rec["op"], rec["k"])
        out.setdefault(rec["isa"], {})[label] = rec["median"]
    return out
