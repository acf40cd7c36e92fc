"""The checked-in generated/ tree: exactly what `make gen` writes today, one file set per
arithmetic shape, and alias headers that give a scheme's names to the preset it shares."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import STRICT, require_tool
from nttgen import load
from nttgen.aliases import SCHEME_ALIASES, aliases_of, resolve_alias
from nttgen.emit.alias import AliasHeader, exported_names
from nttgen.emit.files import GeneratedFiles
from nttgen.ntru_rings import NTRU_PRESETS, get_ntru_ring, is_ntru_name
from nttgen.outputs import preset_files, preset_names
from nttgen.rings import PRESETS, get_ring

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"


@pytest.mark.parametrize("name", preset_names())
def test_checked_in_presets_match_the_generator(name: str) -> None:
    """generated/<preset>/ holds exactly the files `make gen` writes today, byte for byte, and
    nothing else (CI regenerates and compares)."""
    expected = dict(item for files in preset_files(name) for item in files.items())
    present = {p.name for p in (GENERATED / name).iterdir()}
    assert present == set(expected), "run `make gen`"
    for file_name, text in expected.items():
        assert (GENERATED / name / file_name).read_text() == text, f"{file_name} is stale"


def test_generated_holds_one_directory_per_preset() -> None:
    assert sorted(p.name for p in GENERATED.iterdir()) == sorted(preset_names())


def test_presets_have_distinct_arithmetic_shapes() -> None:
    """A scheme whose ring another preset has is an alias, never a second copy of the code."""
    shapes = [(r.n, r.q, r.lane.bits, r.depth) for r in PRESETS.values()]
    shapes += [(r.p, r.q) for r in NTRU_PRESETS.values()]  # type: ignore[misc]
    assert len(set(shapes)) == len(shapes)


def test_aliases_name_their_targets_ring() -> None:
    for alias in SCHEME_ALIASES.values():
        assert alias.name not in PRESETS and alias.name not in NTRU_PRESETS
        assert alias in aliases_of(alias.target)
        assert resolve_alias(alias.name) == alias.target
    assert get_ring("falcon512") is PRESETS["newhope512"]
    assert get_ring("falcon1024") is PRESETS["newhope1024"]
    assert is_ntru_name("ntrulpr761")
    assert get_ntru_ring("ntrulpr761") is NTRU_PRESETS["sntrup761"]
    assert load("falcon512").ring is PRESETS["newhope512"]
    assert load("ntrulpr761").ring is NTRU_PRESETS["sntrup761"]


@pytest.mark.parametrize("name", preset_names())
def test_alias_headers_name_every_export(name: str) -> None:
    """Each alias header includes its target's header and defines every name it exports."""
    files = preset_files(name)
    targets = {f.stem: f for f in files if isinstance(f, GeneratedFiles)}
    aliases = [f for f in files if isinstance(f, AliasHeader)]
    assert len(aliases) == len(targets) * len(aliases_of(name))
    for alias in aliases_of(name):
        for stem, target in targets.items():
            alias_stem = stem.replace(name.replace("-", "_"), alias.name, 1)
            text = next(a.text for a in aliases if a.name == f"{alias_stem}.h")
            assert f'#include "{stem}.h"' in text
            names = exported_names(target)
            assert any(n.endswith("_N") for n in names) and len(names) >= 4
            for exported in names:
                mine = (alias_stem.upper() if exported.isupper() else alias_stem) + exported[
                    len(stem) :
                ]
                assert f"#define {mine} {exported}\n" in text


SCHEME_PROGRAM = """
#include <stdio.h>
#include <string.h>
#include "{alias_header}"

int main(void) {{
    int16_t a[{n}], b[{n}], mine[{n}], theirs[{n}];
    for (int i = 0; i < {n}; ++i) {{
        a[i] = (int16_t)((i * 37) % 2001 - 1000);
        b[i] = (int16_t)((i % 3) - 1);
    }}
    {scheme}_{call}(mine, a, b);
    {target}_{call}(theirs, a, b);
    if ({scheme_upper}_N != {n} || memcmp(mine, theirs, sizeof mine) != 0) {{
        return 1;
    }}
    puts("ok");
    return 0;
}}
"""


@pytest.mark.parametrize("alias", list(SCHEME_ALIASES))
def test_a_scheme_builds_against_its_alias_header(alias: str, tmp_path: Path) -> None:
    """A program written with the scheme's names compiles warning-free against the checked-in
    alias header, links the target's portable C and computes the target's products."""
    cc = require_tool("gcc")
    spec = SCHEME_ALIASES[alias]
    folder = GENERATED / spec.target
    scheme, target = f"nttgen_{alias}_c", f"nttgen_{spec.target}_c"
    n = NTRU_PRESETS[spec.target].p if spec.target in NTRU_PRESETS else PRESETS[spec.target].n
    call = "polymul_small" if spec.target in NTRU_PRESETS else "polymul"
    main = tmp_path / "main.c"
    main.write_text(
        SCHEME_PROGRAM.format(
            alias_header=f"{scheme}.h",
            n=n,
            scheme=scheme,
            target=target,
            call=call,
            scheme_upper=scheme.upper(),
        )
    )
    exe = tmp_path / "main"
    subprocess.run(
        [cc, *STRICT, "-O1", "-I", str(folder), str(main), str(folder / f"{target}.c"), "-o", exe],
        check=True,
    )
    assert subprocess.run([exe], capture_output=True, text=True, check=True).stdout == "ok\n"


def test_every_alias_header_compiles(tmp_path: Path) -> None:
    """Every checked-in alias header (every ISA's and the front ends') compiles warning-free,
    each of its names usable (every alias is taken in a translation unit)."""
    cc = require_tool("gcc")
    for alias in SCHEME_ALIASES.values():
        folder = GENERATED / alias.target
        for header in sorted(folder.glob(f"nttgen_{alias.name}*.h")):
            defined = [
                line.split()[1] for line in header.read_text().splitlines()
                if line.startswith("#define nttgen_")
            ]  # fmt: skip
            uses = "".join(f"    (void){name};\n" for name in defined)
            unit = tmp_path / "unit.c"
            unit.write_text(
                f'#include "{header.name}"\n\nvoid use(void);\nvoid use(void) {{\n{uses}}}\n'
            )
            subprocess.run([cc, *STRICT, "-fsyntax-only", "-I", str(folder), str(unit)], check=True)


def test_generated_stays_small() -> None:
    """The checked-in C stays under 10 MB: every byte of it is compiled by every user's build
    and by the test suite, and read in every review of a change to the generator."""
    total = sum(p.stat().st_size for p in GENERATED.glob("*/*"))
    assert total < 10_000_000, f"generated/ holds {total:,} bytes"
