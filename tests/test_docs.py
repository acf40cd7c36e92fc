"""Every fenced code block of README.md and docs/*.md runs here, so that no example goes stale.

What a block's fence info string makes of it:

* ``python``: the blocks of one file run in order in one namespace (block i after blocks
  1..i-1, like a reader's session), in a temporary working directory. A block that raises
  :class:`~nttgen.IsaUnavailableError` (a CPU feature or tool this machine lacks) skips the
  rest of its file, and fails under CI.
* ``sh``: one command per line; blank lines and comments after ``#`` are ignored.

  - ``nttgen ...`` runs in-process, ``nttgen.cli.main(shlex.split(line)[1:])``, in a temporary
    working directory and must return 0. ``nttgen bench`` lines get ``--samples 5 --batch 2``
    appended unless they set them: the sample count changes only how long the benchmark runs,
    not what it runs. A line naming an ISA that runs under QEMU skips (fails under CI) when
    QEMU or the cross compiler is missing.
  - ``make TARGET ...`` is checked, not run: TARGET must be a target of the Makefile.
  - ``pip install``, ``source``, ``export``, ``git clone`` and ``cd`` lines are for the reader
    and not run.
  - any other line fails, naming the line: it is neither run nor allowed.
* ``c``: a whole program. It is compiled with ``cc -std=c99 -Wall -Wextra -Werror -O2``, with
  ``-I generated/<ring>`` for each generated header it includes, linked with the generated C
  those headers stand for, and run; it must exit 0. A header ``nttgen_<ring>_<isa>.h`` stands
  for its ``.c`` (compiled with the flags its ``.json`` lists), an alias header for the header
  it includes, a front end ``nttgen_<ring>.h`` for its ``.c`` and the ISA files it compiles in
  on this machine (on x86-64: c, avx2, avx512; on AArch64: c, neon).
* ``c fragment``: statements, not a program. Its ``#include`` lines go first and the rest
  becomes the body of a function, compiled with the same flags and ``-fsyntax-only``.
* ``text``, ``console`` and a bare fence show output or a diagram and are never run; a fence
  with any other info string fails (so that no example escapes these rules).

The README must keep at least one python, one sh and one c block. Tests that take more than
about 20 s are marked ``slow``: benchmarks, commands over every preset, ISA or pipeline
(``--presets``, ``all``), code run under QEMU, and C programs built from large generated files.
"""

from __future__ import annotations

import json
import platform
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import IN_CI
from nttgen import IsaUnavailableError
from nttgen.cli import main
from nttgen.cross import isa_target
from nttgen.emit.isa import ISAS, isa_class

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "generated"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "sh", "c", "c fragment"}
SHOWN = {"", "text", "console"}
NOT_RUN = (("pip", "install"), ("source",), ("export",), ("git", "clone"), ("cd",))
"""Commands shown for the reader to run by hand (their first words)."""
CFLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-O2")
HOST_ISAS = {
    "x86_64": ("c", "avx2", "avx512"),
    "amd64": ("c", "avx2", "avx512"),
    "aarch64": ("c", "neon"),
    "arm64": ("c", "neon"),
}
SLOW_OPTIONS = ("--presets", "all")
SLOW_C_BYTES = 400_000
"""A C block whose generated sources exceed this compiles for more than about 20 s."""


@dataclass(frozen=True)
class Block:
    """A fenced code block: its file, the line of its opening fence, its info string, its
    text."""

    path: Path
    line: int
    info: str
    text: str

    @property
    def where(self) -> str:
        """``README.md:42``: where a reader finds the block."""
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    out: list[Block] = []
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fence = re.match(r"^```(.*)$", line)
        if fence is None:
            if opened is not None:
                body.append(line)
        elif opened is None:
            opened, body = (number, fence.group(1).strip()), []
        else:
            out.append(Block(path, opened[0], opened[1], "\n".join(body) + "\n"))
            opened = None
    assert opened is None, f"{path.relative_to(ROOT)}:{opened[0]}: a code fence is never closed"
    return out


ALL_BLOCKS = [b for path in DOCS for b in blocks(path)]


def missing(reason: str) -> None:
    """Skip for a tool or CPU feature this machine lacks; fail under CI, which has them all."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


# ------------------------------------------------------------------------- every file
def test_readme_keeps_its_examples() -> None:
    """The README shows a python, an sh and a c block, so its examples cannot vanish
    silently."""
    kinds = {b.info for b in ALL_BLOCKS if b.path.name == "README.md"}
    assert {"python", "sh", "c"} <= kinds, f"the README's code blocks are {sorted(kinds)}"


def test_every_fence_is_run_or_shown() -> None:
    """Each block is of a kind this file runs, or output shown as text."""
    unknown = [f"{b.where}: ```{b.info}" for b in ALL_BLOCKS if b.info not in RUN | SHOWN]
    assert not unknown, "fences neither run nor output: " + "; ".join(unknown)


# ------------------------------------------------------------------------- python
PYTHON_FILES = [p for p in DOCS if any(b.info == "python" for b in blocks(p))]
EMULATED_LOAD = re.compile(r"load\([^)]*(\"(neon|rvv\w*)\"|arch=)")
"""A load of code that runs under QEMU: such a file's blocks take more than about 20 s."""


def _python_slow(path: Path) -> bool:
    return any(EMULATED_LOAD.search(b.text) for b in blocks(path) if b.info == "python")


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=[pytest.mark.slow] if _python_slow(p) else []) for p in PYTHON_FILES],
    ids=[str(p.relative_to(ROOT)) for p in PYTHON_FILES],
)
def test_python_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's python blocks run as they stand, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in (b for b in blocks(path) if b.info == "python"):
        try:
            exec(compile(block.text, f"{block.where} (python)", "exec"), namespace)
        except IsaUnavailableError as e:
            missing(f"{block.where}: {e}")


# ------------------------------------------------------------------------- sh
@dataclass(frozen=True)
class Command:
    """One command line of an sh block."""

    block: Block
    offset: int
    text: str

    @property
    def where(self) -> str:
        """``docs/c-guide.md:193``: the line of the command itself."""
        return f"{self.block.path.relative_to(ROOT)}:{self.block.line + self.offset}"

    @property
    def words(self) -> list[str]:
        """The command's words, comments removed."""
        return shlex.split(self.text, comments=True)


def commands() -> list[Command]:
    """Every command line of every sh block (a line ending in a backslash continues)."""
    out = []
    for block in (b for b in ALL_BLOCKS if b.info == "sh"):
        pending, start = "", 0
        for offset, line in enumerate(block.text.splitlines(), 1):
            if not pending:
                start = offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text, pending = pending + line, ""
            if shlex.split(text, comments=True):
                out.append(Command(block, start, text))
    return out


COMMANDS = commands()
NTTGEN = [c for c in COMMANDS if c.words[0] == "nttgen"]


def _slow(command: Command) -> bool:
    """Whether a command takes more than about 20 s: every preset, every ISA or pipeline, a
    benchmark, or code run under QEMU."""
    words = command.words
    emulated = [w for w in words if w in ISAS and not isa_target(isa_class(w)).native]
    bench = len(words) > 1 and words[1] == "bench"
    return bench or bool(emulated) or any(w in SLOW_OPTIONS for w in words)


def test_sh_lines_are_run_or_allowed() -> None:
    """Each command of an sh block is run (nttgen), checked (make) or one a reader runs by
    hand (installing, activating, changing directory)."""
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", (ROOT / "Makefile").read_text(), re.M))
    bad = []
    for c in COMMANDS:
        words = c.words
        if words[0] == "nttgen" or any(tuple(words[: len(w)]) == w for w in NOT_RUN):
            continue
        if words[0] == "make":
            goals = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
            bad += [f"{c.where}: make {g}: no such target" for g in goals if g not in targets]
            continue
        bad.append(f"{c.where}: `{c.text.strip()}` is neither run by the tests nor allowed")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=[pytest.mark.slow] if _slow(c) else []) for c in NTTGEN],
    ids=[c.where for c in NTTGEN],
)
def test_nttgen_command_runs(
    command: Command,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An nttgen command of the docs exits 0. A benchmark gets ``--samples 5 --batch 2``
    unless it sets them: the sample count changes only how long it runs. A command that reads
    ``generated/`` (``nttgen verify generated/mlkem``) finds a copy of the repository's in its
    working directory, as a reader in a clone would."""
    words = command.words[1:]
    for isa in (w for w in words if w in ISAS):
        tools = isa_target(isa_class(isa)).missing_tools()
        if tools:
            missing(f"{command.where}: {isa} needs {', '.join(tools)}")
    if words[0] == "bench":
        words += [] if "--samples" in words else ["--samples", "5"]
        words += [] if "--batch" in words else ["--batch", "2"]
    if words[0] != "generate" and any(w.startswith("generated") for w in words):
        shutil.copytree(GENERATED, tmp_path / "generated")
    monkeypatch.chdir(tmp_path)
    try:
        status = main(words)
    except SystemExit as e:  # argparse: bad usage
        status = e.code if isinstance(e.code, int) else 2
    out = capsys.readouterr()
    assert status == 0, f"{command.where}: `nttgen {shlex.join(words)}` exited {status}\n" + (
        out.out[-2000:] + out.err[-2000:]
    )


# ------------------------------------------------------------------------- c
@dataclass(frozen=True)
class Unit:
    """A generated C file to compile with the flags its ISA needs."""

    source: Path
    flags: tuple[str, ...]


def _header(name: str) -> Path | None:
    """The generated header a quoted ``#include`` names, if it is one."""
    found = sorted(GENERATED.glob(f"*/{name}"))
    return found[0] if found else None


def _units(header: Path) -> list[Unit]:
    """The generated C files a header stands for (see the module docstring)."""
    source, manifest = header.with_suffix(".c"), header.with_suffix(".json")
    if not source.exists():  # an alias header: the files of the header it includes
        included = re.findall(r'^#include "([^"]+)"', header.read_text(), re.M)
        return [u for name in included for u in _units(header.parent / name)]
    meta = json.loads(manifest.read_text())
    if "isas" not in meta:
        return [Unit(source, tuple(meta["isa"]["cflags"]))]
    host = HOST_ISAS.get(platform.machine().lower(), ("c",))
    front = [Unit(source, ())]
    return front + [
        Unit(header.parent / f"{isa['stem']}.c", tuple(isa["cflags"]))
        for isa in meta["isas"]
        if isa["name"] in host
    ]


def _headers(text: str, where: str) -> list[Path]:
    """The generated headers a C block includes (quoted includes must all be generated)."""
    out = []
    for name in re.findall(r'^\s*#include "([^"]+)"', text, re.M):
        header = _header(name)
        assert header is not None, f"{where}: {name} is not a header under generated/"
        out.append(header)
    return out


C_BLOCKS = [b for b in ALL_BLOCKS if b.info in ("c", "c fragment")]


def _c_size(block: Block) -> int:
    if block.info != "c":
        return 0
    units = [u for h in _headers(block.text, block.where) for u in _units(h)]
    return sum(u.source.stat().st_size for u in units)


def _compile(cmd: list[str], where: str, cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{where}: {shlex.join(cmd)} failed:\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(b, marks=[pytest.mark.slow] if _c_size(b) > SLOW_C_BYTES else [])
        for b in C_BLOCKS
    ],
    ids=[b.where for b in C_BLOCKS],
)
def test_c_block_compiles_and_runs(block: Block, tmp_path: Path) -> None:
    """A C program of the docs builds warning-free against the checked-in generated C and
    exits 0; a fragment passes the compiler's syntax check."""
    cc = shutil.which("cc")
    if cc is None:
        missing("no C compiler `cc`")
    assert cc is not None
    headers = _headers(block.text, block.where)
    includes = [f"-I{d}" for d in dict.fromkeys(str(h.parent) for h in headers)]
    main_c = tmp_path / "main.c"
    if block.info == "c fragment":
        lines = block.text.splitlines()
        head = [x for x in lines if x.lstrip().startswith("#include")]
        body = [x for x in lines if not x.lstrip().startswith("#include")]
        wrapped = [*head, "", "void nttgen_doc_fragment(void);", "void nttgen_doc_fragment(void) {"]
        main_c.write_text("\n".join([*wrapped, *body, "}", ""]))
        _compile([cc, *CFLAGS, "-fsyntax-only", *includes, str(main_c)], block.where, tmp_path)
        return
    main_c.write_text(block.text)
    units = list(dict.fromkeys(u for h in headers for u in _units(h)))
    objects = []
    for i, unit in enumerate(units):
        obj = tmp_path / f"unit{i}.o"
        _compile(
            [cc, *CFLAGS, *unit.flags, "-c", str(unit.source), "-o", str(obj)],
            block.where,
            tmp_path,
        )
        objects.append(str(obj))
    exe = tmp_path / "example"
    _compile([cc, *CFLAGS, *includes, str(main_c), *objects, "-o", str(exe)], block.where, tmp_path)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (
        f"{block.where}: the program exited {proc.returncode}\n{proc.stdout}{proc.stderr}"
    )
