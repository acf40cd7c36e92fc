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
from .ntru_rings import (
    NTRU_PRESETS,
    NtruPrimeRing,
    get_ntru_ring,
    make_ntru_ring,
    parse_ntru_modulus,
)
from .rings import PRESETS, Ring, custom_ring, get_ring
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
    help_ring = "preset name, or n<N>_q<Q> for a custom ring"
    if many:
        p.add_argument("--ring", action="append", help=help_ring + "; repeatable; 'all' = presets")
    else:
        p.add_argument("--ring", help=help_ring)
    p.add_argument("--n", type=int, help="custom ring: x^n + 1 (n a power of two)")
    p.add_argument("--q", type=int, help="custom ring: the prime modulus q")
    p.add_argument("--lane-bits", type=int, choices=(16, 32), help="force 16- or 32-bit lanes")


def _rings(args: argparse.Namespace, default_all: bool) -> list[Ring]:
    if args.n is not None or args.q is not None:
        if args.n is None or args.q is None:
            raise NttgenError("a custom ring needs both --n and --q")
        if args.ring:
            raise NttgenError("give either --ring or --n/--q, not both")
        return [custom_ring(args.n, args.q, args.lane_bits)]
    names = args.ring if isinstance(args.ring, list) else ([args.ring] if args.ring else [])
    if not names:
        if default_all:
            return list(PRESETS.values())
        raise NttgenError("choose a ring with --ring NAME or --n N --q Q")
    out: list[Ring] = []
    for name in names:
        out += list(PRESETS.values()) if name == "all" else [get_ring(name)]
    return out


def _isas(values: list[str] | None, default: list[str]) -> list[str]:
    names = values or default
    for name in names:
        isa_class(name)  # raises naming the known ISAs
    return names


# --------------------------------------------------------------------------- commands
def cmd_list(args: argparse.Namespace) -> int:
    """Print the rings and the ISAs."""
    del args
    t = Table(title="Rings (presets; any x^n+1 with --n/--q)")
    for col in ("name", "n", "q", "lanes", "NTT", "description"):
        t.add_column(col)
    for r in PRESETS.values():
        ntt = "complete" if r.complete else f"depth {r.depth}, degree-{r.base_degree} base"
        t.add_row(r.name, str(r.n), str(r.q), f"{r.lane.bits}-bit", ntt, r.description)
    console.print(t)
    t = Table(
        title=escape(
            "NTRU Prime rings Z_q[x]/(x^p - x - 1) (no NTT: products through the "
            "pipelines of 'nttgen plans'; any p, q with --q/--f)"
        )
    )
    for col in ("name", "p", "q", "outputs", "pipelines", "description"):
        t.add_column(col)
    for nr in NTRU_PRESETS.values():
        t.add_row(
            nr.name,
            str(nr.p),
            str(nr.q),
            escape(f"[{-nr.half}, {nr.half}]"),
            ", ".join(nr.pipeline_names),
            nr.description,
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


def _pipelines(names: list[str] | None) -> list[str]:
    """The pipelines named by --pipeline ('all': the three), checked; default the
    Good–Rader–Bruun pipeline alone."""
    from .emit.ntru_files import NTRU_PIPELINES
    from .plan.maps.choose import GRB

    if not names:
        return [GRB]
    out: list[str] = []
    for name in names:
        if name == "all":
            out += NTRU_PIPELINES
        elif name in NTRU_PIPELINES:
            out.append(name)
        else:
            raise NttgenError(
                f"unknown pipeline {name!r}: choose from {', '.join(NTRU_PIPELINES)} or all"
            )
    return list(dict.fromkeys(out))


def cmd_generate(args: argparse.Namespace) -> int:
    """Write the .h/.c/.json files (and the alias headers of a scheme name such as
    falcon512, whose ring is a preset's)."""
    from .emit.ntru_files import generate_ntru
    from .generate import (
        FileSet,
        dispatch_isas,
        generate,
        generate_dispatch,
        preset_files,
        preset_names,
        with_aliases,
        write_files,
    )
    from .ntru_rings import is_ntru_name

    isas = _isas(args.isa, ["c"])
    out = Path(args.output)
    written: list[tuple[Path, FileSet]] = []
    if args.presets:
        if args.ring or args.n is not None or args.f is not None or args.q is not None:
            raise NttgenError("--presets generates every preset; do not also give a ring")
        if args.dispatch and args.isa:
            raise NttgenError("--presets writes the front ends when no --isa is given")
        pipelines = _pipelines(args.pipeline) if args.pipeline else [None]
        for name in preset_names():
            for files in preset_files(name, args.isa and isas, pipelines):
                written.append((out / name, files))
    elif args.f is not None or (args.ring and is_ntru_name(args.ring)):
        if args.n is not None:
            raise NttgenError("--n names an x^n + 1 ring; an NTRU Prime ring takes --q and --f")
        if args.dispatch:
            raise NttgenError("--dispatch is for x^n + 1 rings; NTRU Prime rings have none yet")
        for nring in _ntru_rings(args):
            texts = [generate_ntru(nring, i, p) for p in _pipelines(args.pipeline) for i in isas]
            for files in with_aliases(nring, texts, _aliases(args.ring)):
                written.append((out, files))
    else:
        if args.pipeline:
            raise NttgenError("--pipeline is for NTRU Prime rings (--ring sntrup761, or --q/--f)")
        for ring in _rings(args, default_all=False):
            ring_isas = dispatch_isas(ring, isas) if args.dispatch else isas
            texts = [generate(ring, isa) for isa in ring_isas]
            if args.dispatch:
                texts.append(generate_dispatch(ring, ring_isas))
            for files in with_aliases(ring, texts, _aliases(args.ring)):
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
        for isa in isas:
            k = load(ring, isa)
            for res in verify_kernel(k, trials=args.trials, seed=args.seed):
                verdict = "[green]pass[/]" if res.ok else f"[red]FAIL[/]: {res.failure}"
                failed += not res.ok
                t.add_row(ring.name, isa, res.name, str(res.cases), verdict)
    console.print(t)
    if failed:
        console.print(f"[red]{failed} check(s) failed[/]")
        return 1
    console.print("all checks passed")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Time the kernels and print the table."""
    from .bench import BENCH_OPS, NTRU_BENCH_OPS, run_bench
    from .bench.chart import chart_title, write_chart
    from .bench.report import print_count_table, print_table
    from .ntru_rings import is_ntru_name

    names = args.ring or []
    ntru = [get_ntru_ring(n) for n in names if is_ntru_name(n)]
    if "all" in names or (not names and args.n is None and args.q is None):
        ntru = list(NTRU_PRESETS.values())
    args.ring = [n for n in names if not is_ntru_name(n)]
    rings: list[Ring] = []
    if args.ring or args.n is not None or args.q is not None or not ntru:
        rings = _rings(args, default_all=True)
    emulated_default = [i for i in ISAS if _emulated(i) and not isa_target(ISAS[i]).missing_tools()]
    requested = _isas(args.isa, cpu.usable_isas() + emulated_default)
    emulated = [i for i in requested if _emulated(i)]
    isas = [i for i in requested if not _emulated(i)]
    known = list(dict.fromkeys((*BENCH_OPS, *NTRU_BENCH_OPS)))
    ops = args.op or known
    for op in ops:
        if op not in known:
            raise NttgenError(f"unknown op {op!r}: choose from {', '.join(known)}")
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
    pipelines = _pipelines(args.pipeline)
    if args.pipeline and not ntru:
        raise NttgenError("--pipeline is for NTRU Prime rings (--ring sntrup761)")
    ntt_ops = [o for o in ops if o in BENCH_OPS]
    ntru_ops = [o for o in ops if o in NTRU_BENCH_OPS]
    if not ntt_ops and not ntru:
        raise NttgenError(f"--op {ops[0]} is for NTRU Prime rings (--ring sntrup761)")
    counts = _count(rings, emulated, ntt_ops, vlens) if emulated and rings and ntt_ops else []
    if emulated and ntru and ntru_ops:
        counts += _count(ntru, emulated, ntru_ops, vlens)
    if not isas:
        print_count_table(console, counts, emulated)
        _write_bench_json(args, [], counts, isas, emulated)
        return 0
    all_rings = [*rings, *ntru]
    total = len(all_rings) * len(isas)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # piped output: only the table, as before
    ) as bar:
        task = bar.add_task(f"benchmarking {all_rings[0].name}", total=total)
        done = 0

        def step(label: str) -> None:
            nonlocal done
            done += 1
            now = f"benchmarking {all_rings[done // len(isas)].name}" if done < total else "done"
            bar.update(task, advance=1, description=now)

        results = run_bench(
            all_rings, isas, ops, samples=args.samples, batch=args.batch, progress=step,
            pipelines=pipelines,
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
    rings: Sequence[Ring | NtruPrimeRing], emulated: list[str], ops: list[str], vlens: list[int]
) -> list[CountResult]:
    """Instruction counts of the emulated ISAs, each next to the portable C on its machine;
    RISC-V at every VLEN of ``vlens`` (each RVV backend where VLEN is at least what it needs).
    NTRU Prime rings: the ISAs they are generated for."""
    from .bench.icount import count_ring
    from .emit.ntru_files import NTRU_ISAS

    out: list[CountResult] = []
    with console.status("counting instructions under QEMU") as status:
        for ring in rings:
            by_target: dict[Target, list[str]] = {}
            for isa in emulated:
                cls = isa_class(isa)
                if isinstance(ring, NtruPrimeRing):
                    if isa not in NTRU_ISAS:
                        continue
                elif cls.unsupported(ring.n, ring.lane) is not None:
                    continue
                arch = str(cls.arch)
                machines = [Target(arch, v) for v in vlens] if arch == "riscv64" else [Target(arch)]
                for t in machines:
                    if t.emulated_vlen >= cls.min_vlen or arch != "riscv64":
                        by_target.setdefault(t, []).append(isa)
            for target, names in by_target.items():
                status.update(f"counting instructions under QEMU: {ring.name} {target.label}")
                out += count_ring(ring, [*names, "c"], target, ops)
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
    s.add_argument(
        "--f", help="custom NTRU Prime ring: the modulus 'x^p - x - 1' (with --q; see plans)"
    )
    s.add_argument(
        "--pipeline",
        action="append",
        help="NTRU Prime rings: the multiplication pipeline (good-rader-bruun, the default; "
        "good-schoenhage-bruun; schoenhage-nussbaumer; all); repeatable",
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
    s.add_argument(
        "--pipeline",
        action="append",
        help="NTRU Prime rings: time this pipeline (default good-rader-bruun; 'all' for the "
        "three); repeatable",
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
