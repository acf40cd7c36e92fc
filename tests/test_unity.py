"""The single-file form of a ring library (``<stem>_unity.c``): it compiles with gcc and clang
and no instruction-set flags, holds the code of every x86 ISA, gives the portable C's results
on every ISA this CPU runs, makes the automatic choice of the library built from separate
files, and leaves out an ISA that ``<STEM>_NO_<ISA>`` names; a compiler that is neither gcc nor
clang gets the portable C alone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import require_isa, require_tool
from nttgen import cpu
from nttgen.cli import main
from nttgen.emit.isa import isa_class
from nttgen.emit.unity import target_string, unity_name

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
STRICT = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror")
X86_SET = ["--isa", "c", "--isa", "avx2", "--isa", "avx512", "--dispatch"]

# argv: ISAs to force in turn ("-": the automatic choice, first); stdin: a, b and c. Per ISA:
# its name (or "refused"), then what the family's body (below) prints.
DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include "%(stem)s.h"
#define N %(n)d
typedef %(t)s coef;

static void show(const coef *x) {
    for (int i = 0; i < N; ++i) printf("%%ld ", (long)x[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    static coef in[3][N], a[N], b[N], r[N], u[2 * N], v[2 * N];
    long x;
    (void)a, (void)b, (void)u, (void)v;
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < N; ++i) {
            if (scanf("%%ld", &x) != 1) return 2;
            in[k][i] = (coef)x;
        }
    }
    for (int k = 1; k < argc; ++k) {
        if (strcmp(argv[k], "-") != 0 && %(stem)s_use_isa(argv[k]) != 0) {
            printf("refused\n");
            continue;
        }
        printf("%%s\n", %(stem)s_isa());
        %(stem)s_polymul(r, in[0], in[1]);
        show(r);
%(body)s
    }
    return 0;
}
"""

# x^n + 1 rings, after polymul(a, b): ntt(a) in the standard order; intt(basemul(ntt a,
# ntt b)); intt(basemul_acc) of the pairs (ntt a, ntt b), (ntt b, ntt a); reduce(c);
# tomont(c); frommont(c)
NTT_BODY = r"""
        memcpy(a, in[0], sizeof a);
        memcpy(b, in[1], sizeof b);
        %(stem)s_ntt(a);
        %(stem)s_ntt(b);
        memcpy(u, a, sizeof a);
        memcpy(u + N, b, sizeof b);
        memcpy(v, b, sizeof b);
        memcpy(v + N, a, sizeof a);
        %(stem)s_basemul(r, a, b);
        %(stem)s_intt(r);
        %(stem)s_to_standard(a);
        show(a);
        show(r);
        %(stem)s_basemul_acc(r, u, v, 2);
        %(stem)s_intt(r);
        show(r);
        memcpy(a, in[2], sizeof a);
        %(stem)s_reduce(a);
        show(a);
        memcpy(a, in[2], sizeof a);
        %(stem)s_tomont(a);
        show(a);
        memcpy(a, in[2], sizeof a);
        %(stem)s_frommont(a);
        show(a);"""

# NTRU Prime rings, after polymul(a, b): polymul_small(a, c)
NTRU_BODY = r"""
        %(stem)s_polymul_small(r, in[0], in[2]);
        show(r);"""


class Library:
    """A ring directory with a front end, read through its manifests."""

    def __init__(self, folder: Path, stem: str) -> None:
        self.folder, self.stem = folder, stem
        self.front = json.loads((folder / f"{stem}.json").read_text())
        self.isas = {i["name"]: i for i in self.front["isas"]}
        self.ntru = f"{stem}_polymul_small" in self.front["functions"]
        self.manifests = {
            name: json.loads((folder / f"{i['stem']}.json").read_text())
            for name, i in self.isas.items()
        }
        ring = self.front["ring"]
        self.q, self.n = ring["q"], ring.get("n", ring.get("p"))
        self.rows = 2 if self.ntru else 7  # what the driver prints per ISA

    def in_range(self, op: str, param: str) -> tuple[int, int]:
        """The range of ``op``'s input ``param`` that every ISA accepts."""
        ranges = []
        for m in self.manifests.values():
            (p,) = [p for p in m["functions"][op]["params"] if p["name"] == param]
            ranges.append(p["in_range"])
        return max(r[0] for r in ranges), min(r[1] for r in ranges)

    def lane_type(self) -> str:
        """The C type of a coefficient."""
        params = self.manifests["c"]["functions"]["polymul"]["params"]
        return str(next(p["elem"] for p in params if p["name"] == "a"))

    def inputs(self, seed: int) -> list[np.ndarray]:
        """Random inputs (seed > 0) or extreme ones (seed 0): a, b and c, each in the range of
        every op that reads it."""
        rng = np.random.default_rng(seed)
        if self.ntru:
            ranges = [self.in_range("polymul", "a"), self.in_range("polymul", "b"),
                      self.in_range("polymul_small", "b")]  # fmt: skip
        else:
            ab = [self.in_range(op, "a") for op in ("ntt", "polymul")]
            ab = [(max(r[0] for r in ab), min(r[1] for r in ab))] * 2
            cs = [self.in_range(op, "a") for op in ("reduce", "tomont", "frommont")]
            ranges = [*ab, (max(r[0] for r in cs), min(r[1] for r in cs))]
        if seed:
            return [rng.integers(lo, hi + 1, self.n) for lo, hi in ranges]
        (_, a_hi), (b_lo, _), (c_lo, c_hi) = ranges
        c = np.where(np.arange(self.n) % 2 == 0, c_lo, c_hi)
        return [np.full(self.n, a_hi), np.full(self.n, b_lo), c]

    def driver(self, where: Path) -> Path:
        values = {"stem": self.stem, "n": self.n, "t": self.lane_type()}
        body = (NTRU_BODY if self.ntru else NTT_BODY) % values
        path = where / "driver.c"
        path.write_text(DRIVER % {**values, "body": body})
        return path


def _sh(cmd: list[str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stderr[-3000:]}"
    return proc.stdout


def _link(cc: list[str], lib: Library, objects: list[Path], exe: Path) -> Path:
    driver = lib.driver(exe.parent)
    objs = [str(o) for o in objects]
    _sh([*cc, "-std=c99", "-O1", f"-I{lib.folder}", str(driver), *objs, "-o", str(exe)])
    return exe


def _unity(cc: str, lib: Library, tmp: Path, *defines: str) -> Path:
    """The single file compiled with ``cc`` and no instruction-set flags."""
    obj = tmp / f"unity{len(list(tmp.glob('unity*.o')))}.o"
    _sh([cc, *STRICT, *defines, "-c", str(lib.folder / unity_name(lib.stem)), "-o", str(obj)])
    return obj


def _separate(cc: str, lib: Library, tmp: Path, *defines: str) -> list[Path]:
    """The library from separate files, each ISA file of this machine with its flags (-O0:
    only its choice of ISA is read), the front end with ``defines``."""
    objects = []
    for name, isa in lib.isas.items():
        left_out = f"-D{lib.stem.upper()}_NO_{name.upper()}" in defines
        if isa_class(name).arch not in (None, "x86_64") or left_out:
            continue
        obj = tmp / f"{isa['stem']}.o"
        src = lib.folder / f"{isa['stem']}.c"
        _sh([cc, "-std=c99", "-O0", *isa["cflags"], "-c", str(src), "-o", str(obj)])
        objects.append(obj)
    front = tmp / f"{lib.stem}.o"
    src = lib.folder / f"{lib.stem}.c"
    _sh([cc, "-std=c99", "-O0", *defines, "-c", str(src), "-o", str(front)])
    return [*objects, front]


def _run(exe: list[str], lib: Library, inputs: list[np.ndarray], isas: list[str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_ISA")}
    data = " ".join(str(int(x)) for part in inputs for x in part)
    proc = subprocess.run([*exe, *isas], input=data, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def _results(lines: list[str], isas: list[str], rows: int) -> dict[str, list[list[int]]]:
    """The driver's output per ISA asked for: the ``rows`` rows of numbers after the ISA's
    name, or none where it was refused."""
    out, i = {}, 0
    for isa in isas:
        if lines[i] == "refused":
            out[isa], i = [], i + 1
            continue
        assert isa in ("-", lines[i]), (isa, lines[i])
        out[isa] = [[int(x) for x in line.split()] for line in lines[i + 1 : i + 1 + rows]]
        i += 1 + rows
    assert i == len(lines)
    return out


def _check_every_isa(exe: list[str], lib: Library, runs_here: list[str]) -> str:
    """Every ISA that runs here, forced, gives the portable C's results on random and extreme
    inputs (exactly where the contract is [0, q) or centred; mod q elsewhere); return the
    automatic choice."""
    chosen = ""
    for seed in (1, 2, 0):
        lines = _run(exe, lib, lib.inputs(seed), ["-", "c", *runs_here])
        chosen = lines[0]
        got = _results(lines, ["-", "c", *runs_here], lib.rows)
        want = got["c"]
        assert len(want) == lib.rows
        for isa in runs_here:
            for k, (row, ref) in enumerate(zip(got[isa], want, strict=True)):
                if lib.ntru or k == 0:  # the products: one representative each
                    assert row == ref, (isa, seed, k)
                else:
                    assert [x % lib.q for x in row] == [x % lib.q for x in ref], (isa, seed, k)
    return chosen


def _defined(obj: Path) -> set[str]:
    return {line.split()[-1] for line in _sh(["nm", str(obj)]).splitlines() if " T " in line}


@pytest.fixture(scope="module")
def prefixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ML-KEM's x86 files and front end under ``--prefix mlk``."""
    out = tmp_path_factory.mktemp("mlk")
    assert main(["generate", "--ring", "mlkem", *X86_SET, "--prefix", "mlk", "-o", str(out)]) == 0
    return out


def _library(case: str, request: pytest.FixtureRequest | None = None) -> Library:
    """A checked-in ring directory, or (``mlk``) ML-KEM's under ``--prefix mlk``."""
    if case == "mlk":
        assert request is not None
        return Library(request.getfixturevalue("prefixed"), "mlk")
    return Library(GENERATED / case, f"nttgen_{case}")


def test_target_strings_follow_the_flags() -> None:
    assert target_string(("-mavx2",)) == "avx2"
    assert target_string(("-mavx512f", "-mavx512bw")) == "avx512f,avx512bw"
    for flags in (("-march=rv64gcv",), ()):
        with pytest.raises(ValueError):
            target_string(flags)
    assert unity_name("nttgen_mlkem") == "nttgen_mlkem_unity.c"


def test_every_ring_directory_has_its_single_file() -> None:
    """Each checked-in ring directory holds the single file, which includes every ISA file
    and the front end, with each x86 ISA between pragmas of the target its flags name."""
    for folder in sorted(p for p in GENERATED.iterdir() if p.is_dir()):
        stem = f"nttgen_{folder.name.replace('-', '_')}"
        text = (folder / unity_name(stem)).read_text()
        assert text.startswith("// SPDX-License-Identifier: MIT\n")
        assert "#define NTTGEN_NO_ISA_CHECK 1" in text
        for isa in json.loads((folder / f"{stem}.json").read_text())["isas"]:
            assert f'#include "{isa["stem"]}.c"' in text
            if isa_class(isa["name"]).arch == "x86_64":
                target = target_string(tuple(isa["cflags"]))
                assert f'#pragma GCC target("{target}")' in text
                assert f'push(__attribute__((target("{target}"))), apply_to = function)' in text
        assert text.rstrip().endswith(f'#include "{stem}.c"')


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
@pytest.mark.parametrize("case", ["mlkem", "sntrup761", "mlk"])
def test_one_file_gives_the_portable_results(
    case: str, cc: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Compiled with no -m flag, the single file holds the x86 ISAs' code; each ISA this CPU
    runs gives the portable C's results; the automatic choice is the separate build's."""
    require_tool(cc)
    lib = _library(case, request)
    obj = _unity(cc, lib, tmp_path)
    symbols = _defined(obj)
    for name, isa in lib.isas.items():
        arch = isa_class(name).arch
        assert (f"{isa['stem']}_polymul" in symbols) == (arch in (None, "x86_64")), name
    runs_here = [i for i in cpu.usable_isas() if i in lib.isas and i != "c"]
    exe = _link([cc], lib, [obj], tmp_path / "unity")
    chosen = _check_every_isa([str(exe)], lib, runs_here)
    apart = _link([cc], lib, _separate(cc, lib, tmp_path), tmp_path / "apart")
    assert _run([str(apart)], lib, lib.inputs(1), ["-"])[0] == chosen


@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_a_left_out_isa_stays_out(cc: str, tmp_path: Path) -> None:
    """-D<STEM>_NO_AVX512 leaves AVX-512 out of the single file: no code, refused when forced,
    and the automatic choice is that of the separate build without it."""
    require_tool(cc)
    lib = _library("mlkem")
    no = f"-D{lib.stem.upper()}_NO_AVX512"
    obj = _unity(cc, lib, tmp_path, no)
    symbols = _defined(obj)
    assert f"{lib.stem}_avx2_polymul" in symbols
    assert not any("_avx512_" in s for s in symbols)
    exe = _link([cc], lib, [obj], tmp_path / "unity")
    lines = _run([str(exe)], lib, lib.inputs(1), ["-", "avx512"])
    assert lines[0] != "avx512" and lines[-1] == "refused"
    apart = _link([cc], lib, _separate(cc, lib, tmp_path, no), tmp_path / "apart")
    assert _run([str(apart)], lib, lib.inputs(1), ["-"])[0] == lines[0]


def test_another_compiler_gets_the_portable_c(tmp_path: Path) -> None:
    """Where neither __GNUC__ nor __clang__ is defined (gcc -U__GNUC__ stands in for such a
    compiler), the file compiles the portable C and the front end alone."""
    lib = _library("mlkem")
    obj = tmp_path / "plain.o"
    src = lib.folder / unity_name(lib.stem)
    _sh(["gcc", "-std=c99", "-O1", "-U__GNUC__", "-c", str(src), "-o", str(obj)])
    isas = {s.removeprefix(f"{lib.stem}_").split("_")[0] for s in _defined(obj)}
    assert {f"{lib.stem}_c_polymul", f"{lib.stem}_polymul"} <= _defined(obj)
    assert not isas & (set(lib.isas) - {"c"})


@pytest.mark.slow  # QEMU, as the slow tier's other AArch64 runs
def test_aarch64_single_file_picks_neon(tmp_path: Path) -> None:
    """Cross-compiled for AArch64 (gcc, no flags) and run under QEMU: NEON and the portable C
    are compiled in, NEON is picked and gives the portable C's results; x86 is refused."""
    require_isa("neon")
    cc = require_tool("aarch64-linux-gnu-gcc")
    qemu = require_tool("qemu-aarch64")
    lib = _library("mlkem")
    obj = _unity(cc, lib, tmp_path)
    assert f"{lib.stem}_neon_polymul" in _defined(obj)
    exe = _link([cc, "-static"], lib, [obj], tmp_path / "unity")
    assert _check_every_isa([qemu, str(exe)], lib, ["neon"]) == "neon"
    assert _run([qemu, str(exe)], lib, lib.inputs(1), ["avx2"]) == ["refused"]
