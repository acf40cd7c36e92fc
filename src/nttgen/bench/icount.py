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

On RISC-V one instruction may work on a group of 1 to 8 vector registers (LMUL), so the count
alone favours large groups. The same run also gives the **vector work**: the instructions again,
each vector instruction counted once per register it writes or reads as a group (LMUL in effect,
set by the last ``vsetvli`` executed; twice that for the wide side of a widening or narrowing
instruction; N for a whole-register move, load or store of N registers; one for a mask
register). A core that issues one instruction per cycle into a vector unit as wide as VLEN needs
about the larger of the two numbers in cycles.
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
_GUEST_INSTRUCTION = re.compile(r"^0x([0-9a-f]+):(?:\s+[0-9a-f]+\s+(\S+)\s*(\S*))?")
# "vsetvli a0,a1,e16,m2,ta,ma" / "vsetivli zero,8,e32,mf2,ta,ma": the LMUL it sets
_VSETVLI = re.compile(r"e\d+,m(f?)(\d)")
_WHOLE_REGISTERS = re.compile(r"^v(?:l|s|mv)(\d)r")


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
    vector_work: int = 0

    @property
    def label(self) -> str:
        """The op with its k, e.g. ``basemul_acc k=3``."""
        return op_label(self.op, self.k)


def _work_of(mnemonic: str, operands: str) -> tuple[float | None, float, int]:
    """How one guest instruction counts in the vector work: (the LMUL it sets or None, the
    registers it works on per register of the group in effect, the registers it works on
    whatever the group). A scalar instruction is (None, 0, 1)."""
    if not mnemonic.startswith("v"):
        return None, 0, 1
    if mnemonic.startswith("vset"):
        m = _VSETVLI.search(operands)
        # a vsetvl with vtype in a register (never emitted here) is taken as LMUL 1
        lmul = (1 / int(m.group(2)) if m.group(1) else float(m.group(2))) if m else 1.0
        return lmul, 0, 1
    whole = _WHOLE_REGISTERS.match(mnemonic)
    if whole:
        return None, 0, int(whole.group(1))
    if mnemonic.endswith(".mm") or mnemonic in ("vlm.v", "vsm.v"):
        return None, 0, 1
    wide = mnemonic.startswith(("vw", "vn", "vfw", "vfn"))
    return None, 2 if wide else 1, 0


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
    same count, slower: the check of the first)."""
    if singlestep:
        return _emulated(exe, target, ["-singlestep", "-d", "exec,nochain"], index, op, k, seed)[0]
    return count_work(exe, target, index, op, k, seed)[0]


def count_work(
    exe: Path, target: Target, index: int, op: str, k: int = 1, seed: int = 0
) -> tuple[int, int]:
    """(guest instructions, vector work) between the markers of one run of the counting
    program, as :func:`count_call`; the vector work is defined in the module docstring (equal
    to the instructions on a machine whose vector instructions all work on one register)."""
    return _emulated(exe, target, ["-d", "in_asm,exec,nochain"], index, op, k, seed)


def _emulated(
    exe: Path, target: Target, log_flags: list[str], index: int, op: str, k: int, seed: int
) -> tuple[int, int]:
    """One logged run of the counting program, counted by the parser its log flags need.

    The counts are a pure function of the program, the emulator and the arguments (the
    emulation is deterministic), so each run is made once and its counts kept in the build
    cache under a hash of all three: a second caller (another test, another worker, the
    benchmark) reads them instead of emulating the same run again."""
    cmd = [*target.emulator(), *log_flags]
    single = "-singlestep" in log_flags
    args = [str(index), op, str(k), *([str(seed)] if seed else [])]
    emulator = shutil.which(cmd[0])
    # "work": the entries hold (instructions, vector work); older ones held one count
    key = ["work", *cmd, _file_digest(emulator) if emulator else "", _file_digest(str(exe)), *args]

    def run(directory: Path) -> None:
        log = directory / "exec.log"
        proc = subprocess.run(
            [*cmd, "-D", str(log), str(exe), *args], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise BuildError(f"{exe.name} {op} under {target.label} failed: {proc.stderr.strip()}")
        if single:
            n = _count_between_markers(log, exe, op)
            counts = (n, n)
        else:
            counts = _count_blocks_between_markers(log, exe, op)
        (directory / "counts").write_text(" ".join(map(str, counts)))
        log.unlink()

    out = cached_build(cache_dir() / "counts", f"{exe.stem}-{op}", key, "counts", run)
    n, work = map(int, out.read_text().split())
    return n, work


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


_Work = tuple[float | None, float, int]


def _count_blocks_between_markers(log: Path, exe: Path, op: str) -> tuple[int, int]:
    """The instructions, and the vector work, of the blocks executed between count_begin and
    count_end. A block is named by the host address of its translated code; its instructions
    are those of the translation logged last before its first execution (QEMU may translate a
    block twice, smaller the second time, and reuse an address after flushing its code cache).
    The register group in effect is followed through every block executed, in order."""
    blocks: dict[str, list[_Work]] = {}
    translated: list[tuple[int, _Work]] | None = None  # the block being logged
    pending: list[tuple[int, _Work]] | None = None  # the last block logged, not yet executed
    counting, n, work, lmul = False, 0, 0.0, 1.0
    with log.open() as f:
        for line in f:
            if line.startswith("IN:"):
                translated = []
                continue
            if translated is not None:
                m = _GUEST_INSTRUCTION.match(line)
                if m:
                    what = _work_of(m.group(2) or "", m.group(3) or "")
                    translated.append((int(m.group(1), 16), what))
                    continue
                pending, translated = translated, None
            t = _TRACE.match(line.rstrip("\n"))
            if t is None:
                continue
            block, guest, symbol = t.group(1), int(t.group(2), 16), t.group(3)
            if pending is not None:
                if not pending or pending[0][0] != guest:
                    raise BuildError(f"{exe.name} {op}: a block ran that is not the one logged")
                blocks[block], pending = [w for _, w in pending], None
            if symbol == "count_begin":
                counting, n, work = True, 0, 0.0
                continue
            if counting and symbol == "count_end":
                return n, round(work)
            if block not in blocks:
                if counting:
                    raise BuildError(f"{exe.name} {op}: the QEMU log lacks a block's instructions")
                continue
            for sets, per_group, fixed in blocks[block]:
                if sets is not None:
                    lmul = sets
                if counting:
                    work += max(1.0, per_group * lmul) if per_group else fixed
            if counting:
                n += len(blocks[block])
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
            base, base_work = count_work(exe, target, index, "none")
            label = SCALAR_LABEL if is_scalar else isa
            for op in ops:
                for k in ks if op in K_OPS else (1,):
                    n, work = count_work(exe, target, index, op, k)
                    static = _static_ops(ring, isa, op, k)
                    out.append(
                        CountResult(
                            ring.name,
                            label,
                            op,
                            k,
                            target.label,
                            compilers[isa],
                            n - base,
                            static,
                            work - base_work,
                        )
                    )
    return out
