"""``nttgen verify``: the differential checks of kernels generated now, or of the files on
disk, one row per kernel set (or per check)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .. import cpu
from ..errors import NttgenError
from ..families import (
    usable_isas,
)
from ..parallel import check_jobs, run_steps
from ..ring_family import RingSpec
from ..textui import Progress, Table, print_table
from .options import (
    note,
    runnable_isas,
    say,
    selected_isas,
    selected_rings,
    selected_variants,
    work_cost,
)

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    from ..emit.files import GeneratedFiles
    from ..verify import CheckResult


VerifyJob = tuple[RingSpec, str, "str | None", int, int, "GeneratedFiles | None"]
"""One kernel set to check: ring, ISA, variant, trials, seed, and its files when they were
read from disk (None: generated now)."""


def _verify_step(job: VerifyJob) -> list[CheckResult]:
    """The checks of one ring on one ISA (run in a worker)."""
    from ..api import Kernel, load
    from ..verify import variant_of, verify_kernel

    ring, isa, variant, trials, seed, files = job
    if files is None:
        k = load(ring, isa, pipeline=variant)
    else:  # files read from disk: ``variant`` is the pipeline their manifest names
        k = Kernel(ring, isa, variant=variant_of(ring, isa, variant), files=files)
    return verify_kernel(k, trials=trials, seed=seed)


def _verify_jobs(args: argparse.Namespace) -> tuple[list[VerifyJob], list[str], list[str]]:
    """The kernel sets ``verify`` checks, their labels, and notes on what it leaves out:
    the files under the PATH arguments, or the rings the options name, generated now."""
    isas = selected_isas(args.isa, cpu.usable_isas(), runnable_isas())
    jobs: list[VerifyJob] = []
    labels: list[str] = []
    notes: list[str] = []
    if args.paths:
        from ..verify import file_sets_on_disk

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
    for ring in selected_rings(args, default_all=True):
        # ISAs named with --isa must have code for every ring; the default skips the others
        for isa in isas if args.isa and args.isa != ["all"] else usable_isas(ring, isas):
            for variant in selected_variants(ring, args.pipeline):
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
        costs = [work_cost(job[0], job[1]) for job in jobs]
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
