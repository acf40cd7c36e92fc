"""gcc's scheduling before register allocation, asked for by the files whose ring and ISA
measured faster with it (``gcc_sched_pressure`` in nttgen.tuning).

The pragma must reach gcc (the object equals the one built with the flags), leave clang's
object alone, restore the includer's options at the end of the file (unity builds include
several ISA files in one translation unit), and appear only where the tuning asks for it."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from nttgen.emit import c_ast as C
from nttgen.emit.c_macros import SCHED_PRESSURE, gcc_options
from nttgen.emit.files import GeneratedFiles
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import generate_ntru
from nttgen.generate import generate
from nttgen.ntru_rings import get_ntru_ring
from nttgen.rings import get_ring

PUSH = "#pragma GCC push_options"
POP = "#pragma GCC pop_options"
OPTIMIZE = '#pragma GCC optimize("schedule-insns", "sched-pressure")'


def _pragma_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("#pragma GCC")]


def test_no_options_no_directives() -> None:
    assert gcc_options(()) == ([], [])


def test_options_are_pushed_and_popped_for_gcc_alone() -> None:
    opening, closing = gcc_options(SCHED_PRESSURE)
    text = C.Unit([*opening, *closing]).render()
    assert text.count("defined(__GNUC__) && !defined(__clang__)") == 2
    assert text.index(PUSH) < text.index(OPTIMIZE) < text.index(POP)


@pytest.mark.parametrize(
    ("files", "asked"),
    [
        pytest.param(lambda: generate(get_ring("mlkem"), "avx512"), True, id="mlkem-avx512"),
        pytest.param(lambda: generate(get_ring("kyber-r1"), "avx512"), True, id="kyber-r1-avx512"),
        pytest.param(lambda: generate(get_ring("mlkem"), "avx2"), False, id="mlkem-avx2"),
        pytest.param(lambda: generate(get_ring("mldsa"), "avx512"), False, id="mldsa-avx512"),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx2"), True, id="sntrup761-avx2"
        ),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx512"),
            False,
            id="sntrup761-avx512",
        ),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx2", "schoenhage-nussbaumer"),
            False,
            id="sntrup761-sn-avx2",
        ),
    ],
)
def test_the_pragma_is_where_the_tuning_asks_for_it(
    files: Callable[[], GeneratedFiles], asked: bool
) -> None:
    source = files().source
    assert _pragma_lines(source) == ([PUSH, OPTIMIZE, POP] if asked else [])
    if asked:
        # around every function and table, inside the ISA's flag check
        first_fn = re.search(r"^(static |void )", source, re.M)
        assert first_fn is not None and source.index(OPTIMIZE) < first_fn.start()
        assert source.rindex(POP) > source.rindex("\n}\n")
        assert source.rindex(POP) < source.rindex("#endif /* -m")


def _object_text(compiler: str, src: Path, flags: list[str], out: Path) -> str:
    cmd = [compiler, "-std=c99", "-O3", "-Wall", "-Wextra", "-Werror", *flags]
    subprocess.run([*cmd, "-c", str(src), "-o", str(out)], check=True, capture_output=True)
    dump = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(out)], check=True, capture_output=True
    ).stdout.decode()
    return dump.split("\n", 3)[3]  # without the line naming the file


@pytest.mark.parametrize("compiler", ["gcc", "clang-19"])
def test_the_pragma_is_the_flags_for_gcc_and_nothing_for_clang(
    compiler: str, tmp_path: Path
) -> None:
    for tool in (compiler, "objdump"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (make test installs the toolchain)")
    files: GeneratedFiles = generate(get_ring("mlkem"), "avx512")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    without = "\n".join(ln for ln in files.source.splitlines() if not ln.startswith("#pragma"))
    (tmp_path / "without.c").write_text(without + "\n")
    isa = list(isa_class("avx512").cflags)
    pragma = _object_text(compiler, tmp_path / f"{files.stem}.c", isa, tmp_path / "a.o")
    flags = ["-fschedule-insns", "-fsched-pressure"] if compiler == "gcc" else []
    plain = _object_text(compiler, tmp_path / "without.c", isa + flags, tmp_path / "b.o")
    assert pragma == plain
    if compiler == "gcc":  # and the flags do change gcc's code, so the comparison can fail
        unscheduled = _object_text(compiler, tmp_path / "without.c", isa, tmp_path / "c.o")
        assert unscheduled != pragma
