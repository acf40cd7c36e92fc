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

from . import cpu
from .aliases import SCHEME_ALIASES, SchemeAlias, aliases_of, scheme_alias
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
from .parallel import check_jobs, run_steps
from .ring_family import RingSpec
from .textui import Progress, Table, print_table
from .version import __version__

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    from .bench import BenchResult
    from .bench.icount import CountResult
    from .emit.files import GeneratedFiles
    from .outputs import FileSet
    from .verify import CheckResult

HEADLINE_OPS = ("ntt", "intt", "basemul_acc", "polymul", "polymul_small")
"""What ``nttgen bench`` times by default: the transforms, the inner product and the full
product of the x^n + 1 rings; both products of the NTRU Prime rings (each ring its own)."""


def say(text: str) -> None:
    """One line of the command's report on standard output."""
    print(text, flush=True)


def note(text: str) -> None:
    """One line of advice on standard error (the run goes on)."""
    sys.stderr.write(f"nttgen: note: {text}\n")


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
        help="NTRU Prime rings: the multiplication pipeline (good-rader-bruun, "
        "good-schoenhage-bruun, schoenhage-nussbaumer, or all; default: the first of these the "
        "ring admits, marked * by 'nttgen plans'); repeatable",
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
        out += list(all_presets().values()) if name.lower() == "all" else [get_ring(name)]
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


def _isas(values: list[str] | None, default: list[str], every: list[str]) -> list[str]:
    """The ISAs --isa names (``default`` when none; 'all': ``every``), each checked to exist."""
    names: list[str] = []
    for name in values or default:
        names += every if name.lower() == "all" else [name.lower()]
    for name in names:
        isa_class(name)  # raises naming the known ISAs
    return list(dict.fromkeys(names))


def _runnable_isas() -> list[str]:
    """Every ISA whose kernels can run here: natively, or under QEMU where its tools are
    installed ('--isa all' of verify and bench)."""
    emulated = [i for i in ISAS if _emulated(i) and not isa_target(ISAS[i]).missing_tools()]
    return cpu.usable_isas() + emulated


def _ring_label(ring: RingSpec) -> str:
    """A ring's name followed by the scheme names that share its ring, e.g. ``newhope512
    (falcon512)``: the row of a table stands for all of them."""
    also = [a.name for a in aliases_of(ring.name)] if ring.preset else []
    return f"{ring.name} ({', '.join(also)})" if also else ring.name


# --------------------------------------------------------------------------- commands
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


PLAN_COLUMNS = ("pipeline, g", "leaves")
PLAN_COUNTS = ("fwd add/mul", "base mul", "inv add/mul", "total add/mul", "shifts")


def cmd_plans(args: argparse.Namespace) -> int:
    """List the multiplication pipelines of NTRU Prime rings with their op counts."""
    import json

    from .fsio import check_writable_file, write_text

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
    from .plan.maps import Cost

    return Cost(ops).multiplications


def _preset_step(job: tuple[str, list[str] | None, list[str] | None]) -> list[FileSet]:
    """The files ``generate --presets`` writes for one preset (run in a worker)."""
    from .outputs import preset_files

    name, isas, pipelines = job
    preset = all_presets()[name]
    many = pipelines and family_of(preset).variants(preset)
    variants = _variants(preset, pipelines) if many else [None]
    return list(preset_files(name, isas, variants))


def cmd_generate(args: argparse.Namespace) -> int:
    """Write the .h/.c/.json files (and the alias headers of a scheme name such as
    falcon512, whose ring is a preset's)."""
    from .fsio import ensure_directory
    from .outputs import preset_names, ring_output, write_files

    isas = _isas(args.isa, ["c"], list(ISAS))
    out = Path(args.output)
    written: list[tuple[Path, FileSet]] = []
    if args.presets:
        if args.ring or args.n is not None or args.f is not None or args.q is not None:
            raise NttgenError("--presets generates every preset; do not also give a ring")
        if args.dispatch and args.isa:
            raise NttgenError("--presets writes the front ends when no --isa is given")
        ensure_directory(out, "-o")  # before the work, not after it
        names = preset_names()
        progress = Progress("generate", len(names))
        jobs = [(name, args.isa and isas, args.pipeline) for name in names]
        try:
            sets = run_steps(_preset_step, jobs, names, progress, check_jobs(args.jobs))
        finally:
            progress.close()
        for name, files in zip(names, sets, strict=True):
            written += [(out / name, f) for f in files]
    else:
        rings = _rings(args, default_all=False)
        variants = {ring: _variants(ring, args.pipeline) for ring in rings}
        ensure_directory(out, "-o")  # once the names are known good, before the work
        for ring in rings:
            for files in ring_output(
                ring, isas, dispatch=args.dispatch, variants=variants[ring],
                aliases=_aliases(args.ring),
            ):  # fmt: skip
                written.append((out, files))
    count = 0
    for target, files in written:
        for path in write_files(files, target):
            count += 1
            if not args.presets:
                say(f"wrote {path}")
    if args.presets:
        say(f"wrote {count} files under {out}/ ({len(preset_names())} presets)")
    elif not args.isa:
        note("wrote portable C only; add --isa avx2 (repeatable, or --isa all) for SIMD code")
    return 0


def _aliases(name: str | None) -> list[SchemeAlias]:
    """The scheme alias ``name`` names, if it names one (its ring is a preset's)."""
    alias = scheme_alias(name)
    return [alias] if alias else []


VerifyJob = tuple[RingSpec, str, "str | None", int, int, "GeneratedFiles | None"]
"""One kernel set to check: ring, ISA, variant, trials, seed, and its files when they were
read from disk (None: generated now)."""


def _verify_step(job: VerifyJob) -> list[CheckResult]:
    """The checks of one ring on one ISA (run in a worker)."""
    from .api import Kernel, load
    from .verify import variant_of, verify_kernel

    ring, isa, variant, trials, seed, files = job
    if files is None:
        k = load(ring, isa, pipeline=variant)
    else:  # files read from disk: ``variant`` is the pipeline their manifest names
        k = Kernel(ring, isa, variant=variant_of(ring, isa, variant), files=files)
    return verify_kernel(k, trials=trials, seed=seed)


def _verify_jobs(args: argparse.Namespace) -> tuple[list[VerifyJob], list[str], list[str]]:
    """The kernel sets ``verify`` checks, their labels, and notes on what it leaves out:
    the files under the PATH arguments, or the rings the options name, generated now."""
    isas = _isas(args.isa, cpu.usable_isas(), _runnable_isas())
    jobs: list[VerifyJob] = []
    labels: list[str] = []
    notes: list[str] = []
    if args.paths:
        from .verify import file_sets_on_disk

        if args.ring or args.pipeline or any(x is not None for x in (args.n, args.q, args.f)):
            raise NttgenError("give either files to check (PATH) or rings (--ring ...), not both")
        found, notes = file_sets_on_disk([Path(p) for p in args.paths])
        left = [fs.files.stem for fs in found if fs.isa not in isas]
        if left:
            why = "not named by --isa" if args.isa else "ISAs this CPU does not run"
            notes.append(f"not checked ({why}; --isa all adds those QEMU runs): {', '.join(left)}")
        for fs in found:
            if fs.isa in isas:
                jobs.append((fs.ring, fs.isa, fs.pipeline, args.trials, args.seed, fs.files))
                labels.append(fs.files.stem)
        if not jobs:
            raise NttgenError(
                f"no file set under {', '.join(args.paths)} runs here: {'; '.join(notes)}"
            )
        return jobs, labels, notes
    for ring in _rings(args, default_all=True):
        # ISAs named with --isa must have code for every ring; the default skips the others
        for isa in isas if args.isa and args.isa != ["all"] else usable_isas(ring, isas):
            for variant in _variants(ring, args.pipeline):
                jobs.append((ring, isa, variant, args.trials, args.seed, None))
                labels.append(ring.name + (f" ({variant})" if variant else ""))
    return jobs, labels, notes


def cmd_verify(args: argparse.Namespace) -> int:
    """Run the differential checks and print a pass/fail table."""
    if args.trials < 1:
        raise NttgenError("--trials must be at least 1")
    jobs, labels, notes = _verify_jobs(args)
    for line in notes:
        note(line)
    progress = Progress("verify", len(jobs))
    try:
        costs = [_cost(job[0], job[1]) for job in jobs]
        steps = [f"{label} {job[1]}" for label, job in zip(labels, jobs, strict=True)]
        checks = run_steps(_verify_step, jobs, steps, progress, check_jobs(args.jobs), costs)
    finally:
        progress.close()
    title = (
        f"nttgen verify: {args.trials} random inputs per check (seed {args.seed}) and the "
        "extreme inputs of each check"
    )
    failed = 0
    if args.each_check:
        t = Table(title, ["ring", "isa", "check", "cases", "result"], {"cases"})
    else:
        t = Table(title, ["ring", "isa", "checks", "cases", "result"], {"cases"})
    for label, job, results in zip(labels, jobs, checks, strict=True):
        isa = job[1]
        bad = [r for r in results if not r.ok]
        failed += len(bad)
        if args.each_check:
            for r in results:
                t.add_row(label, isa, r.name, r.cases, "pass" if r.ok else f"FAIL: {r.failure}")
            continue
        # one row per kernel set: each check by the op it is about ("polymul = exact ...")
        names = ", ".join(dict.fromkeys(r.name.split(" = ")[0] for r in results))
        verdict = "pass" if not bad else "; ".join(f"FAIL {r.name}: {r.failure}" for r in bad)
        t.add_row(label, isa, names, sum(r.cases for r in results), verdict)
    print_table(t)
    if failed:
        say(f"{failed} check(s) failed")
        return 1
    sets = f"{len(jobs)} kernel set" + ("s" if len(jobs) != 1 else "")
    say(f"all checks passed ({sum(map(len, checks))} checks of {sets})")
    return 0


def _cost(ring: RingSpec, isa: str) -> float:
    """A rough estimate of how long checking or building ``ring`` on ``isa`` takes, to start
    the long ones first: NTRU Prime rings and the portable C take longest."""
    ntt = ring.degree & (ring.degree - 1) == 0
    return ring.degree * (1 if ntt else 4) * (2 if isa == "c" else 1)


def cmd_bench(args: argparse.Namespace) -> int:
    """Time the kernels and print the table."""
    from .bench import run_bench
    from .fsio import check_writable_file

    rings = _rings(args, default_all=True)
    requested = _isas(args.isa, cpu.usable_isas(), _runnable_isas())
    emulated = [i for i in requested if _emulated(i)]
    # portable C first: the table reads left to right, from the baseline to the fastest
    isas = sorted((i for i in requested if not _emulated(i)), key=lambda i: i != "c")
    known = list(dict.fromkeys(op for fam in FAMILIES for op in fam.ops))
    named = any(r.lower() != "all" for r in args.ring or ()) or args.q is not None
    ops, rings = _bench_ops(args.op, known, rings, named)
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
    ks = sorted(set(args.k or (3,)))
    if ks[0] < 1 or ks[-1] > K_MAX_CLI:
        raise NttgenError(f"--k must be between 1 and {K_MAX_CLI}")
    if args.png:
        _require_matplotlib()
    for option, value in (("--json", args.json), ("--png", args.png)):
        if value:  # fail before the run, not after it
            check_writable_file(Path(value), option)
    jobs = check_jobs(args.jobs)
    variants = {ring: _variants(ring, args.pipeline) for ring in rings}
    counts = _count(rings, emulated, ops, vlens, ks) if emulated else []
    results: list[BenchResult] = []
    if isas:
        progress = Progress("bench", 0)
        try:
            results = run_bench(
                rings, isas, ops, samples=args.samples, batch=args.batch, ks=ks,
                progress=progress, variants=variants, labels={r: _ring_label(r) for r in rings},
                jobs=jobs,
            )  # fmt: skip
        finally:
            progress.close()
        _print_bench(results, isas, args)
    if counts:
        from .bench.report import count_table

        print_table(count_table(counts, emulated))
    _write_bench_json(args, results, counts, isas, emulated)
    if args.png and results:
        from .bench.chart import chart_title, write_chart
        from .fsio import writing

        title = chart_title(
            results, samples=args.samples, batch=args.batch, cpu=cpu.cpu_model(),
            compilers=_compilers(isas),
        )  # fmt: skip
        with writing(Path(args.png), "--png"):
            write_chart(results, isas, Path(args.png), title=title)
        say(f"wrote {args.png}")
    return 0


K_MAX_CLI = 8
"""The largest k of ``--k`` (the harness's BENCH_KMAX)."""


def _bench_ops(
    asked: list[str] | None, known: list[str], rings: Sequence[RingSpec], named: bool
) -> tuple[list[str], list[RingSpec]]:
    """The ops ``--op`` names ('all': every op; default :data:`HEADLINE_OPS`), each known, and
    the rings to time. A ring is timed on those of the ops its family has. A ring that has none
    of them is refused by name when the user ``named`` the rings, and otherwise (every preset
    by default) left out with a note; an op asked for by name that a ring lacks is named in a
    note."""
    ops: list[str] = []
    for op in asked or HEADLINE_OPS:
        ops += known if op == "all" else [op]
    for op in ops:
        if op not in known:
            raise NttgenError(f"unknown op {op!r}: choose from {', '.join(known)} or all")
    ops = list(dict.fromkeys(ops))
    kept: list[RingSpec] = []
    for ring in rings:
        have = family_of(ring).ops
        if not set(have) & set(ops):
            refusal = (
                f"--op {', '.join(ops)}: {ring.name}'s kernels have {', '.join(have)} "
                "(see 'nttgen list')"
            )
            if named:
                raise NttgenError(refusal)
            note(f"{ring.name} left out: its kernels have {', '.join(have)}")
            continue
        kept.append(ring)
        lacks = [o for o in ops if o not in have]
        if asked and "all" not in asked and lacks:
            timed = ", ".join(o for o in ops if o in have)
            note(f"{ring.name} has no {', '.join(lacks)}: timing its {timed}")
    if not kept:
        raise NttgenError(f"--op {', '.join(ops)}: no preset has it (see 'nttgen list')")
    return ops, kept


def _print_bench(results: list[BenchResult], isas: list[str], args: argparse.Namespace) -> None:
    from .bench.report import bench_table

    table = bench_table(
        results, isas, samples=args.samples, batch=args.batch, compilers=_compilers(isas),
        cpu=cpu.cpu_model(),
    )  # fmt: skip
    print_table(table)


def _require_matplotlib() -> None:
    """Refuse --png in one line where matplotlib is missing (it is an optional extra)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise NttgenError(
            "--png draws the chart with matplotlib, which is not installed: "
            "pip install 'nttgen[plot]' (make run and make setup install it)"
        ) from None


def _emulated(isa: str) -> bool:
    """Whether an ISA belongs to another architecture than the host's (run under QEMU)."""
    return not isa_target(isa_class(isa)).native


def _compilers(isas: list[str]) -> dict[str, str]:
    from .toolchain import compiler, compiler_version

    return {isa: compiler_version(compiler(isa_class(isa).compilers)) for isa in isas}


def _count(
    rings: Sequence[RingSpec], emulated: list[str], ops: list[str], vlens: list[int], ks: list[int]
) -> list[CountResult]:
    """Instruction counts of the emulated ISAs that have code for each ring, each next to the
    portable C on its machine; RISC-V at every VLEN of ``vlens`` (each RVV backend where VLEN
    is at least what it needs). Each count is kept in the build cache under a hash of the
    program that ran, so a repeat run reads them."""
    from .bench.icount import count_ring

    steps: list[tuple[RingSpec, Target, list[str], list[str]]] = []
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
        steps += [(ring, target, names, here) for target, names in by_target.items()]
    progress = Progress("count instructions under QEMU", len(steps))
    out: list[CountResult] = []
    try:
        for ring, target, names, here in steps:
            progress.now(f"{ring.name} {target.label}")
            out += count_ring(ring, [*names, "c"], target, here, ks)
            progress.finished(f"{ring.name} {target.label}")
    finally:
        progress.close()
    return out


def _write_bench_json(
    args: argparse.Namespace,
    results: list[BenchResult],
    counts: list[CountResult],
    isas: list[str],
    emulated: list[str],
) -> None:
    from .bench import results_json
    from .fsio import write_text

    if not args.json:
        return
    meta = {
        "samples": args.samples,
        "batch": args.batch,
        "cpu": cpu.cpu_model(),
        "isas": isas,
        "compilers": _compilers(isas),
        "cflags": {isa: ["-O3", *isa_class(isa).cflags] for isa in isas},
        "cpu_features": sorted(cpu.cpu_features()),
        "emulated_isas": emulated,
    }
    write_text(Path(args.json), results_json(results, meta, counts), "--json")
    say(f"wrote {args.json}")


# --------------------------------------------------------------------------- entry point
EXAMPLES = {
    "list": """examples:
  nttgen list""",
    "plans": """examples:
  nttgen plans                               # the NTRU Prime presets
  nttgen plans --q 4591 --f 'x^761 - x - 1' --json plans.json""",
    "generate": """examples:
  nttgen generate --ring mlkem --isa c --isa avx2 -o out      # two ISAs
  nttgen generate --ring mlkem --isa all --dispatch -o out    # every ISA and a front end
  nttgen generate --n 512 --q 7681 --isa avx2 -o out          # a custom x^n + 1 ring
  nttgen generate --q 4591 --f 'x^761 - x - 1' --isa avx2 -o out
  nttgen generate --presets -o generated                      # the checked-in tree""",
    "verify": """examples:
  nttgen verify                              # every preset on every ISA this CPU runs
  nttgen verify --ring mlkem --isa avx2 --trials 200
  nttgen verify --ring sntrup761 --pipeline all
  nttgen verify --ring mlkem --isa all       # also NEON/RVV under QEMU, where installed
  nttgen verify generated/mlkem              # the files on disk, as a user vendors them
  nttgen verify vendor/nttgen_mlkem_avx2.c""",
    "bench": """examples:
  nttgen bench                               # headline ops of every preset, ISAs of this CPU
  nttgen bench --ring mlkem --op all --k 2 --k 3 --k 4
  nttgen bench --ring sntrup761 --pipeline all --png bench.png
  nttgen bench --ring mlkem --isa neon       # instruction counts under QEMU""",
}


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, what: str
) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in 'nttgen --help'), a description and the
    examples of :data:`EXAMPLES` (in 'nttgen NAME --help')."""
    return sub.add_parser(
        name,
        help=summary,
        description=what,
        epilog=EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-j", "--jobs", type=int, help="rings and ISAs prepared at once (default: one per CPU)"
    )


def parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    p = _Parser(
        prog="nttgen",
        description="Generate, verify and time constant-time polynomial multipliers for "
        "lattice cryptography (ML-KEM, ML-DSA, Falcon, NTRU Prime, custom rings).",
        epilog="Start with 'nttgen list', then 'nttgen bench'. 'nttgen COMMAND --help' shows "
        "each command's options and examples.",
    )
    p.add_argument("--version", action="version", version=f"nttgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = _command(
        sub,
        "list",
        "list ring presets, scheme names and ISAs",
        "List the ring presets of every family, the scheme names that share a preset's ring, "
        "and the ISAs with whether this CPU runs them.",
    )
    s.set_defaults(func=cmd_list)

    s = _command(
        sub,
        "generate",
        "write the C files (.h/.c/.json) of a ring",
        "Write self-contained C99 for a ring: per ISA a header, a source and a manifest, "
        "optionally an ISA-dispatching front end, and alias headers for scheme names that "
        "share the ring. Without --isa only portable C is written.",
    )
    _add_ring_args(s, many=False)
    s.add_argument(
        "--presets",
        action="store_true",
        help="every preset, into OUTPUT/<ring>/ (every ISA unless --isa is given)",
    )
    s.add_argument(
        "--isa", action="append", help=f"ISA ({', '.join(ISAS)}, or all); repeatable (default c)"
    )
    s.add_argument(
        "--dispatch",
        action="store_true",
        help="also write nttgen_<ring>.h/.c: ISA-neutral entry points that pick the best of the "
        "generated ISAs at run time (implied by --presets without --isa)",
    )
    s.add_argument("-o", "--output", required=True, help="output directory")
    _add_jobs(s)
    s.set_defaults(func=cmd_generate)

    s = _command(
        sub,
        "verify",
        "check compiled kernels against exact arithmetic",
        "Compile each ring's kernels (generated now, or the files on disk given as PATH) and "
        "check them on random and extreme inputs against the exact product (schoolbook mod q "
        "and f) and the exact evaluator, each output against its contract, and the manifest "
        "against what nttgen generates. Exit status 1 when a check fails.",
    )
    s.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="generated files to check as they are on disk: a directory (such as generated/mlkem) "
        "or any of a file set's .h/.c/.json (default: generate the rings and check them)",
    )
    _add_ring_args(s, many=True)
    s.add_argument(
        "--isa",
        action="append",
        help="ISA; repeatable; all = every ISA that runs here, under QEMU included "
        "(default: those this CPU runs)",
    )
    s.add_argument("--trials", type=int, default=20, help="random inputs per check (default 20)")
    s.add_argument(
        "--each-check",
        action="store_true",
        help="one row per check (default: one row per ring and ISA, its checks named)",
    )
    s.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    _add_jobs(s)
    s.set_defaults(func=cmd_verify)

    known = list(dict.fromkeys(op for fam in FAMILIES for op in fam.ops))
    s = _command(
        sub,
        "bench",
        "time the kernels (median ticks per call)",
        "Time each kernel in a C harness (median TSC ticks of batches of calls, pinned to one "
        "CPU) with every ISA side by side and its speed-up over the portable C. ISAs of "
        "another architecture (neon, rvv...) are counted in instructions under QEMU instead.",
    )
    _add_ring_args(s, many=True)
    s.add_argument(
        "--isa",
        action="append",
        help="ISA; repeatable; all = every ISA that runs here, under QEMU included "
        "(default: those this CPU runs)",
    )
    s.add_argument(
        "--op",
        action="append",
        help=f"operation: {', '.join(known)} or all; repeatable (default: "
        f"{', '.join(HEADLINE_OPS)}; each ring times those it has)",
    )
    s.add_argument(
        "--k",
        type=int,
        action="append",
        help=f"basemul_acc: products summed per call (1 to {K_MAX_CLI}); repeatable (default 3)",
    )
    s.add_argument(
        "--vlen",
        type=int,
        action="append",
        help="RISC-V VLEN to count RVV at; repeatable (default: 128 and 256)",
    )
    s.add_argument("--samples", type=int, default=1000, help="timed batches (default 1000)")
    s.add_argument("--batch", type=int, default=100, help="calls per batch (default 100)")
    s.add_argument("--json", help="also write the results to this JSON file")
    s.add_argument(
        "--png", help="also write a bar chart to this PNG file (needs nttgen[plot]: matplotlib)"
    )
    _add_jobs(s)
    s.set_defaults(func=cmd_bench)

    s = _command(
        sub,
        "plans",
        "list the multiplication pipelines of NTRU Prime rings with op counts",
        "For NTRU Prime rings Z_q[x]/(x^p - x - 1), which have no NTT: each pipeline of ring "
        "maps that multiplies in them, with its scalar op counts, or the rule that refuses it.",
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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status. With no arguments, print the help: what nttgen
    does and where to start."""
    if not (sys.argv[1:] if argv is None else argv):
        parser().print_help()
        return 0
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
