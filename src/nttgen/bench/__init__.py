"""``nttgen bench``: median ticks per call of every kernel, measured by a C harness.

Per ring, one binary links the generated code of every requested ISA (each compiled with its own
flags and a fixed code alignment, ``-falign-functions=64 -falign-loops=64``) with
``harness.c``, so ISAs are compared in the same run. See ``harness.c`` for the method.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..build import compiler
from ..dsl.ir import ScalarParam
from ..emit.files import CFileWriter, GeneratedFiles
from ..emit.isa import isa_class
from ..emit.names import Names, default_names, prefix_names
from ..errors import BuildError
from ..families import NTT, family_of
from ..interp.cost import count_ops
from ..parallel import run_steps
from ..ring_family import RingSpec
from ..textui import Progress
from .results import (
    K_OPS,
    BenchResult,
    op_label,
    paired_ratio,
    quartiles,
    results_json,
)

# what a run yields, defined in .results: importable from here as before
__all__ = [
    "K_OPS",
    "BenchResult",
    "op_label",
    "paired_ratio",
    "quartiles",
    "results_json",
]

BENCH_OPS = NTT.ops
"""The ops of the x^n + 1 family (each family declares its own: :attr:`RingFamily.ops`)."""
ALIGN_FLAGS = ("-falign-functions=64", "-falign-loops=64")
BENCH_CFLAGS = ("-std=c99", "-O3", "-Wall", "-Wextra", "-Werror", *ALIGN_FLAGS)
K_MAX = 8
ADDR_NO_RANDOMIZE = 0x0040000


def cpu_times() -> dict[int, tuple[int, int]]:
    """Per CPU, (idle, total) jiffies since boot from /proc/stat (idle counts iowait too);
    empty where /proc/stat cannot be read (not Linux)."""
    out: dict[int, tuple[int, int]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/stat").read_text().splitlines():
            name, *fields = line.split()
            if name.startswith("cpu") and name[3:].isdigit():
                ticks = [int(x) for x in fields]
                out[int(name[3:])] = (ticks[3] + ticks[4], sum(ticks))
    return out


def idlest_cpu(
    cpus: Sequence[int],
    times: Callable[[], dict[int, tuple[int, int]]] = cpu_times,
    interval: float = 0.2,
) -> int:
    """The CPU of ``cpus`` (non-empty, ascending) that was idle for the largest share of the
    next ``interval`` seconds (by two readings of ``times``); the last one on a tie or where
    ``times`` knows none of them. Pinning the harness to a busy CPU shares it by time slices:
    beside a test run on the last CPU the long portable kernels read up to 2.4x slow."""
    before = times()
    time.sleep(interval)
    after = times()

    def idle_share(c: int) -> float:
        if c not in before or c not in after:
            return -1.0
        idle, total = (a - b for a, b in zip(after[c], before[c], strict=True))
        return idle / total if total > 0 else -1.0

    return max(reversed(cpus), key=idle_share)


@cache
def bench_cpu() -> int | None:
    """The CPU every harness of this process runs on: the idlest of those it may use, chosen
    once (so that every figure of one table comes from the same CPU); None where the system
    cannot pin a process to a CPU (not Linux), and the harness then runs unpinned."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    return idlest_cpu(sorted(os.sched_getaffinity(0)))


def _quiet_process(cpu: int) -> None:
    """Run the harness pinned to ``cpu`` and without address-space randomisation: the same
    binary ran 1.3-1.5x slower under some random stack placements (aliasing between the stack
    and the data), so a fixed layout makes runs reproducible, like the fixed code alignment."""
    os.sched_setaffinity(0, {cpu})
    with contextlib.suppress(OSError, AttributeError):  # not Linux: keep the default layout
        ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)


def exit_status(code: int) -> str:
    """A process's exit code in words: ``exit status 1``, or ``killed by signal SIGSEGV``
    (subprocess reports a signal as a negative code)."""
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _run(cmd: list[str], cwd: Path, pin: bool = False) -> str:
    cpu = bench_cpu() if pin else None
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=None if cpu is None else (lambda: _quiet_process(cpu)),
    )
    if proc.returncode != 0:
        what = " ".join([Path(cmd[0]).name, *cmd[1:2]])
        message = proc.stderr.strip().splitlines()
        detail = f": {message[0]}" if len(message) == 1 else ("\n" + "\n".join(message))
        raise BuildError(
            f"{what} failed ({exit_status(proc.returncode)}){detail if message else ''}"
        )
    return proc.stdout


def run_pinned(cmd: list[str], cwd: Path) -> str:
    """Run a timing program (``cmd`` in ``cwd``) as the benchmark runs its harness: pinned to
    the benchmark's CPU, without address-space randomisation; returns its standard output and
    raises :class:`BuildError` with its standard error if it fails."""
    return _run(cmd, cwd, pin=True)


@dataclass
class Entry:
    """One set of kernels in a harness: a label, its generated files, how to compile them and
    which of :data:`BENCH_SLOTS` the files define (the others are NULL in the harness)."""

    label: str
    files: GeneratedFiles
    cflags: tuple[str, ...]
    cc: str | None = None
    ops: tuple[str, ...] = BENCH_OPS


BENCH_SLOTS = (*BENCH_OPS, "basemul_cache", "polymul_small")
"""The harness's function slots, in the order of ``bench_kernels_t`` (:func:`_kernels_header`)."""


def writer_entry(
    label: str, w: CFileWriter, files: GeneratedFiles, cflags: tuple[str, ...], cc: str | None
) -> Entry:
    """A harness entry of the files ``w`` writes: the slots their entry points fill."""
    names = {name for name, _ in w.entry_points()}
    return Entry(label, files, cflags, cc, tuple(op for op in BENCH_SLOTS if op in names))


def op_counts(w: CFileWriter, op: str, k: int) -> dict[str, int]:
    """The cost interpreter's counts of one call of ``op`` as ``w`` writes it (every size
    parameter set to ``k``)."""
    fn = w.functions[op]
    return dict(count_ops(fn, {p.name: k for p in fn.params if isinstance(p, ScalarParam)}))


def _cache_length(files: GeneratedFiles) -> int:
    """Elements of one polynomial's multiplication cache in a file set (1 where it has none,
    so that the harness's buffer stays declarable)."""
    meta = json.loads(files.manifest)["functions"].get("basemul_cache")
    if meta is None:
        return 1
    return max(int(p["length"]) for p in meta["params"] if p["kind"] == "array")


def _element_type(files: GeneratedFiles) -> str:
    """The C type of one coefficient in a file set (its manifest's first array parameter)."""
    for meta in json.loads(files.manifest)["functions"].values():
        for p in meta["params"]:
            if p["kind"] == "array":
                return str(p["elem"])
    raise BuildError(f"{files.stem}: the manifest declares no array parameter")


def _kernels_header(ring: RingSpec, entries: list[Entry]) -> tuple[str, str]:
    elem = _element_type(entries[0].files)
    n, q = ring.degree, ring.q
    # the harness draws inputs in the ring's output representation: [0, q) or centred
    centred = ring.output_range[0] < 0
    elem_p, in_p = "bench_elem_t *", "const bench_elem_t *"
    params = {
        "ntt": (elem_p,),
        "intt": (elem_p,),
        "basemul": (elem_p, in_p, in_p),
        "basemul_acc": (elem_p, in_p, in_p, "size_t"),
        "basemul_acc_cached": (elem_p, in_p, in_p, in_p, "size_t"),
        "polymul": (elem_p, in_p, in_p),
        "ntt_vec": (elem_p, "size_t"),
        "intt_vec": (elem_p, "size_t"),
        "basemul_cache": (elem_p, in_p),
        "polymul_small": (elem_p, in_p, in_p),
    }
    types = "\n".join(
        [
            "/* Generated by nttgen bench. */",
            f"typedef {elem} bench_elem_t;",
            f"#define BENCH_N {n}",
            f"#define BENCH_Q {q}",
            f"#define BENCH_KMAX {K_MAX}",
            f"#define BENCH_CACHE_N {_cache_length(entries[0].files)}",
            *(["#define BENCH_CENTRED 1"] if centred else []),
            "typedef struct {",
            "    const char *isa;",
            *(f"    void (*{op})({', '.join(params[op])});" for op in BENCH_SLOTS),
            "} bench_kernels_t;",
            "",
        ]
    )
    lines = ["/* Generated by nttgen bench. */"]
    rows = []
    for e in entries:
        stem = e.files.stem
        lines.append(f'#include "{stem}.h"')
        fns = ", ".join(f"{stem}_{op}" if op in e.ops else "NULL" for op in BENCH_SLOTS)
        rows.append(f'    {{"{e.label}", {fns}}},')
    lines.append("static const bench_kernels_t BENCH_KERNELS[] = {")
    lines += rows
    lines.append("};")
    return types, "\n".join(lines) + "\n"


@dataclass
class Harness:
    """A built timing program of one ring: the executable (in a directory its builder owns)
    and the labels of its kernel sets, in the order of its table."""

    ring: RingSpec
    executable: Path
    labels: tuple[str, ...]


def build_harness(ring: RingSpec, entries: list[Entry], directory: Path) -> Harness:
    """Compile every entry (each with its own flags and compiler) and link them with
    ``harness.c`` into ``directory/bench``; raises :class:`BuildError` with the compiler's
    message if any step fails."""
    default_cc = compiler()
    d = directory
    objects = []
    for e in entries:
        for name, text in e.files.items():
            (d / name).write_text(text)
        obj = d / f"{e.files.stem}.o"
        flags = [*BENCH_CFLAGS, *e.cflags]
        _run([e.cc or default_cc, *flags, "-c", str(d / f"{e.files.stem}.c"), "-o", str(obj)], d)
        objects.append(str(obj))
    types, kernels = _kernels_header(ring, entries)
    (d / "bench_types.h").write_text(types)
    (d / "bench_kernels.h").write_text(kernels)
    for name in ("harness.c", "bench_random.h"):
        (d / name).write_text(resources.files("nttgen.bench").joinpath(name).read_text())
    exe = d / "bench"
    _run([default_cc, "-O2", "-std=gnu99", *ALIGN_FLAGS, "harness.c", *objects, "-o", str(exe)], d)
    return Harness(ring, exe, tuple(e.label for e in entries))


def time_harness(
    harness: Harness,
    ops: Iterable[str],
    *,
    samples: int = 1000,
    batch: int = 100,
    warmup: int = 100,
    ks: Iterable[int] = (3, 5),
    rounds: int = 7,
    repeats: int = 3,
) -> list[dict[str, Any]]:
    """Time each (kernel set, op) pair of a built harness in ``repeats`` processes of
    ``samples`` samples; return one record per pair: its "isa", "op", "k", "unit", the
    "samples" of all processes in the order taken (ticks per call; sample s of every pair of
    one op taken back to back) and their "median", "q1" and "q3". Run one at a time: a second
    program running beside it would share its CPU's caches and memory bandwidth."""
    rounds = max(1, min(rounds, samples))
    args = [str(samples), str(batch), str(warmup), ",".join(ops), ",".join(map(str, ks))]
    pooled: dict[tuple[str, str, int], dict[str, Any]] = {}
    exe = harness.executable
    for seed in range(max(1, repeats)):  # each process its own placements
        out = _run([str(exe), *args, str(rounds), str(seed)], exe.parent, pin=True)
        for line in out.splitlines():
            rec = json.loads(line)
            key = (rec["isa"], rec["op"], rec["k"])
            pooled.setdefault(key, {**rec, "samples": []})["samples"] += rec["samples"]
    for rec in pooled.values():
        rec["q1"], rec["median"], rec["q3"] = quartiles(rec["samples"])
    return list(pooled.values())


def run_entries(
    ring: RingSpec,
    entries: list[Entry],
    ops: Iterable[str] = BENCH_OPS,
    *,
    samples: int = 1000,
    batch: int = 100,
    warmup: int = 100,
    ks: Iterable[int] = (3, 5),
    rounds: int = 7,
    repeats: int = 3,
) -> list[dict[str, Any]]:
    """Build one harness binary with every entry and time each (entry, op) pair (see
    :func:`build_harness` and :func:`time_harness`)."""
    with tempfile.TemporaryDirectory(prefix="nttgen-bench-") as tmp:
        harness = build_harness(ring, entries, Path(tmp))
        return time_harness(
            harness, list(ops), samples=samples, batch=batch, warmup=warmup, ks=list(ks),
            rounds=rounds, repeats=repeats,
        )  # fmt: skip


@dataclass
class Prepared:
    """One ring's benchmark, built and not yet timed: its harness, the ops to time, the label
    of its rows and each kernel's reduction count per (ISA, op, k)."""

    harness: Harness
    ops: tuple[str, ...]
    label: str
    reductions: dict[tuple[str, str, int], int]


def column(isa: str, cc: str | None) -> str:
    """The name of a benchmark column: the ISA, followed by the compiler where the run names
    compilers (``avx2 gcc``)."""
    return isa if cc is None else f"{isa} {cc}"


def _compiler_names(ring: RingSpec, cc: str) -> Names:
    """A namespace for one compiler's copy of a ring's files, so that copies built by several
    compilers link into one harness (``nttgen_mlkem_clang_19_avx2_...``)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", cc).strip("_")
    return prefix_names(f"{default_names(ring).root}_{slug}")


def prepare_ring(
    ring: RingSpec,
    isas: list[str],
    ops: Iterable[str] | None,
    directory: Path,
    *,
    ks: Iterable[int] = (3, 5),
    variant: str | None = None,
    label: str | None = None,
    compilers: Sequence[str] = (),
) -> Prepared:
    """Generate and compile one ring's kernels on ``isas`` (through ``variant``) into a
    harness in ``directory``: the part of a benchmark that may run beside other work. ``ops``:
    those of the family's :attr:`~nttgen.ring_family.RingFamily.ops` to time (default all);
    ``label`` names the rows (default the ring's name), followed by ``/tag`` for a non-default
    variant, e.g. ``sntrup761/sn``. With ``compilers``, every ISA is built by each of them and
    its columns are named by :func:`column`; else each ISA by the compiler ``nttgen bench``
    prefers for it."""
    fam = family_of(ring)
    wanted = tuple(o for o in (fam.ops if ops is None else ops) if o in fam.ops)
    writers = {isa: fam.writer(ring, isa, variant) for isa in isas}
    builds: list[tuple[str, str, str | None]] = [  # (isa, compiler, name of the column)
        (isa, cc, column(isa, cc)) for isa in isas for cc in compilers
    ] or [(isa, compiler(isa_class(isa).compilers), isa) for isa in isas]
    entries = [
        writer_entry(
            name,
            writers[isa],
            fam.generate(ring, isa, variant, _compiler_names(ring, cc) if compilers else None),
            tuple(isa_class(isa).cflags),
            cc,
        )
        for isa, cc, name in builds
    ]
    harness = build_harness(ring, entries, directory)
    tags = {w.variant_tag for w in writers.values()}
    name = "/".join([label or ring.name, *sorted(t for t in tags if t)])
    reductions = {
        (name, op, k): int(op_counts(writers[isa], op, k).get("reductions", 0))
        for isa, _, name in builds
        for op in wanted
        for k in (ks if op in K_OPS else (0,))  # the harness's k of a one-size op
    }
    return Prepared(harness, wanted, name, reductions)


def time_prepared(
    prepared: Prepared,
    *,
    samples: int = 1000,
    batch: int = 100,
    warmup: int = 100,
    ks: Iterable[int] = (3, 5),
    rounds: int = 7,
    repeats: int = 3,
) -> list[BenchResult]:
    """Time a prepared ring (see :func:`time_harness`) and return one result per (ISA, op,
    k)."""
    records = time_harness(
        prepared.harness, prepared.ops, samples=samples, batch=batch, warmup=warmup,
        ks=list(ks), rounds=rounds, repeats=repeats,
    )  # fmt: skip

    def reductions(isa: str, op: str, k: int) -> int:
        return prepared.reductions.get((isa, op, k), 0)

    return _results(prepared.label, records, reductions)


def bench_ring(
    ring: RingSpec,
    isas: list[str],
    ops: Iterable[str] | None = None,
    *,
    samples: int = 1000,
    batch: int = 100,
    warmup: int = 100,
    ks: Iterable[int] = (3, 5),
    rounds: int = 7,
    repeats: int = 3,
    variant: str | None = None,
) -> list[BenchResult]:
    """Time every (ISA, op) pair of one ring of any family (``ops``: those of its family's
    :attr:`~nttgen.ring_family.RingFamily.ops` to time, default all) through ``variant`` (an
    NTRU Prime pipeline; the rows of a non-default one are labelled ``ring/tag``, e.g.
    ``sntrup761/sn``). See :func:`time_harness` and harness.c for the method: batches, rounds,
    samples of every ISA taken back to back, the median over ``repeats`` processes, pinned to
    one CPU without address-space randomisation."""
    ks = list(ks)
    with tempfile.TemporaryDirectory(prefix="nttgen-bench-") as tmp:
        prepared = prepare_ring(ring, isas, ops, Path(tmp), ks=ks, variant=variant)
        return time_prepared(
            prepared, samples=samples, batch=batch, warmup=warmup, ks=ks, rounds=rounds,
            repeats=repeats,
        )  # fmt: skip


def _results(
    ring: str, records: list[dict[str, Any]], reductions: Callable[[str, str, int], int]
) -> list[BenchResult]:
    """The harness's records as results; ``reductions(isa, op, k)`` counts each kernel's
    coefficient reductions."""
    return [
        BenchResult(
            ring,
            rec["isa"],
            rec["op"],
            rec["k"],
            rec["median"],
            rec["q1"],
            rec["q3"],
            rec["unit"],
            reductions(rec["isa"], rec["op"], rec["k"]),
            tuple(rec["samples"]),
        )
        for rec in records
    ]


@dataclass(frozen=True)
class BenchUnit:
    """One harness of a benchmark run: a ring, the ISAs that have code for it, its ops to
    time, its program variant (None: the default) and the name its rows carry."""

    ring: RingSpec
    isas: tuple[str, ...]
    ops: tuple[str, ...]
    variant: str | None
    label: str
    compilers: tuple[str, ...] = ()


def bench_units(
    rings: Sequence[RingSpec],
    isas: Sequence[str],
    ops: Iterable[str] | None = None,
    variants: Mapping[RingSpec, Sequence[str | None]] | None = None,
    labels: Mapping[RingSpec, str] | None = None,
) -> list[BenchUnit]:
    """The harnesses that time ``rings``: per ring, its ops among ``ops`` (default all of its
    family's) on the ISAs of ``isas`` that have code for it, once per variant (default: its
    default program alone); a ring with no such ISA or op has none. ``labels`` names a ring's
    rows (default its name)."""
    out = []
    for ring in rings:
        fam = family_of(ring)
        here = tuple(i for i in isas if fam.unsupported(ring, i) is None)
        wanted = tuple(o for o in (fam.ops if ops is None else ops) if o in fam.ops)
        label = (labels or {}).get(ring, ring.name)
        for variant in (variants or {}).get(ring, (None,)) if here and wanted else ():
            out.append(BenchUnit(ring, here, wanted, variant, label))
    return out


def _prepare_unit(job: tuple[BenchUnit, Path, tuple[int, ...]]) -> Prepared:
    unit, directory, ks = job
    directory.mkdir(parents=True, exist_ok=True)
    return prepare_ring(
        unit.ring, list(unit.isas), unit.ops, directory, ks=ks, variant=unit.variant,
        label=unit.label, compilers=unit.compilers,
    )  # fmt: skip


def run_bench(
    rings: Sequence[RingSpec],
    isas: list[str],
    ops: Iterable[str] | None = None,
    *,
    samples: int = 1000,
    batch: int = 100,
    warmup: int = 100,
    ks: Iterable[int] = (3, 5),
    rounds: int = 7,
    repeats: int = 3,
    progress: Progress | None = None,
    variants: Mapping[RingSpec, Sequence[str | None]] | None = None,
    labels: Mapping[RingSpec, str] | None = None,
    jobs: int | None = 1,
    compilers: Sequence[str] = (),
) -> list[BenchResult]:
    """Benchmark several rings of any family (the harnesses of :func:`bench_units`): first
    generate and compile every harness, ``jobs`` at a time (see :func:`nttgen.parallel.run_steps`;
    None: one per CPU), then time them one after the other, alone. ``progress`` counts two
    steps per harness: its build and its timing. With ``compilers``, every ISA is built and
    timed with each of them (columns named by :func:`column`)."""
    ks = tuple(ks)
    units = [
        replace(u, compilers=tuple(compilers))
        for u in bench_units(rings, isas, ops, variants, labels)
    ]
    names = [u.label + (f" ({u.variant})" if u.variant else "") for u in units]
    if progress:
        progress.total = 2 * len(units)
    out: list[BenchResult] = []
    with tempfile.TemporaryDirectory(prefix="nttgen-bench-") as tmp:
        jobs_in = [(u, Path(tmp) / str(i), ks) for i, u in enumerate(units)]
        built = run_steps(_prepare_unit, jobs_in, [f"build {n}" for n in names], progress, jobs)
        for name, prepared in zip(names, built, strict=True):
            if progress:
                progress.now(f"time {name}")
            out += time_prepared(
                prepared, samples=samples, batch=batch, warmup=warmup, ks=ks, rounds=rounds,
                repeats=repeats,
            )  # fmt: skip
            if progress:
                progress.finished(f"time {name}")
    return out
