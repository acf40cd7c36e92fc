"""What ``nttgen generate`` writes, for a ring of any family: one file set per ISA, the
dispatching front end over them, the alias headers of scheme names that share the ring, and
the checked-in tree of presets (``generated/<preset>/``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .aliases import SchemeAlias, aliases_of
from .dispatch_policy import Policy, default_policy
from .emit.alias import AliasHeader, alias_header
from .emit.build_files import BuildFiles, build_files
from .emit.dispatch import DispatchWriter
from .emit.files import GeneratedFiles
from .emit.isa import ISAS
from .emit.names import Names
from .emit.selftest import selftest_files
from .emit.unity import unity_file
from .errors import InputError
from .families import all_presets, family_of, usable_isas
from .fsio import ensure_directory, write_text
from .ring_family import RingSpec

FileSet = GeneratedFiles | AliasHeader | BuildFiles


def ring_files(
    ring: RingSpec,
    isas: Sequence[str],
    variants: Sequence[str | None] = (None,),
    names: Names | None = None,
) -> list[GeneratedFiles]:
    """The file set of ``ring`` for each ISA of ``isas`` through each of ``variants`` (None:
    the default program), variant by variant, in the namespace ``names`` (default: nttgen's).
    Raises naming the rule when an ISA has no code for the ring or a variant does not exist."""
    fam = family_of(ring)
    return [fam.generate(ring, isa, v, names) for v in variants for isa in isas]


def dispatch_isas(ring: RingSpec, isas: Sequence[str]) -> list[str]:
    """The ISAs among ``isas`` that a front end of ``ring`` dispatches over: those that have
    code for the ring, with portable C always among them."""
    usable = usable_isas(ring, isas)
    return usable if "c" in usable else ["c", *usable]


def generate_dispatch(
    ring: RingSpec,
    isas: Sequence[str],
    names: Names | None = None,
    policy: Policy | None = None,
) -> GeneratedFiles:
    """The ISA-dispatching front end ``nttgen_<ring>.h/.c/.json`` over the files of ``isas``
    (the default program of each; see :mod:`nttgen.emit.dispatch`; portable C always
    included), in the namespace ``names`` (default: nttgen's), its automatic choice following
    the measurements of ``policy`` (default: those shipped with nttgen,
    :mod:`nttgen.dispatch_policy`; a policy read from a file names it in the command)."""
    chosen = dispatch_isas(ring, isas)
    writers = [family_of(ring).writer(ring, i, None, names) for i in chosen]
    option = writers[0].names.option
    command = writers[0].command.removesuffix(option).rsplit(" --isa ", 1)[0]
    command += "".join(f" --isa {i}" for i in chosen) + " --dispatch" + option
    if policy is not None:
        command += f" --policy {policy.path}"
    measured = default_policy() if policy is None else policy.data
    return DispatchWriter(writers, command, measured).files()


def with_aliases(
    ring: RingSpec, texts: Sequence[GeneratedFiles], aliases: Sequence[SchemeAlias]
) -> list[FileSet]:
    """``texts`` (generated for ``ring``) followed by, for each scheme alias, one alias header
    per header of ``texts`` (:mod:`nttgen.emit.alias`)."""
    line = f"Ring:   Z_q[x]/({ring.modulus_poly}), q = {ring.q} (preset {ring.name})"
    return [*texts, *(alias_header(a, f, line) for a in aliases for f in texts)]


def ring_output(
    ring: RingSpec,
    isas: Sequence[str],
    *,
    dispatch: bool = False,
    variants: Sequence[str | None] = (None,),
    aliases: Sequence[SchemeAlias] = (),
    names: Names | None = None,
    policy: Policy | None = None,
) -> list[FileSet]:
    """What ``nttgen generate`` writes for one ring: the files of ``isas`` through each of
    ``variants``, with ``dispatch`` the front end over the ISAs that run the ring (portable C
    added), the build files (:mod:`nttgen.emit.build_files`), the one-file form of the library
    (:mod:`nttgen.emit.unity`) and the self-test
    ``<stem>_selftest.c`` (:mod:`nttgen.emit.selftest`), in the namespace ``names``
    (default: nttgen's), its automatic choice following ``policy`` (default: the shipped
    measurements), then the alias headers of ``aliases`` (none in a namespace of the
    caller's: the names are theirs). Raises :class:`InputError` for a front end over another
    variant than the default (its names would clash with the default's)."""
    if dispatch and any(v is not None for v in variants):
        raise InputError("--dispatch builds the front end over the default pipeline alone")
    chosen = dispatch_isas(ring, isas) if dispatch else list(isas)
    texts = ring_files(ring, chosen, variants, names)
    build: list[FileSet] = []
    if dispatch:
        front = generate_dispatch(ring, chosen, names, policy)
        texts.append(front)
        build.append(build_files(front))
        build.append(BuildFiles((unity_file(front),)))
        portable = family_of(ring).writer(ring, "c", None, names)
        build.append(selftest_files(front, texts, portable))
    return [*with_aliases(ring, texts, () if names else aliases), *build]


def preset_names() -> list[str]:
    """Every preset, one per arithmetic shape, family by family."""
    return list(all_presets())


def preset_files(
    name: str, isas: Sequence[str] | None = None, variants: Sequence[str | None] = (None,)
) -> list[FileSet]:
    """What ``nttgen generate --presets`` writes into ``generated/<name>/`` for the preset
    ``name``: by default its files for every ISA that has code for it and its dispatching front
    end; with ``isas``, the files of those of ``isas`` that have code for it. Each through
    ``variants`` (default: the default program alone; the other pipelines of an NTRU Prime
    ring are generated on demand). Then the alias headers of the scheme names that share its
    ring."""
    ring = all_presets()[name]
    if isas is None:
        return ring_output(
            ring, usable_isas(ring, list(ISAS)), dispatch=True, aliases=aliases_of(name)
        )
    return ring_output(ring, usable_isas(ring, isas), variants=variants, aliases=aliases_of(name))


def write_files(files: FileSet, outdir: Path, option: str = "-o") -> list[Path]:
    """Write generated texts into ``outdir`` (created with its parents if needed), one file per
    name of ``files``; return the paths written, in ``files``' order. Raises
    :class:`~nttgen.errors.OutputError` naming ``option`` (the option that gave ``outdir``),
    the path and the reason when the directory or a file cannot be written."""
    outdir = Path(outdir)
    ensure_directory(outdir, option)
    paths = []
    for name, text in files.items():
        p = outdir / name
        write_text(p, text, option, given=outdir)
        paths.append(p)
    return paths
