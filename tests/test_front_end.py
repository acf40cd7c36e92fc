"""The dispatching front end as a library ships it: freestanding (no C library call in its
object), any subset of the ISA files compiled in, a caller-supplied capability hook, the ISA
chosen once and published race-free (ThreadSanitizer), ``init`` to choose up front; the
environment variable only in builds that opt in for tests and benchmarks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import require_isa
from nttgen.cli import main

WARN = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wpedantic"]
STEM = "nttgen_mlkem"
ISA_FLAGS = {"avx2": ["-mavx2"], "avx512": ["-mavx512f", "-mavx512bw"], "c": []}

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include "nttgen_mlkem.h"
#include "nttgen_mlkem_c.h"
%(hook)s
int main(void) {
    int16_t a[256], b[256];
    for (int i = 0; i < 256; i++) a[i] = b[i] = (int16_t)((i * 71) %% 3329 - 1664);
    nttgen_mlkem_init();
    nttgen_mlkem_ntt(a);
    nttgen_mlkem_intt(a);
    nttgen_mlkem_c_ntt(b);
    nttgen_mlkem_c_intt(b);
    for (int i = 0; i < 256; i++) {
        if ((a[i] - b[i]) %% 3329 != 0) return 1;
    }
    printf("%%s\n", nttgen_mlkem_isa());
    return 0;
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("front")
    assert main(["generate", "--ring", "mlkem", "--isa", "c", "--isa", "avx2", "--isa",
                 "avx512", "--dispatch", "-o", str(out)]) == 0  # fmt: skip
    return out


def _objects(files: Path, where: Path, cc: str, isas: list[str], front: list[str]) -> list[str]:
    objects = []
    for isa in isas:
        obj = where / f"{isa}.o"
        subprocess.run([cc, *WARN, *ISA_FLAGS[isa], "-c", str(files / f"{STEM}_{isa}.c"),
                        "-o", str(obj)], check=True)  # fmt: skip
        objects.append(str(obj))
    obj = where / "front.o"
    subprocess.run([cc, *WARN, *front, "-c", str(files / f"{STEM}.c"), "-o", str(obj)],
                   check=True)  # fmt: skip
    return [*objects, str(obj)]


def _run(files: Path, where: Path, cc: str, objects: list[str], hook: str = "",
         extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:  # fmt: skip
    (where / "driver.c").write_text(DRIVER % {"hook": hook})
    exe = where / "driver"
    subprocess.run([cc, "-std=c99", "-O1", *extra, f"-I{files}", str(where / "driver.c"),
                    *objects, "-o", str(exe)], check=True)  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "NTTGEN_ISA"}
    return subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=False)


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_the_front_end_calls_no_c_library_function(cc: str, files: Path, tmp_path: Path) -> None:
    """Compiled -ffreestanding, its object needs nothing but the ISA files' functions; the
    test build (-D..._TESTING) is the one that reads the environment."""
    obj = tmp_path / "front.o"
    subprocess.run([cc, *WARN, "-ffreestanding", "-c", str(files / f"{STEM}.c"), "-o", str(obj)],
                   check=True)  # fmt: skip
    undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                               check=True).stdout.split()  # fmt: skip
    names = [u for u in undefined if u != "U"]
    assert names and all(n.startswith(f"{STEM}_") for n in names), names
    subprocess.run([cc, *WARN, f"-D{STEM.upper()}_TESTING", "-c", str(files / f"{STEM}.c"),
                    "-o", str(obj)], check=True)  # fmt: skip
    testing = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    assert "getenv" in testing and "abort" in testing


@pytest.mark.parametrize(
    "isas,left_out",
    [(["c", "avx2"], ["AVX512"]), (["c", "avx512"], ["AVX2"]), (["c"], ["AVX512", "AVX2"])],
    ids=["no-avx512", "no-avx2", "c-only"],
)
def test_any_subset_of_isa_files_links_and_runs(
    isas: list[str], left_out: list[str], files: Path, tmp_path: Path
) -> None:
    """Each ISA file left out (its object not linked, NO_<ISA> defined for the front end)
    leaves a front end that links and picks among the rest."""
    require_isa("avx2")
    front = [f"-D{STEM.upper()}_NO_{isa}" for isa in left_out]
    objects = _objects(files, tmp_path, "gcc", isas, front)
    run = _run(files, tmp_path, "gcc", objects)
    assert run.returncode == 0, run.stdout + run.stderr
    chosen = run.stdout.strip()
    assert chosen in isas
    if "avx2" in isas:
        assert chosen != "c"  # this CPU runs AVX2: the front end takes it


HOOK = r"""
#include <string.h>
int my_cpu_runs(const char *isa) { return strcmp(isa, "avx2") == 0; }
"""


def test_a_caller_supplied_capability_hook_decides(files: Path, tmp_path: Path) -> None:
    """With <STEM>_CUSTOM_RUNS_HERE naming the caller's function, the front end asks it (no
    CPUID): a hook that allows only AVX2 gets AVX2, one that allows nothing gets the C."""
    require_isa("avx2")
    front = [f"-D{STEM.upper()}_CUSTOM_RUNS_HERE=my_cpu_runs"]
    objects = _objects(files, tmp_path, "gcc", ["c", "avx2", "avx512"], front)
    run = _run(files, tmp_path, "gcc", objects, HOOK)
    assert run.returncode == 0 and run.stdout.strip() == "avx2", run.stdout + run.stderr
    never = HOOK.replace('strcmp(isa, "avx2") == 0', "isa == 0")
    run = _run(files, tmp_path, "gcc", objects, never)
    assert run.returncode == 0 and run.stdout.strip() == "c", run.stdout + run.stderr


RACE = r"""
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include "nttgen_mlkem.h"

static void *work(void *arg) {
    int16_t a[256];
    for (int i = 0; i < 256; i++) a[i] = (int16_t)i;
    nttgen_mlkem_ntt(a); /* the first call: every thread chooses at once */
    (void)arg;
    return NULL;
}

int main(void) {
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    printf("%s\n", nttgen_mlkem_isa());
    return 0;
}
"""


def _race_runs(cc: str, files: Path, where: Path, front: Path) -> list[str]:
    """Build the eight-thread program under ThreadSanitizer with the front end ``front``;
    return the stderr of five runs."""
    objects = []
    for isa, src in (("c", None), ("avx2", None), ("avx512", None), (None, front)):
        src = src or files / f"{STEM}_{isa}.c"
        obj = where / f"{isa or 'front'}.o"
        subprocess.run([cc, "-std=gnu99", "-O1", "-g", "-fsanitize=thread", f"-I{files}",
                        *ISA_FLAGS.get(isa or "c", []), "-c", str(src), "-o", str(obj)],
                       check=True)  # fmt: skip
        objects.append(str(obj))
    (where / "race.c").write_text(RACE)
    exe = where / "race"
    subprocess.run([cc, "-std=gnu99", "-O1", "-g", "-fsanitize=thread", f"-I{files}",
                    str(where / "race.c"), *objects, "-pthread", "-o", str(exe)],
                   check=True)  # fmt: skip
    env = {**os.environ, "TSAN_OPTIONS": "halt_on_error=1"}
    runs = [subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=False)
            for _ in range(5)]  # fmt: skip
    return [r.stderr if r.returncode == 0 else f"rc {r.returncode}: {r.stderr}" for r in runs]


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_concurrent_first_calls_are_race_free(cc: str, files: Path, tmp_path: Path) -> None:
    """Eight threads make the first call at once under ThreadSanitizer: no data race is
    reported on the published choice. The control, the same file with plain loads and stores
    of the choice, is reported."""
    require_isa("avx2")
    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (make toolchain installs it)")
    for err in _race_runs(cc, files, tmp_path, files / f"{STEM}.c"):
        assert "WARNING: ThreadSanitizer" not in err and not err.startswith("rc "), err
    text = (files / f"{STEM}.c").read_text()
    atomic = "#if defined(__GNUC__) || defined(__clang__)\n#define NTTGEN_MLKEM_LOAD"
    assert atomic in text
    plain = tmp_path / f"{STEM}_plain.c"
    plain.write_text(text.replace(atomic, "#if 0\n#define NTTGEN_MLKEM_LOAD"))
    control = tmp_path / "control"
    control.mkdir()
    assert any("data race" in err for err in _race_runs(cc, files, control, plain))
