"""``nttgen bench`` for ISAs that run under QEMU: dynamic instruction counts per call.

QEMU gives no cycle counts, so the cost of a kernel on another architecture is the number of
guest instructions one call executes. ``count.c`` calls one kernel between two marker functions;
QEMU logs every block it translates with its instructions and every block it executes
(``-d in_asm,exec,nochain``), and the instructions of the blocks executed between the markers
are the count (the markers alone, op ``none``, are subtracted). Counting whole blocks gives the
count of running one instruction per block (``-singlestep``, which ``count_call`` can still
do) 10 to 20 times faster. The generated kernels are constant-time, so the
count does not depend on the input. Next to it: the same count for the portable C compiled -O3
for the same machine, and the static op count of the cost interpreter (vector ops, loads and
stores of the program; what an ideal one-instruction-per-op translation would execute).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ..build import cache_dir
from ..build_cache import cached_build
from ..cross import Target, build_static
from ..emit.isa import isa_class
from ..errors import BuildError
from ..families import family_of
from ..interp.cost import total_ops
from ..ring_family import RingSpec
from . import K_OPS, Entry, _kernels_header, op_counts, op_label, writer_entry

COUNT_CFLAGS = ("-std=c99", "-O3", "-Wall", "-Wextra", "-Werror")
_MARK = re.compile(r" (count_begin|count_end)$")
# "Trace 0: 0x7f2467c00100 [0000000000000000/000000000001083c/00207600/00000200] _start": the
# host address of the executed block's code (which names the block), its guest address, symbol
_TRACE = re.compile(
    r"^Trace \d+: (0x[0-9a-f]+) \[[0-9a-f]+/([0-9a-f]+)/[0-9a-f]+/[0-9a-f]+\] ?(.*)$"
)
_GUEST_INSTRUCTION = re.compile(r"^0x([0-9a-f]+):")


@dataclass
class CountResult:
    """Dynamic instructions of one call (one ISA, one op) on an emulated machine."""

    ring: str
    isa: str
    op: str
    k: int
    target: str
    compiler: str
    instructions: int
    static_ops: int

    @property
    def label(self) -> str:
        """The op with its k, e.g. ``basemul_acc k=3``."""
        return op_label(self.op, self.k)


SCALAR_FLAGS = ("-fno-tree-vectorize",)  # gcc: keep the portable C scalar


def _entries(
    ring: RingSpec, isas: list[str], target: Target, extra: tuple[str, ...] = ()
) -> list[tuple[Entry, list[str]]]:
    fam = family_of(ring)
    out = []
    for isa in isas:
        cls = isa_class(isa)
        cmd = [*target.pick_compiler(cls.compilers), *COUNT_CFLAGS, *cls.cflags, *extra]
        w = fam.writer(ring, isa)
        out.append((writer_entry(isa, w, fam.generate(ring, isa), tuple(cls.cflags), None), cmd))
    return out


def _static_ops(ring: RingSpec, isa: str, op: str, k: int) -> int:
    """The cost interpreter's op count of one call (the program's vector ops)."""
    return total_ops(op_counts(family_of(ring).writer(ring, isa), op, k))


def build_counter(
    ring: RingSpec, isas: list[str], target: Target, extra: tuple[str, ...] = ()
) -> tuple[Path, dict[str, str]]:
    """The static counting program of one ring with the kernels of ``isas`` for ``target``
    (cached by content), each compiled with its compiler, -O3 and ``extra``; returns its path
    and the compiler used per ISA."""
    return counter_of(ring, _entries(ring, isas, target, extra), target)


def counter_of(
    ring: RingSpec, entries: list[tuple[Entry, list[str]]], target: Target
) -> tuple[Path, dict[str, str]]:
    """The static counting program of one ring with the kernel sets of ``entries`` (each
    with the compile command of its files: compiler and flags) for ``target``, cached by
    content; returns its path and the compiler of each entry, by label. Kernel set i of
    ``entries`` is index i of :func:`count_call`."""
    types, kernels = _kernels_header(ring, [e for e, _ in entries])
    sources = {"bench_types.h": types, "bench_kernels.h": kernels}
    for name in ("count.c", "bench_random.h"):
        sources[name] = resources.files("nttgen.bench").joinpath(name).read_text()
    for e, _ in entries:
        sources.update(dict(e.files.items()))
    objects = [(f"{e.files.stem}.c", cmd) for e, cmd in entries]
    exe = build_static(target, sources, objects, "count.c", f"count-{ring.c_name}", cache_dir())
    names = {e.label: " ".join(cmd[:2] if "clang" in cmd[0] else cmd[:1]) for e, cmd in entries}
    return exe, names


@cache
def _file_digest(path: str) -> str:
    """The content hash of a file (the counting program, the emulator binary)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def count_call(
    exe: Path,
    target: Target,
    index: int,
    op: str,
    k: int = 1,
    seed: int = 0,
    singlestep: bool = False,
) -> int:
    """Guest instructions between the markers of one run of the counting program (kernel
    ``index`` of its table, one call of ``op``, inputs drawn with ``seed``), from the sizes of
    the blocks executed, or with ``singlestep`` from one logged block per instruction (the
    same count, slower: the check of the first).

    The count is a pure function of the program, the emulator and the arguments (the
    emulation is deterministic), so each one is run once and its count kept in the build cache
    under a hash of all three: a second caller (another test, another worker, the benchmark)
    reads it instead of emulating the same run again."""
    log_flags = (
        ["-singlestep", "-d", "exec,nochain"] if singlestep else ["-d", "in_asm,exec,nochain"]
    )
    cmd = [*target.emulator(), *log_flags]
    count = _count_between_markers if singlestep else _count_blocks_between_markers
    args = [str(index), op, str(k), *([str(seed)] if seed else [])]
    emulator = shutil.which(cmd[0])
    key = [*cmd, _file_digest(emulator) if emulator else "", _file_digest(str(exe)), *args]

    def run(directory: Path) -> None:
        log = directory / "exec.log"
        proc = subprocess.run(
            [*cmd, "-D", str(log), str(exe), *args], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise BuildError(f"{exe.name} {op} under {target.label} failed: {proc.stderr.strip()}")
        (directory / "count").write_text(str(count(log, exe, op)))
        log.unlink()

    out = cached_build(cache_dir() / "counts", f"{exe.stem}-{op}", key, "count", run)
    return int(out.read_text())


def _count_between_markers(log: Path, exe: Path, op: str) -> int:
    """The number of executed blocks (one instruction each) logged between count_begin and
    count_end."""
    counting, n = False, 0
    with log.open() as f:
        for line in f:
            m = _MARK.search(line.rstrip("\n"))
            if m and m.group(1) == "count_begin":
                counting, n = True, 0
            elif m and counting:
                return n
            elif counting:
                n += 1
    raise BuildError(f"{exe.name} {op}: the QEMU log has no count_begin/count_end markers")


def _count_blocks_between_markers(log: Path, exe: Path, op: str) -> int:
    """The instructions of the blocks executed between count_begin and count_end. A block is
    named by the host address of its translated code; its size is that of the translation
    logged last before its first execution (QEMU may translate a block twice, smaller the
    second time, and reuse an address after flushing its code cache)."""
    sizes: dict[str, int] = {}
    translated: list[int] | None = None  # guest addresses of the block being logged
    pending: list[int] | None = None  # the last block logged, not yet executed
    counting, n = False, 0
    with log.open() as f:
        for line in f:
            if line.startswith("IN:"):
                translated = []
                continue
            if translated is not None:
                m = _GUEST_INSTRUCTION.match(line)
                if m:
                    translated.append(int(m.group(1), 16))
                    continue
                pending, translated = translated, None
            t = _TRACE.match(line.rstrip("\n"))
            if t is None:
                continue
            block, guest, symbol = t.group(1), int(t.group(2), 16), t.group(3)
            if pending is not None:
                if not pending or pending[0] != guest:
                    raise BuildError(f"{exe.name} {op}: a block ran that is not the one logged")
                sizes[block], pending = len(pending), None
            if symbol == "count_begin":
                counting, n = True, 0
            elif counting and symbol == "count_end":
                return n
            elif counting:
                if block not in sizes:
                    raise BuildError(f"{exe.name} {op}: the QEMU log lacks a block's instructions")
                n += sizes[block]
    raise BuildError(f"{exe.name} {op}: the QEMU log has no count_begin/count_end markers")


SCALAR_LABEL = "c scalar"


def count_ring(
    ring: RingSpec,
    isas: list[str],
    target: Target,
    ops: Iterable[str] | None = None,
    ks: Iterable[int] = (3, 5),
    scalar: bool = True,
) -> list[CountResult]:
    """Instruction counts of every (ISA, op) of one ring on ``target``, ``ops`` among its
    family's (default all of them). ``isas`` should include
    ``c``: the portable C compiled -O3 for the same machine (gcc vectorises its loops there);
    ``scalar`` adds it once more with vectorisation off (ISA label ``c scalar``), the baseline
    of a machine without a vector unit."""
    fam = family_of(ring)
    ops = [o for o in (fam.ops if ops is None else ops) if o in fam.ops]
    builds = [(isas, (), False)]
    if scalar:
        builds.append((["c"], SCALAR_FLAGS, True))
    out: list[CountResult] = []
    for names, extra, is_scalar in builds:
        exe, compilers = build_counter(ring, names, target, extra)
        for index, isa in enumerate(names):
            base = count_call(exe, target, index, "none")
            label = SCALAR_LABEL if is_scalar else isa
            for op in ops:
                for k in ks if op in K_OPS else (1,):
                    n = count_call(exe, target, index, op, k) - base
                    static = _static_ops(ring, isa, op, k)
                    out.append(
                        CountResult(
                            ring.name, label, op, k, target.label, compilers[isa], n, static
                        )
                    )
    return out
