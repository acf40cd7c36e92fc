"""``nttgen generate --prefix NAME``: every file, symbol and macro in the caller's namespace,
so that two copies of one ring link into one program; bad names are refused in one line."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_isa
from nttgen.cli import main

X86_SET = ["--isa", "c", "--isa", "avx2", "--isa", "avx512", "--dispatch"]


@pytest.mark.parametrize(
    "prefix,rule",
    [
        ("1abc", "not a C identifier"),
        ("_mlk", "not a C identifier"),
        ("ml-k", "not a C identifier"),
        ("mlk_", "trailing or doubled _"),
        ("ml__k", "trailing or doubled _"),
        ("x" * 41, "at most 40"),
    ],
)
def test_a_bad_prefix_is_refused_in_one_line(
    prefix: str, rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", "--ring", "mlkem", "--prefix", prefix, "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert rule in err and len(err.splitlines()) == 1, err
    assert not list(tmp_path.iterdir())


def test_prefix_names_one_ring(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--presets", "--prefix", "mlk", "-o", str(tmp_path)]) == 2
    assert "--presets keeps nttgen's names" in capsys.readouterr().err


def _generate(prefix: str, ring: list[str], out: Path) -> list[Path]:
    assert main(["generate", *ring, *X86_SET, "--prefix", prefix, "-o", str(out)]) == 0
    return sorted(out.iterdir())


@pytest.mark.parametrize(
    "ring", [["--ring", "mlkem"], ["--ring", "sntrup761"]], ids=["mlkem", "sntrup761"]
)
def test_every_name_is_in_the_namespace(ring: list[str], tmp_path: Path) -> None:
    """File names, #defines (include guards too), function names in the manifests, the
    command in each header: nothing keeps nttgen's names."""
    everything = _generate("pq_lib", ring, tmp_path)
    build = {p.name: p.read_text() for p in everything if p.suffix not in (".c", ".h", ".json")}
    assert set(build) == {"CMakeLists.txt", "Makefile"}
    assert "project(pq_lib " in build["CMakeLists.txt"] and "libpq_lib.a" in build["Makefile"]
    files = [p for p in everything if p.name not in build]
    assert {p.name.split(".")[0] for p in files} == {"pq_lib", "pq_lib_c", "pq_lib_avx2",
                                                     "pq_lib_avx512", "pq_lib_selftest",
                                                     "pq_lib_unity"}  # fmt: skip
    for path in files:
        text = path.read_text()
        assert "--prefix pq_lib" in text, path
        if path.suffix == ".json":
            manifest = json.loads(text)
            names = manifest.get("functions")
            symbols = [f["c_name"] for f in names.values()] if isinstance(names, dict) else names
            assert symbols and all(s.startswith("pq_lib_") for s in symbols), path
            continue
        for macro in re.findall(r"^#\s*define\s+(\w+)", text, re.M):
            assert macro.startswith("PQ_LIB_"), (path, macro)
        for ident in re.findall(r"\b(nttgen_\w+|NTTGEN_\w+)", text):
            assert ident == "NTTGEN_ISA", (path, ident)  # the front end's test variable


MAIN = """
#include <stdint.h>
#include <stdio.h>
#include "one.h"
#include "two.h"
#include "two_c.h"

int main(void) {
    int16_t a[256], b[256], c[256];
    for (int i = 0; i < 256; i++) a[i] = b[i] = c[i] = (int16_t)((i * 37) % 3329 - 1664);
    one_ntt(a);
    one_intt(a);
    two_ntt(b);
    two_intt(b);
    two_c_ntt(c);
    two_c_intt(c);
    printf("%s %s\\n", one_isa(), two_isa());
    for (int i = 0; i < 256; i++) {
        /* one ISA's representatives may differ from another's: compare mod q */
        if (a[i] != b[i] || (a[i] - c[i]) % 3329 != 0) return 1;
    }
    return 0;
}
"""


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_two_prefixed_copies_link_into_one_program(cc: str, tmp_path: Path) -> None:
    """Two copies of ML-KEM (portable C, AVX2, AVX-512 and the front end each) in one shared
    library linked with -Wl,--no-undefined: no clash, every global symbol carries its copy's
    prefix, and each copy computes the same transforms."""
    require_isa("avx2")
    objects: list[str] = []
    for prefix in ("one", "two"):
        for path in _generate(prefix, ["--ring", "mlkem"], tmp_path / prefix):
            if path.suffix != ".c" or not path.with_suffix(".json").exists():
                continue  # the library's files (not the self-test or the one-file build)
            manifest = json.loads(path.with_suffix(".json").read_text())
            flags = manifest.get("isa", {}).get("cflags", [])
            obj = tmp_path / f"{path.stem}.o"
            subprocess.run(
                [cc, "-std=c99", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", *flags, "-c",
                 str(path), "-o", str(obj)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            objects.append(str(obj))
            symbols = subprocess.run(
                ["nm", "-g", "--defined-only", str(obj)], check=True, capture_output=True,
                text=True,
            ).stdout.split()[2::3]  # fmt: skip
            assert symbols and all(s.startswith(f"{prefix}_") for s in symbols), symbols
    lib = tmp_path / "libboth.so"
    link = subprocess.run(
        [cc, "-shared", "-Wl,--no-undefined", *objects, "-o", str(lib)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert link.returncode == 0, link.stderr
    (tmp_path / "main.c").write_text(MAIN)
    exe = tmp_path / "main"
    build = subprocess.run(
        [cc, "-std=c99", "-O2", f"-I{tmp_path / 'one'}", f"-I{tmp_path / 'two'}",
         str(tmp_path / "main.c"), str(lib), f"-Wl,-rpath,{tmp_path}", "-o", str(exe)],
        check=False, capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
