"""What a project that vendors nttgen's output needs before it reads the code: the license
(a LICENSE file in the repository, the sdist and the wheel; an SPDX line at the top of every
generated file) and ISA files that refuse, in one line, to compile without their flags."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from nttgen.emit.files import ISA_CHECK_OFF, LICENSE_ID
from nttgen.emit.isa import isa_class

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
SPDX = f"SPDX-License-Identifier: {LICENSE_ID}"


def test_the_license_is_mit_and_named_in_the_package_metadata() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted" in text
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'license = "{LICENSE_ID}"' in pyproject and 'license-files = ["LICENSE"]' in pyproject


def test_the_sdist_and_the_wheel_carry_the_license(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (sdist,) = tmp_path.glob("*.tar.gz")
    (wheel,) = tmp_path.glob("*.whl")
    with tarfile.open(sdist) as tar:
        assert any(m.name.endswith("/LICENSE") for m in tar.getmembers())
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert f"License-Expression: {LICENSE_ID}" in whl.read(metadata).decode()


def _assert_licensed(path: Path, text: str) -> None:
    if path.name in ("CMakeLists.txt", "Makefile"):
        assert text.splitlines()[0] == f"# {SPDX}", path
    elif path.suffix == ".json":
        assert next(iter(json.loads(text))) == "SPDX-License-Identifier", path
        assert json.loads(text)["SPDX-License-Identifier"] == LICENSE_ID
    else:
        assert text.splitlines()[0] == f"// {SPDX}", path


def test_every_checked_in_generated_file_starts_with_its_license() -> None:
    files = sorted(p for p in GENERATED.rglob("*") if p.is_file())
    assert len(files) > 150
    for path in files:
        _assert_licensed(path, path.read_text())


def test_every_file_generate_writes_starts_with_its_license(tmp_path: Path) -> None:
    """Custom rings of both families, every ISA, the front end and the scheme aliases."""
    from nttgen.cli import main

    assert main(["generate", "--n", "64", "--q", "257", "--isa", "all", "--dispatch",
                 "--out", str(tmp_path / "ntt")]) == 0  # fmt: skip
    assert main(["generate", "--ring", "falcon512", "--isa", "c", "--isa", "avx2", "--dispatch",
                 "--out", str(tmp_path / "alias")]) == 0  # fmt: skip
    assert main(["generate", "--q", "4591", "--f", "x^761 - x - 1", "--isa", "c",
                 "--out", str(tmp_path / "ntru")]) == 0  # fmt: skip
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert any("falcon512" in p.name for p in files) and any(p.name.endswith(".h") for p in files)
    for path in files:
        _assert_licensed(path, path.read_text())


FLAGLESS = [
    ("avx2", "gcc", "-mavx2"),
    ("avx2", "clang-19", "-mavx2"),
    ("avx512", "gcc", "-mavx512f"),
    ("avx512", "clang-19", "-mavx512f"),
    ("neon", "gcc", "AArch64"),
    ("rvv", "gcc", "-march=rv64gcv"),
]


@pytest.mark.parametrize("isa,cc,named", FLAGLESS)
def test_an_isa_file_without_its_flags_stops_with_one_error(
    isa: str, cc: str, named: str, tmp_path: Path
) -> None:
    """Compiled for the host without the ISA's flags (the mistake of adding every .c to a
    build with the same flags): one #error naming what is missing, not the intrinsics' page of
    "inlining failed" errors."""
    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (make toolchain installs it)")
    stem = f"nttgen_mlkem_{isa}"
    for suffix in (".c", ".h"):
        shutil.copy(GENERATED / "mlkem" / (stem + suffix), tmp_path)
    proc = subprocess.run(
        [cc, "-O2", "-c", str(tmp_path / f"{stem}.c"), "-o", str(tmp_path / "x.o")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    errors = re.findall(r"^\S+:\d+:\d+: (?:fatal )?error: (.*)$", proc.stderr, re.M)
    assert len(errors) == 1, proc.stderr[-3000:]
    assert named in errors[0] and "compile this" in errors[0], errors[0]


def test_the_check_can_be_turned_off_for_builds_that_enable_the_isa_another_way(
    tmp_path: Path,
) -> None:
    """With the instructions enabled per function (target attributes) or by SIMDe, the build
    defines the opt-out macro and the file compiles past the check."""
    stem = "nttgen_mlkem_avx2"
    for suffix in (".c", ".h"):
        shutil.copy(GENERATED / "mlkem" / (stem + suffix), tmp_path)
    flags = list(isa_class("avx2").cflags)
    proc = subprocess.run(
        ["gcc", "-O2", *flags, f"-DNTTGEN_{ISA_CHECK_OFF}", "-c", str(tmp_path / f"{stem}.c"),
         "-o", str(tmp_path / "x.o")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
