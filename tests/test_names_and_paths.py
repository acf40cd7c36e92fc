"""Ring names in any case, name aliases and "did you mean"; file-system errors of the outputs
as one-line errors naming the option, the path and the reason."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import nttgen
from nttgen import fsio
from nttgen.aliases import NAME_ALIASES, SCHEME_ALIASES, aliases_of, canonical_name, scheme_alias
from nttgen.cli import main
from nttgen.errors import InputError, NttgenError, OutputError, RingError, UnknownNameError
from nttgen.outputs import write_files

PRESET_LIST = (
    "presets are mlkem, mldsa, kyber-r1, newhope512, newhope1024, sntrup761, falcon512, "
    "falcon1024, ntrulpr761;"
)


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The single line the CLI wrote to stderr (checked to be the only one)."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("nttgen: error: "), lines[0]
    return lines[0]


# --------------------------------------------------------------------------- ring names
@pytest.mark.parametrize(
    "name,canonical",
    [
        ("MLKEM", "mlkem"),
        ("MlDsa", "mldsa"),
        ("Kyber-R1", "kyber-r1"),
        ("SNTRUP761", "sntrup761"),
        ("Falcon512", "falcon512"),
        ("NTRULPR761", "ntrulpr761"),
        ("N256_Q7681", "n256_q7681"),
        ("P653_Q4621", "p653_q4621"),
        (" mlkem ", "mlkem"),
    ],
)
def test_names_are_read_in_any_case(name: str, canonical: str) -> None:
    ring = nttgen.get_ring(name)
    assert ring == nttgen.get_ring(canonical)
    assert ring.name == nttgen.get_ring(canonical).name  # the canonical lower-case name
    assert ring.name == ring.name.lower()


def test_custom_names_in_any_case_are_named_in_lower_case() -> None:
    assert nttgen.get_ring("N256_Q7681").name == "n256_q7681"
    ntru = nttgen.get_ring("P653_Q4621")
    assert ntru.name == "p653_q4621" and (ntru.q, ntru.degree) == (4621, 653)


@pytest.mark.parametrize(
    "name,preset",
    [
        ("kyber", "mlkem"),
        ("Kyber", "mlkem"),
        ("ml-kem", "mlkem"),
        ("ML_KEM", "mlkem"),
        ("dilithium", "mldsa"),
        ("DILITHIUM", "mldsa"),
        ("ml-dsa", "mldsa"),
        ("ml_dsa", "mldsa"),
    ],
)
def test_name_aliases_are_the_presets(name: str, preset: str) -> None:
    assert nttgen.get_ring(name) is nttgen.all_presets()[preset]
    assert canonical_name(name) == preset


def test_name_aliases_are_not_scheme_aliases() -> None:
    presets = nttgen.all_presets()
    assert set(NAME_ALIASES).isdisjoint(SCHEME_ALIASES)
    assert set(NAME_ALIASES).isdisjoint(presets)
    assert all(target in presets for target in NAME_ALIASES.values())
    # no alias headers for them: only the scheme aliases get some
    assert aliases_of("mlkem") == [] and aliases_of("mldsa") == []
    assert scheme_alias("kyber") is None and scheme_alias("mlkem") is None
    assert scheme_alias(None) is None
    falcon = scheme_alias("Falcon512")
    assert falcon is not None and falcon.target == "newhope512"


def test_load_reads_name_aliases() -> None:
    kernel = nttgen.load("kyber", "c")
    assert kernel is nttgen.load("MLKEM", "c")
    assert kernel.ring.name == "mlkem"


def test_custom_names_keep_their_rule_errors() -> None:
    with pytest.raises(RingError, match=r"q=3327 is not an odd prime.*3329"):
        nttgen.get_ring("N256_Q3327")
    with pytest.raises(RingError, match="q=4620 is not an odd prime"):
        nttgen.get_ring("p653_q4620")


@pytest.mark.parametrize(
    "name,suggestion",
    [
        ("mlkm", "mlkem"),
        ("MLKM", "mlkem"),
        ("Dilithum", "dilithium"),
        ("sntrup716", "sntrup761"),
        ("newhope", "newhope512 or newhope1024"),
    ],
)
def test_unknown_names_suggest_the_closest(name: str, suggestion: str) -> None:
    with pytest.raises(UnknownNameError) as info:
        nttgen.get_ring(name)
    message = str(info.value)
    assert message.startswith(f"unknown ring {name!r} (did you mean {suggestion}?): ")
    assert PRESET_LIST in message and "\n" not in message


def test_suggestions_name_each_ring_once() -> None:
    with pytest.raises(UnknownNameError) as info:
        nttgen.get_ring("mlkm")
    assert "(did you mean mlkem?)" in str(info.value)  # not also ml-kem, ml_kem


def test_far_names_get_no_suggestion_but_the_presets() -> None:
    with pytest.raises(UnknownNameError) as info:
        nttgen.get_ring("zzzzqqq")
    message = str(info.value)
    assert "did you mean" not in message
    assert message.startswith(f"unknown ring 'zzzzqqq': {PRESET_LIST}")
    for text in ("kyber", "dilithium", "n<N>_q<Q>", "p<P>_q<Q>", "p653_q4621"):
        assert text in message


def test_cli_unknown_ring_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["generate", "--ring", "mlkm", "-o", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys)
    assert "unknown ring 'mlkm' (did you mean mlkem?)" in line


def test_cli_generate_reads_names_in_any_case(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["generate", "--ring", "ML-KEM", "--isa", "c", "-o", str(out)]) == 0
    # the canonical name, and no alias header for a name alias
    assert sorted(p.name for p in out.iterdir()) == [
        "nttgen_mlkem_c.c",
        "nttgen_mlkem_c.h",
        "nttgen_mlkem_c.json",
    ]


# --------------------------------------------------------------------------- output paths
def test_cli_output_under_proc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--ring", "mlkem", "--isa", "c", "-o", "/proc/nttgen-x"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("nttgen: error: -o /proc/nttgen-x: ")
    assert "/proc" in line.removeprefix("nttgen: error: -o /proc/nttgen-x: ")
    assert not Path("/proc/nttgen-x").exists()


def test_cli_output_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("keep")
    assert main(["generate", "--ring", "mlkem", "--isa", "c", "-o", str(file)]) == 2
    expected = f"nttgen: error: -o {file}: the path is a file, not a directory"
    assert one_error_line(capsys) == expected
    assert file.read_text() == "keep"


def test_cli_output_under_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("keep")
    out = file / "sub"
    assert main(["generate", "--ring", "mlkem", "--isa", "c", "-o", str(out)]) == 2
    expected = f"nttgen: error: -o {out}: {file} is a file, not a directory"
    assert one_error_line(capsys) == expected


def test_write_files_names_the_file_that_fails(tmp_path: Path) -> None:
    (tmp_path / "a.c").mkdir()
    with pytest.raises(OutputError) as info:
        write_files({"a.c": "x"}, tmp_path)
    assert str(info.value) == (
        f"-o {tmp_path}: cannot write {tmp_path / 'a.c'}: the path is a directory, not a file"
    )
    assert write_files({"b.c": "int x;\n"}, tmp_path / "new" / "dir") == [
        tmp_path / "new" / "dir" / "b.c"
    ]
    assert (tmp_path / "new" / "dir" / "b.c").read_text() == "int x;\n"


def test_write_text_into_a_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "deeper" / "x.json"
    with pytest.raises(OutputError) as info:
        fsio.write_text(path, "{}", "--json")
    assert isinstance(info.value, NttgenError)
    assert str(info.value) == (
        f"--json {path}: the parent directory {tmp_path / 'missing'} does not exist"
    )


def test_write_text_to_a_directory(tmp_path: Path) -> None:
    with pytest.raises(OutputError) as info:
        fsio.write_text(tmp_path, "{}", "--json")
    assert str(info.value) == f"--json {tmp_path}: the path is a directory, not a file"


def test_write_bytes_under_a_file(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(OutputError) as info:
        fsio.write_bytes(file / "x.png", b"\x89PNG", "--png")
    assert str(info.value) == f"--png {file / 'x.png'}: {file} is a file, not a directory"


def test_write_and_ensure_directory_succeed(tmp_path: Path) -> None:
    fsio.ensure_directory(tmp_path / "a" / "b", "-o")
    fsio.ensure_directory(tmp_path / "a" / "b", "-o")  # already there: nothing to do
    fsio.write_text(tmp_path / "a" / "b" / "t.txt", "é\n", "-o")
    fsio.write_bytes(tmp_path / "a" / "b" / "b.bin", b"\0\1", "-o")
    assert (tmp_path / "a" / "b" / "t.txt").read_bytes() == "é\n".encode()
    assert (tmp_path / "a" / "b" / "b.bin").read_bytes() == b"\0\1"


def test_check_writable_file(tmp_path: Path) -> None:
    fsio.check_writable_file(tmp_path / "new.json", "--json")
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing behind
    existing = tmp_path / "old.json"
    existing.write_text("keep")
    fsio.check_writable_file(existing, "--json")
    assert existing.read_text() == "keep"
    cases = {
        tmp_path: "the path is a directory, not a file",
        tmp_path / "no" / "x.json": f"the parent directory {tmp_path / 'no'} does not exist",
        existing / "x.json": f"{existing} is a file, not a directory",
    }
    for path, why in cases.items():
        with pytest.raises(OutputError) as info:
            fsio.check_writable_file(path, "--json")
        assert str(info.value) == f"--json {path}: {why}"
    with pytest.raises(OutputError, match=r"^--png /proc/nttgen-x\.png: .*/proc"):
        fsio.check_writable_file(Path("/proc/nttgen-x.png"), "--png")


def test_check_writable_file_permission_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fsio.os, "access", lambda path, mode: False)
    with pytest.raises(OutputError) as info:
        fsio.check_writable_file(tmp_path / "x.json", "--json")
    assert str(info.value).startswith(f"--json {tmp_path / 'x.json'}: permission denied")


@pytest.mark.parametrize(
    "code,why",
    [
        (errno.ENOSPC, "no space left on the device"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.EIO, "input/output error"),
    ],
)
def test_writing_turns_os_errors_into_one_line(code: int, why: str, tmp_path: Path) -> None:
    path = tmp_path / "chart.png"
    with pytest.raises(OutputError) as info, fsio.writing(path, "--png"):
        raise OSError(code, os.strerror(code), str(path))
    assert str(info.value) == f"--png {path}: {why}"


def test_load_reads_isa_names_in_any_case() -> None:
    """``nttgen.load`` reads an ISA name as the command line does (any case), and refuses a
    value that is not a name in one line."""
    k = nttgen.load("Kyber", "C")
    assert k.isa == "c" and k.ring.name == "mlkem"
    with pytest.raises(InputError, match="isa must be an ISA name"):
        nttgen.load("mlkem", 2)  # type: ignore[arg-type]
