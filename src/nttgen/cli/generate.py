"""``nttgen generate``: the C files of a ring, or of every preset into the checked-in tree."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..aliases import SchemeAlias, scheme_alias
from ..dispatch_policy import load_policy
from ..emit.isa import ISAS
from ..emit.names import names_for
from ..errors import NttgenError
from ..families import (
    all_presets,
    family_of,
)
from ..parallel import check_jobs, run_steps
from ..textui import Progress
from .options import (
    note,
    say,
    selected_isas,
    selected_rings,
    selected_variants,
)

if TYPE_CHECKING:  # the bench modules are loaded by the commands that use them
    from ..outputs import FileSet


def _preset_step(job: tuple[str, list[str] | None, list[str] | None]) -> list[FileSet]:
    """The files ``generate --presets`` writes for one preset (run in a worker)."""
    from ..outputs import preset_files

    name, isas, pipelines = job
    preset = all_presets()[name]
    many = pipelines and family_of(preset).variants(preset)
    variants = selected_variants(preset, pipelines) if many else [None]
    return list(preset_files(name, isas, variants))


def cmd_generate(args: argparse.Namespace) -> int:
    """Write the .h/.c/.json files (and the alias headers of a scheme name such as
    falcon512, whose ring is a preset's)."""
    from ..fsio import ensure_directory
    from ..outputs import preset_names, ring_output, write_files

    isas = selected_isas(args.isa, ["c"], list(ISAS))
    out = Path(args.output)
    if args.prefix is not None and args.presets:
        raise NttgenError("--prefix names one ring's files; --presets keeps nttgen's names")
    if args.policy is not None and (args.presets or not args.dispatch):
        raise NttgenError("--policy steers a front end: give it with --dispatch (not --presets)")
    policy = load_policy(args.policy) if args.policy is not None else None
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
        rings = selected_rings(args, default_all=False)
        variants = {ring: selected_variants(ring, args.pipeline) for ring in rings}
        names = {ring: names_for(ring, args.prefix) for ring in rings}
        if args.prefix is not None and len(rings) > 1:
            raise NttgenError("--prefix names one ring's files; give one ring")
        ensure_directory(out, "-o")  # once the names are known good, before the work
        for ring in rings:
            for files in ring_output(
                ring, isas, dispatch=args.dispatch, variants=variants[ring],
                aliases=_aliases(args.ring), names=names[ring] if args.prefix else None,
                policy=policy,
            ):  # fmt: skip
                written.append((out, files))
        if args.prefix is not None and _aliases(args.ring):
            note(f"no alias headers for {args.ring}: --prefix {args.prefix} names the files")
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
