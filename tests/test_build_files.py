"""The build files a ring directory ships: a consumer project builds and runs against the
generated library through CMake's ``find_package``, through pkg-config and through the plain
Makefile, with gcc and with clang, for an x^n + 1 ring and an NTRU Prime ring."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from nttgen.cli import main

# the product x * x^(n-1) = x^n: -1 for x^n + 1 (ML-KEM), x + 1 for x^p - x - 1 (sntrup761)
CONSUMER = r"""
#include <stdint.h>
#include <stdio.h>
#include "%(stem)s.h"

int main(void) {
    static %(t)s a[%(n)d], b[%(n)d], r[%(n)d];
    a[1] = 1;
    b[%(n)d - 1] = 1;
    %(stem)s_polymul(r, a, b);
    for (int i = 0; i < %(n)d; i++) {
        int want = %(want)s;
        if ((r[i] - want) %% %(q)d != 0) {
            printf("wrong at %%d: %%d\n", i, r[i]);
            return 1;
        }
    }
    printf("%%s\n", %(stem)s_isa());
    return 0;
}
"""

# every preset: x * x^(n-1) = -1 in x^n + 1, x * x^(p-1) = x + 1 in x^p - x - 1
RINGS = {
    "mlkem": ("nttgen_mlkem", 256, 3329, "i == 0 ? -1 : 0", "int16_t"),
    "mldsa": ("nttgen_mldsa", 256, 8380417, "i == 0 ? -1 : 0", "int32_t"),
    "kyber-r1": ("nttgen_kyber_r1", 256, 7681, "i == 0 ? -1 : 0", "int16_t"),
    "newhope512": ("nttgen_newhope512", 512, 12289, "i == 0 ? -1 : 0", "int16_t"),
    "newhope1024": ("nttgen_newhope1024", 1024, 12289, "i == 0 ? -1 : 0", "int16_t"),
    "sntrup761": ("nttgen_sntrup761", 761, 4591, "i <= 1 ? 1 : 0", "int16_t"),
}
CONSUMER_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package({stem} CONFIG REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE nttgen::{stem})
"""


@pytest.fixture(scope="module", params=sorted(RINGS))
def ring_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ring") / request.param
    assert main(["generate", "--ring", request.param, "--isa", "all", "--dispatch",
                 "-o", str(out)]) == 0  # fmt: skip
    assert (out / "CMakeLists.txt").is_file() and (out / "Makefile").is_file()
    return out


def _consumer(ring_dir: Path, where: Path) -> tuple[str, Path]:
    stem, n, q, want, elem = RINGS[ring_dir.name]
    where.mkdir(parents=True, exist_ok=True)
    values = {"stem": stem, "n": n, "q": q, "want": want, "t": elem}
    (where / "main.c").write_text(CONSUMER % values)
    return stem, where / "main.c"


def _run(exe: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NTTGEN_ISA"}
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=False, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip()


def _sh(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})  # fmt: skip
    assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_cmake_find_package_and_pkg_config(cc: str, ring_dir: Path, tmp_path: Path) -> None:
    """Configure, build and install the library with CMake; a consumer project finds it with
    find_package and another compiles against its pkg-config file; both run."""
    for tool in ("cmake", "pkg-config", cc):
        require_tool(tool)
    prefix = tmp_path / "prefix"
    build = tmp_path / "build"
    _sh(["cmake", "-S", str(ring_dir), "-B", str(build), f"-DCMAKE_C_COMPILER={cc}",
         f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_BUILD_TYPE=Release"])  # fmt: skip
    _sh(["cmake", "--build", str(build)])
    _sh(["cmake", "--install", str(build)])
    stem, main_c = _consumer(ring_dir, tmp_path / "consumer")
    (main_c.parent / "CMakeLists.txt").write_text(CONSUMER_CMAKE.format(stem=stem))
    cbuild = tmp_path / "consumer-build"
    _sh(["cmake", "-S", str(main_c.parent), "-B", str(cbuild), f"-DCMAKE_C_COMPILER={cc}",
         f"-DCMAKE_PREFIX_PATH={prefix}"])  # fmt: skip
    _sh(["cmake", "--build", str(cbuild)])
    chosen = _run(cbuild / "consumer")
    assert chosen in ("avx2", "avx512", "c")
    pc_env = {"PKG_CONFIG_PATH": str(next(prefix.glob("lib*/pkgconfig")))}
    flags = _sh(["pkg-config", "--cflags", "--libs", stem], env=pc_env).split()
    exe = tmp_path / "pc-consumer"
    _sh([cc, "-std=c99", "-O2", str(main_c), *flags, "-o", str(exe)])
    assert _run(exe) == chosen


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_the_plain_makefile(cc: str, ring_dir: Path, tmp_path: Path) -> None:
    """make builds the static library with each ISA file's flags; make install puts it, the
    headers and the pkg-config file under PREFIX; a consumer links and runs."""
    for tool in ("make", "pkg-config", cc):
        require_tool(tool)
    src = tmp_path / "src"
    shutil.copytree(ring_dir, src)
    prefix = tmp_path / "prefix"
    _sh(["make", f"CC={cc}", "-j2"], cwd=src)
    _sh(["make", f"CC={cc}", "install", f"PREFIX={prefix}"], cwd=src)
    stem, main_c = _consumer(ring_dir, tmp_path / "consumer")
    flags = _sh(["pkg-config", "--cflags", "--libs", stem],
                env={"PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")}).split()  # fmt: skip
    exe = tmp_path / "consumer" / "app"
    _sh([cc, "-std=c99", "-O2", str(main_c), *flags, "-o", str(exe)])
    assert _run(exe) in ("avx2", "avx512", "c")


def test_every_checked_in_ring_directory_has_its_build_files() -> None:
    generated = Path(__file__).resolve().parent.parent / "generated"
    for ring in sorted(p for p in generated.iterdir() if p.is_dir()):
        cmake = (ring / "CMakeLists.txt").read_text()
        assert cmake.startswith("# SPDX-License-Identifier: MIT")
        stem = f"nttgen_{ring.name.replace('-', '_')}"
        assert f"project({stem} " in cmake
        assert (ring / "Makefile").read_text().startswith("# SPDX-License-Identifier: MIT")
        # the self-test: a ctest test under an option, a make target (tests/test_selftest.py)
        assert (ring / f"{stem}_selftest.c").is_file()
        assert f"option({stem.upper()}_BUILD_TESTING " in cmake and "add_test(" in cmake
        assert "\ncheck: $(SELFTEST)\n" in (ring / "Makefile").read_text()


def test_add_subdirectory_leaves_the_self_test_out(ring_dir: Path, tmp_path: Path) -> None:
    """A project that adds the ring directory with add_subdirectory() gets the library and no
    self-test (the option defaults to OFF there); the option turns it on."""
    require_tool("cmake")
    stem = RINGS[ring_dir.name][0]
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(parent C)\n"
        f"add_subdirectory({ring_dir} ring)\n"
    )
    build = tmp_path / "build"
    _sh(["cmake", "-S", str(parent), "-B", str(build)])
    cache = (build / "CMakeCache.txt").read_text()
    assert f"{stem.upper()}_BUILD_TESTING:BOOL=OFF" in cache
    targets = _sh(["cmake", "--build", str(build), "--target", "help"])
    assert f"{stem}_selftest" not in targets and stem in targets
    _sh(["cmake", "-S", str(parent), "-B", str(build), f"-D{stem.upper()}_BUILD_TESTING=ON"])
    assert f"{stem}_selftest" in _sh(["cmake", "--build", str(build), "--target", "help"])
