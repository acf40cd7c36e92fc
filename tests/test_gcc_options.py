"""gcc optimisation options asked for by the files whose ring and ISA measured faster with
them (``gcc_options`` in nttgen.tuning): scheduling before register allocation, and no
predictive commoning.

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
from nttgen.emit.c_macros import gcc_options
from nttgen.emit.files import GeneratedFiles
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import generate_ntru
from nttgen.generate import generate
from nttgen.ntru_rings import get_ntru_ring
from nttgen.programs.build_config import GCC_NO_PREDICTIVE_COMMONING, GCC_SCHED_PRESSURE
from nttgen.rings import get_ring

PUSH = "#pragma GCC push_options"
POP = "#pragma GCC pop_options"
SCHED = '#pragma GCC optimize("schedule-insns", "sched-pressure")'
NO_PCOM = '#pragma GCC optimize("no-predictive-commoning")'


def _pragma_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("#pragma GCC")]


def test_no_options_no_directives() -> None:
    assert gcc_options(()) == ([], [])


def test_options_are_pushed_and_popped_for_gcc_alone() -> None:
    opening, closing = gcc_options(GCC_SCHED_PRESSURE)
    text = C.Unit([*opening, *closing]).render()
    assert text.count("defined(__GNUC__) && !defined(__clang__)") == 2
    assert text.index(PUSH) < text.index(SCHED) < text.index(POP)


@pytest.mark.parametrize(
    ("files", "asked"),
    [
        pytest.param(lambda: generate(get_ring("mlkem"), "avx512"), SCHED, id="mlkem-avx512"),
        pytest.param(lambda: generate(get_ring("kyber-r1"), "avx512"), SCHED, id="kyber-r1-avx512"),
        pytest.param(lambda: generate(get_ring("mlkem"), "avx2"), None, id="mlkem-avx2"),
        pytest.param(lambda: generate(get_ring("mldsa"), "avx512"), None, id="mldsa-avx512"),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx2"), SCHED, id="sntrup761-avx2"
        ),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx512"),
            NO_PCOM,
            id="sntrup761-avx512",
        ),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx2", "schoenhage-nussbaumer"),
            None,
            id="sntrup761-sn-avx2",
        ),
    ],
)
def test_the_pragma_is_where_the_tuning_asks_for_it(
    files: Callable[[], GeneratedFiles], asked: str | None
) -> None:
    source = files().source
    assert _pragma_lines(source) == ([PUSH, asked, POP] if asked else [])
    if asked:
        # around every function and table, inside the ISA's flag check
        first_fn = re.search(r"^(static |void )", source, re.M)
        assert first_fn is not None and source.index(asked) < first_fn.start()
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
@pytest.mark.parametrize(
    ("make_files", "options"),
    [
        pytest.param(
            lambda: generate(get_ring("mlkem"), "avx512"), GCC_SCHED_PRESSURE, id="mlkem-avx512"
        ),
        pytest.param(
            lambda: generate_ntru(get_ntru_ring("sntrup761"), "avx512"),
            GCC_NO_PREDICTIVE_COMMONING,
            id="sntrup761-avx512",
        ),
    ],
)
def test_the_pragma_is_the_flags_for_gcc_and_nothing_for_clang(
    compiler: str,
    make_files: Callable[[], GeneratedFiles],
    options: tuple[str, ...],
    tmp_path: Path,
) -> None:
    for tool in (compiler, "objdump"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (make test installs the toolchain)")
    files = make_files()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    without = "\n".join(ln for ln in files.source.splitlines() if not ln.startswith("#pragma"))
    (tmp_path / "without.c").write_text(without + "\n")
    isa = list(isa_class("avx512").cflags)
    pragma = _object_text(compiler, tmp_path / f"{files.stem}.c", isa, tmp_path / "a.o")
    flags = [f"-f{o}" for o in options] if compiler == "gcc" else []
    plain = _object_text(compiler, tmp_path / "without.c", isa + flags, tmp_path / "b.o")
    assert pragma == plain
    if compiler == "gcc":  # and the flags do change gcc's code, so the comparison can fail
        default = _object_text(compiler, tmp_path / "without.c", isa, tmp_path / "c.o")
        assert default != pragma
