"""``nttgen bench``: median ticks per call of the ISAs this CPU runs, and instruction counts
under QEMU for the others."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import cpu
from ..cross import RVV_VLENS, Target, isa_target
from ..emit.isa import isa_class
from ..errors import NttgenError
from ..families import (
    FAMILIES,
    family_of,
    usable_isas,
)
from ..parallel import check_jobs
from ..ring_family import RingSpec
from ..textui import Progress, print_table
from .options import (
    compilers_of,
    is_emulated,
    note,
    ring_label,
    runnable_isas,
    say,
    selected_isas,
    selected_rings,
    selected_variants,
)

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    from ..bench import BenchResult
    from ..bench.icount import CountResult


HEADLINE_OPS = ("ntt", "intt", "basemul_acc", "basemul_acc_cached", "polymul", "polymul_small")
"""What ``nttgen bench`` times by default: the transforms, the inner product and the full
product of the x^n + 1 rings; both products of the NTRU Prime rings (each ring its own)."""


def cmd_bench(args: argparse.Namespace) -> int:
    """Time the kernels and print the table."""
    from ..bench import run_bench
    from ..fsio import check_writable_file

    rings = selected_rings(args, default_all=True)
    requested = selected_isas(args.isa, cpu.usable_isas(), runnable_isas())
    emulated = [i for i in requested if is_emulated(i)]
    # portable C first: the table reads left to right, from the baseline to the fastest
    isas = sorted((i for i in requested if not is_emulated(i)), key=lambda i: i != "c")
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
    policy = _policy_base(args.policy, isas) if args.policy else None
    for option, value in (("--json", args.json), ("--png", args.png), ("--policy", args.policy)):
        if value:  # fail before the run, not after it
            check_writable_file(Path(value), option)
    jobs = check_jobs(args.jobs)
    ccs = _compilers(args.cc)
    if ccs and args.policy:
        raise NttgenError("--policy records the ISAs' own compilers: leave out --cc")
    variants = {ring: selected_variants(ring, args.pipeline) for ring in rings}
    counts = _count(rings, emulated, ops, vlens, ks) if emulated else []
    results: list[BenchResult] = []
    if isas:
        progress = Progress("bench", 0)
        try:
            results = run_bench(
                rings, isas, ops, samples=args.samples, batch=args.batch, ks=ks,
                progress=progress, variants=variants, labels={r: ring_label(r) for r in rings},
                jobs=jobs, compilers=ccs,
            )  # fmt: skip
        finally:
            progress.close()
        _print_bench(results, isas, ccs, args)
    if counts:
        from ..bench.report import count_table

        print_table(count_table(counts, emulated))
    _write_bench_json(args, results, counts, isas, emulated)
    if policy is not None:
        _write_policy(args, policy, results, {ring_label(r): r.name for r in rings})
    if args.png and results:
        from ..bench.chart import chart_title, write_chart
        from ..fsio import writing

        title = chart_title(
            results, samples=args.samples, batch=args.batch, cpu=cpu.cpu_model(),
            compilers=compilers_of(isas),
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


def _compilers(asked: list[str] | None) -> list[str]:
    """The compilers ``--cc`` names, each once, each on PATH (else refused in one line)."""
    import shutil

    out = list(dict.fromkeys(asked or ()))
    for cc in out:
        if shutil.which(cc) is None:
            raise NttgenError(f"--cc {cc}: no such compiler on PATH")
    return out


def _print_bench(
    results: list[BenchResult], isas: list[str], ccs: list[str], args: argparse.Namespace
) -> None:
    from ..bench import column
    from ..bench.report import bench_table, compare_table
    from ..toolchain import compiler_version

    columns = [column(i, cc) for i in isas for cc in ccs] or isas
    built = {c: compiler_version(cc) for c in columns for cc in ccs if c.endswith(f" {cc}")}
    table = bench_table(
        results, columns, samples=args.samples, batch=args.batch,
        compilers=built or compilers_of(isas), cpu=cpu.cpu_model(),
    )  # fmt: skip
    print_table(table)
    if args.compare:
        print_table(compare_table(results, isas, ccs, cpu.cpu_model()))


def _require_matplotlib() -> None:
    """Refuse --png in one line where matplotlib is missing (it is an optional extra)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise NttgenError(
            "--png draws the chart with matplotlib, which is not installed: "
            "pip install 'nttgen[plot]' (make run and make setup install it)"
        ) from None


def _count(
    rings: Sequence[RingSpec], emulated: list[str], ops: list[str], vlens: list[int], ks: list[int]
) -> list[CountResult]:
    """Instruction counts of the emulated ISAs that have code for each ring, each next to the
    portable C on its machine; RISC-V at every VLEN of ``vlens`` (each RVV backend where VLEN
    is at least what it needs). Each count is kept in the build cache under a hash of the
    program that ran, so a repeat run reads them."""
    from ..bench.icount import count_ring

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
    from ..bench import results_json
    from ..fsio import write_text

    if not args.json:
        return
    meta = {
        "samples": args.samples,
        "batch": args.batch,
        "cpu": cpu.cpu_model(),
        "isas": isas,
        "compilers": compilers_of(isas),
        "cflags": {isa: ["-O3", *isa_class(isa).cflags] for isa in isas},
        "cpu_features": sorted(cpu.cpu_features()),
        "emulated_isas": emulated,
    }
    ratios: list[dict[str, Any]] = []
    if args.compare:
        from ..bench.report import compare_ratios

        ratios = compare_ratios(results, isas, _compilers(args.cc))
    write_text(Path(args.json), results_json(results, meta, counts, ratios), "--json")
    say(f"wrote {args.json}")


def _policy_base(path: str, isas: list[str]) -> dict[str, Any]:
    """The policy file ``--policy`` names, to add this run's figures to (an empty policy
    where it does not exist yet). Refuses, before the run, a CPU whose vendor and family
    are unknown and a run that times fewer than two ISAs (nothing to compare)."""
    from ..dispatch_policy import load_policy

    if cpu.cpu_vendor_family() is None:
        raise NttgenError("--policy: /proc/cpuinfo does not name this CPU's vendor and family")
    if len(isas) < 2:
        raise NttgenError("--policy compares ISAs: time at least two (e.g. --isa avx2 --isa c)")
    if not Path(path).exists():
        return {"measurements": []}
    return load_policy(path).data


def _write_policy(
    args: argparse.Namespace,
    base: dict[str, Any],
    results: list[BenchResult],
    ring_names: dict[str, str],
) -> None:
    """Add this run's median ticks (ring -> op -> ISA) to the policy ``base`` under this
    CPU's vendor and family, and write it to ``--policy``."""
    import json

    from ..dispatch_policy import measurement, merged
    from ..fsio import write_text

    ticks: dict[str, dict[str, dict[str, float]]] = {}
    for r in results:
        key = r.label
        ring = ring_names.get(r.ring, r.ring)
        ticks.setdefault(ring, {}).setdefault(key, {})[r.isa] = round(r.median, 1)
    found = cpu.cpu_vendor_family()
    assert found is not None  # checked before the run
    timed = sorted({r.isa for r in results})
    compilers = ", ".join(f"{isa}: {cc}" for isa, cc in compilers_of(timed).items())
    source = (
        f"nttgen bench, {args.samples} samples of {args.batch} calls ({compilers}; -O3 "
        "-falign-functions=64 -falign-loops=64, each ISA file with its own flags)"
    )
    new = measurement(cpu.cpu_model(), found[0], found[1], source, ticks)
    write_text(Path(args.policy), json.dumps(merged(base, new), indent=1) + "\n", "--policy")
    say(f"wrote {args.policy} (use it with: nttgen generate --dispatch --policy {args.policy})")
