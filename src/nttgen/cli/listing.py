"""``nttgen list`` and ``nttgen plans``: the presets, scheme names and ISAs; the pipelines of
NTRU Prime rings with their op counts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .. import cpu
from ..aliases import SCHEME_ALIASES
from ..emit.isa import ISAS
from ..errors import NttgenError
from ..families import (
    FAMILIES,
)
from ..ntru_rings import (
    NTRU_PRESETS,
    NtruPrimeRing,
    get_ntru_ring,
    make_ntru_ring,
    parse_ntru_modulus,
)
from ..textui import Table, print_table
from .options import (
    say,
)

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    pass


def cmd_list(args: argparse.Namespace) -> int:
    """Print the rings of every family, the scheme aliases and the ISAs."""
    del args
    for fam in FAMILIES:
        t = Table(fam.title, ["name", "f", "q", "outputs", "multiplication", "description"])
        for r in fam.presets.values():
            lo, hi = r.output_range
            t.add_row(r.name, r.modulus_poly, r.q, f"[{lo}, {hi}]", r.algorithm, r.description)
        print_table(t)
    t = Table(
        "Scheme names that share a preset's ring (its code, under alias headers)",
        ["name", "ring", "description"],
    )
    for alias in SCHEME_ALIASES.values():
        t.add_row(alias.name, alias.target, alias.description)
    print_table(t)
    t = Table("ISAs", ["name", "backend", "usable here"])
    usable = cpu.usable_isas()
    for name, cls in ISAS.items():
        t.add_row(name, cls.title, "yes" if name in usable else "no")
    print_table(t)
    return 0


def _ntru_rings(args: argparse.Namespace) -> list[NtruPrimeRing]:
    """The NTRU Prime rings named by --ring or given by --q/--f (default: the presets)."""
    if args.q is not None or args.f is not None:
        if args.q is None or args.f is None:
            raise NttgenError("a custom NTRU Prime ring needs both --q Q and --f 'x^p - x - 1'")
        if args.ring:
            raise NttgenError("give either --ring or --q/--f, not both")
        return [make_ntru_ring(parse_ntru_modulus(args.f), args.q)]
    if not args.ring:
        return list(NTRU_PRESETS.values())
    out: list[NtruPrimeRing] = []
    for name in args.ring if isinstance(args.ring, list) else [args.ring]:
        if name.lower() == "all":
            out += list(NTRU_PRESETS.values())
            continue
        out.append(get_ntru_ring(name))
    return out


def _plans_rows(ring: NtruPrimeRing) -> list[dict[str, object]]:
    """One record per pipeline of :data:`PIPELINE_NAMES`: its plan and op counts, or the rule
    that refuses it for this ring."""
    from ..plan.maps import PIPELINE_NAMES, explain_pipelines

    notes = explain_pipelines(ring.p, ring.q)
    rows: list[dict[str, object]] = []
    for name in PIPELINE_NAMES:
        if name not in ring.pipeline_names:
            rule = notes[name].removeprefix("refused: ")
            rows.append({"pipeline": name, "exists": False, "refused": rule})
            continue
        pipe = ring.pipeline(name)
        rows.append(
            {
                "pipeline": name,
                "exists": True,
                "default": name == ring.default_pipeline,
                "g": pipe.plan.modulus,
                "leaves": {str(d): k for d, k in pipe.leaf_histogram().items()},
                "ops": pipe.cost_breakdown(),
                "note": pipe.plan.note,
            }
        )
    return rows


PLAN_COLUMNS = ("pipeline, g", "leaves")
PLAN_COUNTS = ("fwd add/mul", "base mul", "inv add/mul", "total add/mul", "shifts")


def cmd_plans(args: argparse.Namespace) -> int:
    """List the multiplication pipelines of NTRU Prime rings with their op counts."""
    import json

    from ..fsio import check_writable_file, write_text

    rings = _ntru_rings(args)
    if args.json:
        check_writable_file(Path(args.json), "--json")
    records = []
    for ring in rings:
        rows = _plans_rows(ring)
        records.append({"ring": ring.summary(), "pipelines": rows})
        t = Table(
            f"{ring.name}: Z_{ring.q}[x]/({ring.modulus_poly}), outputs in "
            f"[{-ring.half}, {ring.half}]; ops per polymul = 2 forward (fwd) + base + inverse "
            "(inv) + reduce; * = the default pipeline",
            [*PLAN_COLUMNS, *PLAN_COUNTS],
            set(PLAN_COUNTS),
            whole={"leaves"},
            caption=(
                "Scalar operations over Z_q of each plan as the plan layer states it. The "
                "generated C's vector ops per ISA are in each file's header: its Good–Rader "
                "program multiplies the pieces x^m - t_k (split once by Cooley–Tukey on "
                "AVX-512) without the Bruun split to degree 8."
            ),
        )
        refused = []
        for row in rows:
            if not row["exists"]:
                refused.append(f"refused: {row['refused']}")
                continue
            ops = row["ops"]
            leaves = row["leaves"]
            assert isinstance(ops, dict) and isinstance(leaves, dict)
            fwd, inv, tot = ops["forward"], ops["inverse"], ops["total"]
            t.add_row(
                f"{'*' if row['default'] else ''}{row['pipeline']} "
                f"g={str(row['g']).replace(' ', '')}",  # two words: each wraps whole
                " + ".join(f"{k} x deg {d}" for d, k in leaves.items()),
                f"{fwd['add']:,}/{_muls(fwd):,}",
                f"{ops['base']['mul_var']:,}",
                f"{inv['add']:,}/{_muls(inv):,}",
                f"{tot['add']:,}/{_muls(tot):,}",
                f"{tot['shift']:,}",
            )
        print_table(t)
        for line in refused:
            say(line)
    if args.json:
        write_text(Path(args.json), json.dumps(records, indent=2) + "\n", "--json")
        say(f"wrote {args.json}")
    return 0


def _muls(ops: dict[str, int]) -> int:
    from ..plan.maps import Cost

    return Cost(ops).multiplications
