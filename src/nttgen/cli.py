"""The ``nttgen`` command line.

Every error ends the program with one line on stderr and a nonzero exit status, never a
traceback: 2 for bad usage or parameters, 1 for a failed verification.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import cpu
from .aliases import SCHEME_ALIASES, SchemeAlias
from .cross import RVV_VLENS, Target, isa_target
from .emit.isa import ISAS, isa_class
from .errors import NttgenError
from .families import (
    FAMILIES,
    all_presets,
    family_of,
    get_ring,
    ring_from_options,
    usable_isas,
)
from .ntru_rings import (
    NTRU_PRESETS,
    NtruPrimeRing,
    get_ntru_ring,
    make_ntru_ring,
    parse_ntru_modulus,
)
from .ring_family import RingSpec
from .version import __version__

if TYPE_CHECKING:  # the bench modules load matplotlib's dependencies lazily
    from .bench import BenchResult
    from .bench.icount import CountResult

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)


def _add_ring_args(p: argparse.ArgumentParser, many: bool) -> None:
    help_ring = "preset name (see 'nttgen list'), or n<N>_q<Q> / p<P>_q<Q> for a custom ring"
    if many:
        p.add_argument("--ring", action="append", help=help_ring + "; repeatable; 'all' = presets")
    else:
        p.add_argument("--ring", help=help_ring)
    p.add_argument("--n", type=int, help="custom ring x^n + 1 (n a power of two; with --q)")
    p.add_argument("--q", type=int, help="custom ring: the prime modulus q")
    p.add_argument("--f", help="custom NTRU Prime ring: the modulus 'x^p - x - 1' (with --q)")
    p.add_argument("--lane-bits", type=int, choices=(16, 32), help="force 16- or 32-bit lanes")
    p.add_argument(
        "--pipeline",
        action="append",
        help="NTRU Prime rings: the multiplication pipeline (good-rader-bruun, the default; "
        "good-schoenhage-bruun; schoenhage-nussbaumer; all); repeatable",
    )


def _rings(args: argparse.Namespace, default_all: bool) -> list[RingSpec]:
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
        out += list(all_presets().values()) if name == "all" else [get_ring(name)]
    return list(dict.fromkeys(out))


def _variants(ring: RingSpec, names: list[str] | None) -> list[str | None]:
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


def _isas(values: list[str] | None, default: list[str]) -> list[str]:
    names = values or default
    for name in names:
        isa_class(name)  # raises naming the known ISAs
    return names


# --------------------------------------------------------------------------- commands
def cmd_list(args: argparse.Namespace) -> int:
    """Print the rings of every family, the scheme aliases and the ISAs."""
    del args
    for fam in FAMILIES:
        t = Table(title=escape(fam.title))
        for col in ("name", "f", "q", "outputs", "multiplication", "description"):
            t.add_column(col)
        for r in fam.presets.values():
            lo, hi = r.output_range
            t.add_row(
                r.name,
                escape(r.modulus_poly),
                str(r.q),
                escape(f"[{lo}, {hi}]"),
                escape(r.algorithm),
                r.description,
            )
        console.print(t)
    t = Table(title="Scheme names that share a preset's ring (its code, under alias headers)")
    for col in ("name", "ring", "description"):
        t.add_column(col)
    for alias in SCHEME_ALIASES.values():
        t.add_row(alias.name, alias.target, alias.description)
    console.print(t)
    t = Table(title="ISAs")
    for col in ("name", "backend", "usable here"):
        t.add_column(col)
    usable = cpu.usable_isas()
    for name, cls in ISAS.items():
        t.add_row(name, cls.title, "yes" if name in usable else "no")
    console.print(t)
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
        out += list(NTRU_PRESETS.values()) if name == "all" else [get_ntru_ring(name)]
    return out


def _plans_rows(ring: NtruPrimeRing) -> list[dict[str, object]]:
    """One record per pipeline of :data:`PIPELINE_NAMES`: its plan and op counts, or the rule
    that refuses it for this ring."""
    from .plan.maps import PIPELINE_NAMES, explain_pipelines

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


def cmd_plans(args: argparse.Namespace) -> int:
    """List the multiplication pipelines of NTRU Prime rings with their op counts."""
    import json

    rings = _ntru_rings(args)
    if args.json:
        _check_output_file("--json", Path(args.json))
    records = []
    for ring in rings:
        rows = _plans_rows(ring)
        records.append({"ring": ring.summary(), "pipelines": rows})
        t = Table(
            title=escape(
                f"{ring.name}: Z_{ring.q}[x]/({ring.modulus_poly}), outputs in "
                f"[{-ring.half}, {ring.half}]; ops per polymul = 2 forward + base + inverse "
                "+ reduce; * = default"
            ),
            caption=(
                "Scalar operations over Z_q of each plan as the plan layer states it. The "
                "generated C's vector ops per ISA are in each file's header: its Good–Rader "
                "program multiplies the pieces x^m - t_k (split once by Cooley–Tukey on "
                "AVX-512) without the Bruun split to degree 8."
            ),
        )
        for col in ("pipeline", "g", "leaves", "forward add/mul", "base mul", "inverse add/mul"):
            t.add_column(col)
        for col in ("total add", "total mul", "shifts"):
            t.add_column(col, justify="right")
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
                f"{row['pipeline']}{' *' if row['default'] else ''}",
                escape(str(row["g"])),
                " + ".join(f"{k} x deg {d}" for d, k in leaves.items()),
                f"{fwd['add']:,} / {_muls(fwd):,}",
                f"{ops['base']['mul_var']:,}",
                f"{inv['add']:,} / {_muls(inv):,}",
                f"{tot['add']:,}",
                f"{_muls(tot):,}",
                f"{tot['shift']:,}",
            )
        console.print(t)
        for line in refused:
            console.print(escape(line))
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=2) + "\n")
        console.print(f"wrote {args.json}")
    return 0


def _muls(ops: dict[str, int]) -> int:
    from .plan.maps import Cost

    return Cost(ops).multiplications


def cmd_generate(args: argparse.Namespace) -> int:
    """Write the .h/.c/.json files (and the alias headers of a scheme name such as
    falcon512, whose ring is a preset's)."""
    from .outputs import FileSet, preset_files, preset_names, ring_output, write_files

    isas = _isas(args.isa, ["c"])
    out = Path(args.output)
    written: list[tuple[Path, FileSet]] = []
    if args.presets:
        if args.ring or args.n is not None or args.f is not None or args.q is not None:
            raise NttgenError("--presets generates every preset; do not also give a ring")
        if args.dispatch and args.isa:
            raise NttgenError("--presets writes the front ends when no --isa is given")
        for name in preset_names():
            preset = all_presets()[name]
            many = args.pipeline and family_of(preset).variants(preset)
            variants = _variants(preset, args.pipeline) if many else [None]
            for files in preset_files(name, args.isa and isas, variants):
                written.append((out / name, files))
    else:
        for ring in _rings(args, default_all=False):
            variants = _variants(ring, args.pipeline)
            for files in ring_output(
                ring, isas, dispatch=args.dispatch, variants=variants, aliases=_aliases(args.ring)
            ):
                written.append((out, files))
    for target, files in written:
        for path in write_files(files, target):
            console.print(f"wrote {path}")
    return 0


def _aliases(name: str | None) -> list[SchemeAlias]:
    """The scheme alias ``name`` names, if it names one (its ring is a preset's)."""
    return [SCHEME_ALIASES[name]] if name in SCHEME_ALIASES else []


def cmd_verify(args: argparse.Namespace) -> int:
    """Run the differential checks and print a pass/fail table."""
    from .api import load
    from .verify import verify_kernel

    rings = _rings(args, default_all=True)
    isas = _isas(args.isa, cpu.usable_isas())
    if args.trials < 1:
        raise NttgenError("--trials must be at least 1")
    t = Table(title=f"nttgen verify ({args.trials} random trials per check, seed {args.seed})")
    for col in ("ring", "isa", "check", "cases", "result"):
        t.add_column(col)
    failed = 0
    for ring in rings:
        # ISAs named with --isa must have code for every ring; the default skips the others
        for isa in isas if args.isa else usable_isas(ring, isas):
            for variant in _variants(ring, args.pipeline):
                k = load(ring, isa, pipeline=variant)
                label = ring.name + (f" ({variant})" if variant else "")
                for res in verify_kernel(k, trials=args.trials, seed=args.seed):
                    verdict = "[green]pass[/]" if res.ok else f"[red]FAIL[/]: {res.failure}"
                    failed += not res.ok
                    t.add_row(label, isa, res.name, str(res.cases), verdict)
    console.print(t)
    if failed:
        console.print(f"[red]{failed} check(s) failed[/]")
        return 1
    console.print("all checks passed")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Time the kernels and print the table."""
    from .bench import run_bench
    from .bench.chart import chart_title, write_chart
    from .bench.report import print_count_table, print_table

    rings = _rings(args, default_all=True)
    emulated_default = [i for i in ISAS if _emulated(i) and not isa_target(ISAS[i]).missing_tools()]
    requested = _isas(args.isa, cpu.usable_isas() + emulated_default)
    emulated = [i for i in requested if _emulated(i)]
    isas = [i for i in requested if not _emulated(i)]
    known = list(dict.fromkeys(op for fam in FAMILIES for op in fam.ops))
    ops = args.op or known
    for op in ops:
        if op not in known:
            raise NttgenError(f"unknown op {op!r}: choose from {', '.join(known)}")
    for ring in rings:
        if not set(family_of(ring).ops) & set(ops):
            raise NttgenError(
                f"--op {', '.join(ops)}: {ring.name}'s kernels have "
                f"{', '.join(family_of(ring).ops)} (see 'nttgen list')"
            )
    for name in isas:
        if name not in cpu.usable_isas():
            raise NttgenError(
                f"ISA {name!r} cannot run on this CPU: the benchmark times only what the CPU "
                "runs (never a SIMDe translation)"
            )
    for name in emulated:
        isa_target(isa_class(name)).require(f"counting {name} instructions")
    vlens = sorted(set(args.vlen or (128, 256)))
    for v in vlens:
        if v not in RVV_VLENS:
            raise NttgenError(f"--vlen must be one of {', '.join(map(str, RVV_VLENS))}, not {v}")
    if args.samples < 1 or args.batch < 1:
        raise NttgenError("--samples and --batch must be at least 1")
    for option, value in (("--json", args.json), ("--png", args.png)):
        if value:  # fail before the run, not after it
            _check_output_file(option, Path(value))
    variants = {ring: _variants(ring, args.pipeline) for ring in rings}
    counts = _count(rings, emulated, ops, vlens) if emulated else []
    if not isas:
        print_count_table(console, counts, emulated)
        _write_bench_json(args, [], counts, isas, emulated)
        return 0
    total = len(rings) * len(isas)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # piped output: only the table, as before
    ) as bar:
        task = bar.add_task(f"benchmarking {rings[0].name}", total=total)
        done = 0

        def step(label: str) -> None:
            nonlocal done
            done += 1
            now = f"benchmarking {rings[done // len(isas)].name}" if done < total else "done"
            bar.update(task, advance=1, description=now)

        results = run_bench(
            rings, isas, ops, samples=args.samples, batch=args.batch, progress=step,
            variants=variants,
        )  # fmt: skip
    print_table(
        console, results, isas, samples=args.samples, batch=args.batch, compilers=_compilers(isas)
    )
    print_count_table(console, counts, emulated)
    _write_bench_json(args, results, counts, isas, emulated)
    if args.png:
        title = chart_title(results, samples=args.samples, batch=args.batch)
        write_chart(results, isas, Path(args.png), title=title)
        console.print(f"wrote {args.png}")
    return 0


def _emulated(isa: str) -> bool:
    """Whether an ISA belongs to another architecture than the host's (run under QEMU)."""
    return not isa_target(isa_class(isa)).native


def _compilers(isas: list[str]) -> dict[str, str]:
    from .build import compiler

    return {isa: compiler(isa_class(isa).compilers) for isa in isas}


def _count(
    rings: Sequence[RingSpec], emulated: list[str], ops: list[str], vlens: list[int]
) -> list[CountResult]:
    """Instruction counts of the emulated ISAs that have code for each ring, each next to the
    portable C on its machine; RISC-V at every VLEN of ``vlens`` (each RVV backend where VLEN
    is at least what it needs)."""
    from .bench.icount import count_ring

    out: list[CountResult] = []
    with console.status("counting instructions under QEMU") as status:
        for ring in rings:
            here = [o for o in ops if o in family_of(ring).ops]
            by_target: dict[Target, list[str]] = {}
            for isa in usable_isas(ring, emulated) if here else ():
                cls = isa_class(isa)
                arch = str(cls.arch)
                machines = [Target(arch, v) for v in vlens] if arch == "riscv64" else [Target(arch)]
                for t in machines:
                    if t.emulated_vlen >= cls.min_vlen or arch != "riscv64":
                        by_target.setdefault(t, []).append(isa)
            for target, names in by_target.items():
                status.update(f"counting instructions under QEMU: {ring.name} {target.label}")
                out += count_ring(ring, [*names, "c"], target, here)
    return out


def _write_bench_json(
    args: argparse.Namespace,
    results: list[BenchResult],
    counts: list[CountResult],
    isas: list[str],
    emulated: list[str],
) -> None:
    from .bench import results_json

    if not args.json:
        return
    meta = {
        "samples": args.samples,
        "batch": args.batch,
        "isas": isas,
        "compilers": _compilers(isas),
        "cflags": {isa: ["-O3", *isa_class(isa).cflags] for isa in isas},
        "cpu_features": sorted(cpu.cpu_features()),
        "emulated_isas": emulated,
    }
    try:
        Path(args.json).write_text(results_json(results, meta, counts))
    except OSError as e:
        raise NttgenError(f"cannot write {args.json}: {e.strerror or e}") from e
    console.print(f"wrote {args.json}")


def _check_output_file(option: str, path: Path) -> None:
    """Raise NttgenError naming ``path`` unless a file can be created there."""
    parent = path.parent
    if not parent.is_dir():
        raise NttgenError(f"{option} {path}: the directory {parent} does not exist")
    if path.is_dir():
        raise NttgenError(f"{option} {path}: is a directory")


# --------------------------------------------------------------------------- entry point
def parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    p = _Parser(
        prog="nttgen",
        description="Generate, verify and time constant-time NTT polynomial multipliers.",
    )
    p.add_argument("--version", action="version", version=f"nttgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("list", help="list ring presets and ISAs")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser(
        "plans", help="list the multiplication pipelines of NTRU Prime rings with op counts"
    )
    s.add_argument(
        "--ring",
        action="append",
        help=f"NTRU Prime preset ({', '.join(NTRU_PRESETS)}) or p<P>_q<Q>; repeatable "
        "(default: the presets)",
    )
    s.add_argument("--q", type=int, help="custom ring: the prime modulus q (with --f)")
    s.add_argument("--f", help="custom ring: the modulus, written 'x^p - x - 1' (with --q)")
    s.add_argument("--json", help="also write the plans and counts to this JSON file")
    s.set_defaults(func=cmd_plans)

    s = sub.add_parser("generate", help="write the .h/.c/.json files of a ring")
    _add_ring_args(s, many=False)
    s.add_argument(
        "--presets",
        action="store_true",
        help="every preset, into OUTPUT/<ring>/ (every ISA unless --isa is given)",
    )
    s.add_argument("--isa", action="append", help=f"ISA ({', '.join(ISAS)}); repeatable")
    s.add_argument(
        "--dispatch",
        action="store_true",
        help="also write nttgen_<ring>.h/.c: ISA-neutral entry points that pick the best of the "
        "generated ISAs at run time (implied by --presets without --isa)",
    )
    s.add_argument("-o", "--output", required=True, help="output directory")
    s.set_defaults(func=cmd_generate)

    s = sub.add_parser("verify", help="differential checks of compiled kernels")
    _add_ring_args(s, many=True)
    s.add_argument("--isa", action="append", help="ISA; repeatable (default: all usable here)")
    s.add_argument("--trials", type=int, default=20, help="random inputs per check (default 20)")
    s.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("bench", help="median ticks per call of every kernel")
    _add_ring_args(s, many=True)
    s.add_argument("--isa", action="append", help="ISA; repeatable (default: all usable)")
    s.add_argument("--op", action="append", help="operation; repeatable (default: all)")
    s.add_argument(
        "--vlen",
        type=int,
        action="append",
        help="RISC-V VLEN to count RVV at; repeatable (default: 128 and 256)",
    )
    s.add_argument("--samples", type=int, default=1000, help="timed batches (default 1000)")
    s.add_argument("--batch", type=int, default=100, help="calls per batch (default 100)")
    s.add_argument("--json", help="also write the results to this JSON file")
    s.add_argument("--png", help="also write a bar chart of the results to this PNG file")
    s.set_defaults(func=cmd_bench)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except NttgenError as e:
        sys.stderr.write(f"nttgen: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("nttgen: interrupted\n")
        return 130
    except Exception as e:  # a bug in nttgen: still one line, unless debugging
        if os.environ.get("NTTGEN_DEBUG"):
            raise
        sys.stderr.write(
            f"nttgen: internal error: {type(e).__name__}: {e} (set NTTGEN_DEBUG=1 for the "
            "traceback, and please report it)\n"
        )
        return 3


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
