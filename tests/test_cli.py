"""The command line: every subcommand, and one-line errors with a nonzero exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nttgen.cli import main

NTTGEN = [sys.executable, "-m", "nttgen"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NTTGEN, *args], capture_output=True, text=True, timeout=600)


def test_help_everywhere() -> None:
    for cmd in ([], ["list"], ["generate"], ["verify"], ["bench"], ["plans"]):
        p = run(*cmd, "--help")
        assert p.returncode == 0 and "usage: nttgen" in p.stdout


def test_list() -> None:
    p = run("list")
    assert p.returncode == 0
    for name in ("mlkem", "mldsa", "kyber-r1", "newhope1024", "falcon512", "portable C99"):
        assert name in p.stdout


def test_generate_preset_and_custom(tmp_path: Path) -> None:
    p = run("generate", "--ring", "mlkem", "--isa", "c", "-o", str(tmp_path / "a"))
    assert p.returncode == 0, p.stderr
    files = sorted(x.name for x in (tmp_path / "a").iterdir())
    assert files == ["nttgen_mlkem_c.c", "nttgen_mlkem_c.h", "nttgen_mlkem_c.json"]
    first = (tmp_path / "a" / "nttgen_mlkem_c.c").read_bytes()
    assert run("generate", "--ring", "mlkem", "-o", str(tmp_path / "b")).returncode == 0
    assert (tmp_path / "b" / "nttgen_mlkem_c.c").read_bytes() == first  # byte-identical
    p = run("generate", "--n", "512", "--q", "7681", "-o", str(tmp_path / "c"))
    assert p.returncode == 0, p.stderr
    manifest = json.loads((tmp_path / "c" / "nttgen_n512_q7681_c.json").read_text())
    assert manifest["ring"]["n"] == 512 and manifest["ring"]["base_degree"] == 2
    assert manifest["functions"]["polymul"]["params"][0]["out_range"] == [0, 7680]


def test_verify_passes() -> None:
    assert main(["verify", "--ring", "mlkem", "--trials", "2"]) == 0
    assert main(["verify", "--n", "64", "--q", "257", "--trials", "2"]) == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["generate", "--n", "300", "--q", "3329", "-o", "x"], "n=300 is not a power of two"),
        (["generate", "--n", "256", "--q", "3331", "-o", "x"], "nearest valid q"),
        (["generate", "--ring", "kyberr", "-o", "x"], "unknown ring 'kyberr'"),
        (["generate", "--ring", "mlkem", "--isa", "sse9", "-o", "x"], "unknown ISA 'sse9'"),
        (["generate", "--n", "256", "-o", "x"], "needs both --n and --q"),
        (["generate", "-o", "x"], "choose a ring"),
        (["verify", "--ring", "mlkem", "--trials", "0"], "--trials must be at least 1"),
        (["bench", "--ring", "mlkem", "--op", "fft"], "unknown op 'fft'"),
        (["bench", "--ring", "mlkem", "--samples", "0"], "at least 1"),
        (["frobnicate"], "invalid choice"),
        (["generate", "--ring", "mlkem"], "required: -o/--output"),
        (["generate", "--n", "x", "--q", "3", "-o", "x"], "invalid int value"),
        (
            ["generate", "--ring", "mlkem", "--ring", "mldsa", "-o", "x"],
            "--ring takes one value, given mlkem and mldsa",
        ),
        (["bench", "--n", "256", "--n", "512", "--q", "7681"], "--n takes one value"),
    ],
)
def test_errors_are_one_line_and_nonzero(args: list[str], message: str) -> None:
    p = run(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert message in lines[0]


def test_generate_hints_at_simd_and_takes_isa_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --isa only portable C is written, and a note says how to get SIMD code;
    ``--isa all`` (any case) writes every ISA that has code for the ring."""
    assert main(["generate", "--ring", "MLKEM", "-o", str(tmp_path / "c")]) == 0
    assert "note: wrote portable C only; add --isa avx2" in capsys.readouterr().err
    assert main(["generate", "--ring", "mlkem", "--isa", "ALL", "-o", str(tmp_path / "all")]) == 0
    assert "note:" not in capsys.readouterr().err
    written = {p.name for p in (tmp_path / "all").glob("*.c")}
    assert {"nttgen_mlkem_c.c", "nttgen_mlkem_avx2.c", "nttgen_mlkem_avx512.c"} <= written
    assert {"nttgen_mlkem_neon.c", "nttgen_mlkem_rvv.c"} <= written


def test_verify_prints_one_row_per_kernel_set_or_each_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The default table has a row per ring and ISA naming its checks; --each-check a row per
    check."""
    assert main(["verify", "--ring", "mlkem", "--isa", "c", "--trials", "2"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("mlkem"))
    assert "polymul, ntt" in row and row.endswith("pass")
    assert "all checks passed (7 checks of 1 kernel set)" in out
    assert main(["verify", "--ring", "mlkem", "--isa", "c", "--trials", "2", "--each-check"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("mlkem")]
    assert len(rows) == 7 and "polymul = exact product" in rows[0]


def test_nttgen_alone_shows_what_it_is_for(capsys: pytest.CaptureFixture[str]) -> None:
    """The first thing a newcomer types prints the help (what nttgen does, the commands, where
    to start), not a usage error."""
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "polynomial multipliers" in out and "Start with 'nttgen list'" in out
    for command in ("list", "generate", "verify", "bench", "plans"):
        assert command in out


@pytest.mark.parametrize(
    "args",
    [
        ["plans", "--ring", "sntrup761", "--json", "/proc/nttgen-x/plans.json"],
        ["plans", "--ring", "sntrup761", "--json", "/proc/nttgen-plans.json"],
        ["bench", "--ring", "mlkem", "--isa", "c", "--json", "/proc/nttgen-b.json"],
        ["bench", "--ring", "mlkem", "--isa", "c", "--png", "/proc/nttgen-b.png"],
        ["generate", "--ring", "mlkem", "-o", "/proc/nttgen-out"],
    ],
)
def test_unwritable_outputs_are_one_line_usage_errors(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A file the command cannot write is refused in one line naming the option and the path,
    with exit status 2 (never 'internal error'), before any timing or table."""
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("nttgen: error: ")
    assert args[-1] in captured.err and "internal error" not in captured.err
    assert "Median" not in captured.out and "pipeline" not in captured.out
