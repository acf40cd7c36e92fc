"""``nttgen verify PATH`` checks the generated files a user has on disk, as they are: the
checked-in presets pass, and one changed twiddle, constant, reduction or contract fails with
exit status 1."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_isa
from nttgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"


def _copy(stem: str, ring: str, into: Path) -> Path:
    """One file set of a preset copied into ``into``; returns its .c path."""
    for suffix in (".h", ".c", ".json"):
        shutil.copy(GENERATED / ring / f"{stem}{suffix}", into / f"{stem}{suffix}")
    return into / f"{stem}.c"


def _verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["verify", str(path), "--trials", "3"])
    out = capsys.readouterr()
    return status, out.out + out.err


def test_the_checked_in_files_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """The files of generated/ as they are, by directory and by one file of a set."""
    status, out = _verify(GENERATED / "mlkem", capsys)
    assert status == 0 and "nttgen_mlkem_c " in out and "all checks passed" in out, out
    assert "a front end over" in out  # said, not silently skipped
    status, out = _verify(GENERATED / "sntrup761" / "nttgen_sntrup761_c.h", capsys)
    assert status == 0 and "polymul_small" in out, out


MUTATIONS = [
    # (file set, its ring, text replaced, replacement, what it breaks)
    ("nttgen_mlkem_avx2", "mlkem", "573, 573", "574, 573", "a twiddle"),
    # -758 over a whole vector -> -757: a twiddle broadcast from a spread copy
    ("nttgen_mlkem_avx2", "mlkem", "-758, " * 15 + "-758,", "-757, " * 15 + "-757,",
     "a broadcast twiddle"),
    ("nttgen_mlkem_c", "mlkem", "(int32_t)b_0 * (-3327))", "(int32_t)b_0 * (-3325))",
     "a Montgomery constant"),
    ("nttgen_mlkem_c", "mlkem", "red_0 = nttgen_mlkem_c_barrett(x_14);", "red_0 = x_14;",
     "a reduction"),
    ("nttgen_sntrup761_c", "sntrup761", "return (int16_t)(a - t * 4591);",
     "return (int16_t)(a - t * 4583);", "the modulus of a reduction"),
]  # fmt: skip


@pytest.mark.parametrize(("stem", "ring", "old", "new", "what"), MUTATIONS)
def test_a_changed_file_fails(
    stem: str,
    ring: str,
    old: str,
    new: str,
    what: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Changing one place of a checked-in file (its first occurrence) is caught: a FAIL row
    and exit status 1."""
    if stem.endswith("avx2"):
        require_isa("avx2")
    source = _copy(stem, ring, tmp_path)
    text = source.read_text()
    assert old in text, f"{what}: {old!r} is not in {source.name}"
    source.write_text(text.replace(old, new, 1))
    status, out = _verify(tmp_path, capsys)
    assert status == 1 and "FAIL" in out, f"changing {what} was not caught:\n{out}"


def test_a_changed_contract_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A manifest promising a narrower output range than the code keeps fails on both counts:
    the manifest differs from nttgen's, and outputs leave the promised range."""
    _copy("nttgen_mlkem_c", "mlkem", tmp_path)
    path = tmp_path / "nttgen_mlkem_c.json"
    manifest = json.loads(path.read_text())
    (param,) = manifest["functions"]["ntt"]["params"]
    lo, hi = param["out_range"]
    param["out_range"] = [lo // 4, hi // 4]
    path.write_text(json.dumps(manifest, indent=2))
    status, out = _verify(tmp_path, capsys)
    assert status == 1 and "manifest" in out and "leaves its contract" in out, out


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d / "missing", "no such file or directory"),
        (lambda d: d, "no generated files here"),
        (lambda d: _write(d / "nttgen_x_c.json", "{not json"), "not valid JSON"),
        (lambda d: _write(d / "nttgen_x_c.json", "[1, 2]"), "not an nttgen manifest"),
        (lambda d: _write(d / "notes.txt", "hello"), "not a generated file set"),
    ],
)
def test_paths_that_hold_no_file_set_are_one_line_errors(
    setup: object, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What is not a generated file set is refused in one line naming the path (exit 2)."""
    path = setup(tmp_path)  # type: ignore[operator]
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(path) in err, err


def test_a_missing_source_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A manifest whose .c is gone is refused naming the missing file."""
    source = _copy("nttgen_mlkem_c", "mlkem", tmp_path)
    source.unlink()
    assert main(["verify", str(tmp_path)]) == 2
    assert "nttgen_mlkem_c.c: missing" in capsys.readouterr().err


def test_paths_and_rings_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(GENERATED / "mlkem"), "--ring", "mlkem"]) == 2
    assert "not both" in capsys.readouterr().err


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


UNSOUND_ADD = """
import sys
from nttgen.build_cache import stop_storing
stop_storing()  # this process's results follow from a patched analysis, not from the source
import nttgen.dsl.transfer as transfer
sound = transfer.add
transfer.add = lambda a, b: tuple(x // 2 for x in sound(a, b))  # claims half a sum's growth
from nttgen.cli import main
sys.exit(main(["verify", "--ring", "n256_q7681", "--isa", "c", "--jobs", "1"]))
"""


def test_default_verify_catches_an_unsound_transfer_function() -> None:
    """With the interval analysis made unsound (a sum claimed to grow half as much), nttgen
    still generates code, with too few reductions; ``nttgen verify`` with its defaults finds
    it (the extreme inputs overflow the lanes) and exits 1, not 2."""
    p = subprocess.run(
        [sys.executable, "-c", UNSOUND_ADD], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert "FAIL" in p.stdout and "check(s) failed" in p.stdout


def test_verify_fails_where_the_search_passes_the_analysis_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """verify's growth search compares what it reaches with the analysis's bound: with the
    bound made far too small, the compiled-C check fails and names it."""
    import nttgen
    import nttgen.adversary
    from nttgen.verify import verify_kernel

    monkeypatch.setattr(nttgen.adversary, "analysis_peak", lambda fn: 1)
    results = verify_kernel(nttgen.load("mlkem", "c"), trials=2)
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1 and "beyond the analysis's bound 1" in (failed[0].failure or "")
