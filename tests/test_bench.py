"""``nttgen bench`` runs end to end (its figures are reported by the command, never asserted
by a test: speed is shown by the benchmark, not by timed unit tests)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_isa
from nttgen.bench import BENCH_OPS, BenchResult, bench_ring, paired_ratio, quartiles, run_bench
from nttgen.bench.chart import build_figure, write_chart
from nttgen.rings import PRESETS
from nttgen.textui import Progress

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_bench_ring_measures_every_op() -> None:
    res = bench_ring(PRESETS["mlkem"], ["c"], samples=5, batch=2, warmup=1, ks=(3, 5))
    labels = [r.label for r in res]
    assert labels == [
        "ntt",
        "intt",
        "basemul",
        "basemul_acc k=3",
        "basemul_acc k=5",
        "basemul_acc_cached k=3",
        "basemul_acc_cached k=5",
        "polymul",
        "ntt_vec k=3",
        "ntt_vec k=5",
        "intt_vec k=3",
        "intt_vec k=5",
    ]
    assert all(r.median > 0 and r.q1 <= r.median <= r.q3 for r in res)
    # every sample of the three processes, the figures theirs
    assert all(len(r.samples) == 15 and (r.q1, r.median, r.q3) == quartiles(r.samples) for r in res)
    assert {r.op for r in res} == set(BENCH_OPS)
    intt = next(r for r in res if r.op == "intt")
    assert intt.reductions > 0


def test_bench_cli_writes_json(tmp_path: Path) -> None:
    require_isa("avx2")
    out = tmp_path / "b.json"
    args = ["bench", "--ring", "mldsa", "--op", "ntt", "--op", "polymul", "--isa", "c"]
    args += ["--isa", "avx2"]
    args += ["--samples", "5", "--batch", "2", "--json", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "Median TSC ticks per call" in p.stdout and "mldsa" in p.stdout
    assert "c/avx2" in p.stdout  # side by side, with the ratio
    data = json.loads(out.read_text())
    got = [(r["isa"], r["op"]) for r in data["results"]]
    assert got == [("c", "ntt"), ("c", "polymul"), ("avx2", "ntt"), ("avx2", "polymul")]
    assert data["meta"]["samples"] == 5
    assert data["meta"]["compilers"]["avx2"]


def test_run_bench_reports_progress_per_build_and_timing() -> None:
    """Two steps per ring (its build, then its timing), counted N of M on the stream, with the
    label each ring's rows carry; the results come back in ring order whatever finished
    first."""
    stream = io.StringIO()
    progress = Progress("bench", 0, stream)
    rings = [PRESETS["mlkem"], PRESETS["mldsa"]]
    res = run_bench(
        rings, ["c"], ["basemul"], samples=2, batch=2, warmup=1, progress=progress,
        labels={PRESETS["mldsa"]: "mldsa (dilithium)"}, jobs=2,
    )  # fmt: skip
    lines = stream.getvalue().splitlines()
    assert progress.total == 4 and progress.done == 4
    assert any(line.startswith("[4/4]") and "time mldsa (dilithium) done" in line for line in lines)
    assert any("build mlkem done" in line for line in lines)
    assert [r.ring for r in res] == ["mlkem", "mldsa (dilithium)"]


def _synthetic_results() -> list[BenchResult]:
    out = []
    for ring in ("mlkem", "mldsa", "falcon512"):
        for speedup, isa in enumerate(("c", "avx2"), start=1):
            for op, k, ticks in (
                ("ntt", 0, 3000.0),
                ("basemul_acc", 3, 2000.0),
                ("polymul", 0, 11e3),
            ):
                m = ticks / speedup
                out.append(BenchResult(ring, isa, op, k, m, 0.9 * m, 1.1 * m, "tsc", 10))
    return out


def test_chart_is_a_deterministic_png_with_a_panel_per_ring(tmp_path: Path) -> None:
    results = _synthetic_results()
    fig = build_figure(results, ["c", "avx2"], title="median tsc ticks per call")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["mlkem", "mldsa", "falcon512"]
    assert all(ax.get_yscale() == "log" for ax in panels)
    ticks = [t.get_text() for t in panels[0].get_xticklabels()]
    assert ticks == ["ntt", "basemul_acc k=3", "polymul"]
    assert len(panels[0].patches) == 6  # 3 ops x 2 ISAs
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    write_chart(results, ["c", "avx2"], a, title="t")
    write_chart(results, ["c", "avx2"], b, title="t")
    assert a.read_bytes().startswith(PNG_MAGIC)
    assert a.read_bytes() == b.read_bytes()  # byte-identical: no date or version inside


def test_bench_cli_writes_png_and_json(tmp_path: Path) -> None:
    png, js = tmp_path / "b.png", tmp_path / "b.json"
    args = ["bench", "--ring", "mlkem", "--isa", "c", "--op", "basemul"]
    args += ["--samples", "5", "--batch", "5", "--png", str(png), "--json", str(js)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert [r["op"] for r in json.loads(js.read_text())["results"]] == ["basemul"]
    assert f"wrote {png}" in p.stdout


def test_bench_cli_png_in_a_missing_directory_fails_first(tmp_path: Path) -> None:
    png = tmp_path / "missing" / "b.png"
    args = ["bench", "--ring", "mlkem", "--isa", "c", "--op", "basemul", "--png", str(png)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nttgen: error: ") and str(png) in lines[0]
    assert "median" not in p.stdout  # refused before any timing


def test_instruction_counts_under_qemu() -> None:
    """``bench --isa neon`` counts guest instructions per call: exact (the count of a
    constant-time kernel is the same for every input), below the portable C's on the same
    machine, and at least the program's vector op count. Figures are reported, not asserted
    against targets here."""
    from nttgen.bench.icount import build_counter, count_call, count_ring
    from nttgen.cross import Target

    require_isa("neon")
    ring = PRESETS["mlkem"]
    target = Target("aarch64")
    res = count_ring(ring, ["neon", "c"], target, ["ntt", "polymul"], ks=(3,))
    by = {(r.isa, r.op): r for r in res}
    assert set(by) == {(i, o) for i in ("neon", "c", "c scalar") for o in ("ntt", "polymul")}
    for op in ("ntt", "polymul"):
        neon, c, scalar = by[("neon", op)], by[("c", op)], by[("c scalar", op)]
        assert neon.static_ops <= neon.instructions < c.instructions <= scalar.instructions
    exe, _ = build_counter(ring, ["neon", "c"], target)
    for index in (0, 1):
        counts = {count_call(exe, target, index, "ntt", seed=s) for s in (0, 1, 2)}
        assert len(counts) == 1, counts


@pytest.mark.parametrize("arch,isa", [("aarch64", "neon"), ("riscv64", "rvv")])
def test_block_counts_are_single_step_counts(arch: str, isa: str) -> None:
    """Counting the instructions of the executed blocks gives exactly the count of running
    one instruction per block, for the SIMD kernels and the portable C, on every op."""
    from nttgen.bench.icount import build_counter, count_call
    from nttgen.cross import Target

    require_isa(isa)
    target = Target(arch, 256) if arch == "riscv64" else Target(arch)
    exe, _ = build_counter(PRESETS["mlkem"], [isa, "c"], target)
    for index in (0, 1):
        for op, k in (("none", 1), ("ntt", 1), ("intt", 1), ("basemul_acc", 3), ("polymul", 1)):
            fast = count_call(exe, target, index, op, k)
            assert fast == count_call(exe, target, index, op, k, singlestep=True), (index, op)
            assert fast > 0


def test_vector_work_counts_each_register_of_a_group() -> None:
    """The vector work counts a vector instruction once per register it works on: the LMUL
    the last vsetvli set, twice that on the wide side of a widening or narrowing instruction, N
    for whole-register moves, loads and stores of N registers; scalar instructions once. So a
    program without vector instructions (the scalar C) has as much work as instructions, LMUL-1
    code at least as much, and LMUL-2 code more (each of its vector instructions counts two)."""
    from nttgen.bench.icount import _work_of, count_ring
    from nttgen.cross import Target

    assert _work_of("vsetvli", "a0,a1,e16,m2,ta,ma") == (2.0, 0, 1)
    assert _work_of("vsetivli", "zero,8,e32,mf2,ta,ma") == (0.5, 0, 1)
    assert _work_of("vadd.vv", "v8,v8,v10") == (None, 1, 0)
    assert _work_of("vwmul.vx", "v8,v12,a0") == (None, 2, 0)
    assert _work_of("vnsra.wi", "v8,v12,16") == (None, 2, 0)
    assert _work_of("vl4re16.v", "v8,(a0)") == (None, 0, 4)
    assert _work_of("vmv2r.v", "v8,v10") == (None, 0, 2)
    assert _work_of("addi", "a0,a0,1") == (None, 0, 1)
    require_isa("rvv")
    target = Target("riscv64", 128)
    res = count_ring(PRESETS["mlkem"], ["rvv128m1", "rvv128m2"], target, ["ntt"], scalar=True)
    by = {r.isa: r for r in res}
    assert by["c scalar"].vector_work == by["c scalar"].instructions > 0
    assert by["rvv128m1"].instructions <= by["rvv128m1"].vector_work
    m2 = by["rvv128m2"]
    assert 1.5 * m2.instructions < m2.vector_work < 2 * m2.instructions


def test_ntru_instruction_counts_under_qemu() -> None:
    """NTRU Prime rings are counted too: strip-mined RVV's polymul_small below the portable
    C's -O3 on the same machine, the same count for other inputs (constant time)."""
    from nttgen.bench.icount import build_counter, count_call, count_ring
    from nttgen.cross import Target
    from nttgen.ntru_rings import get_ntru_ring

    require_isa("rvv")
    ring = get_ntru_ring("sntrup761")
    target = Target("riscv64", 256)
    res = count_ring(ring, ["rvv", "c"], target, ["polymul_small"], scalar=False)
    by = {r.isa: r for r in res}
    assert set(by) == {"rvv", "c"}
    assert 0 < by["rvv"].instructions < by["c"].instructions
    exe, _ = build_counter(ring, ["rvv", "c"], target)
    for op in ("polymul", "polymul_small"):
        counts = {count_call(exe, target, 0, op, seed=s) for s in (0, 1, 2)}
        assert len(counts) == 1, (op, counts)


def test_bench_cli_counts_ntru_rings(tmp_path: Path) -> None:
    """``bench --ring sntrup761 --isa rvv`` counts the NTRU Prime multipliers under QEMU."""
    require_isa("rvv")
    out = tmp_path / "b.json"
    args = ["bench", "--ring", "sntrup761", "--isa", "rvv", "--vlen", "256"]
    args += ["--op", "polymul_small", "--json", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "Dynamic instructions per call under QEMU" in p.stdout and "c/rvv" in p.stdout
    got = {
        (r["ring"], r["isa"], r["op"]) for r in json.loads(out.read_text())["instruction_counts"]
    }
    assert got == {("sntrup761", i, "polymul_small") for i in ("rvv", "c", "c scalar")}


def test_bench_cli_counts_emulated_isas(tmp_path: Path) -> None:
    require_isa("neon")
    out = tmp_path / "b.json"
    args = ["bench", "--ring", "kyber-r1", "--op", "intt", "--isa", "neon", "--json", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "Dynamic instructions per call under QEMU" in p.stdout and "c/neon" in p.stdout
    data = json.loads(out.read_text())
    assert data["results"] == []
    got = {(r["isa"], r["op"]) for r in data["instruction_counts"]}
    assert got == {("neon", "intt"), ("c", "intt"), ("c scalar", "intt")}


def test_harness_runs_on_the_idlest_cpu() -> None:
    """The benchmark pins its harness to the CPU idle the longest between two readings (a
    busy CPU is shared by time slices and inflates the figures), the last one on a tie or
    when the readings know none of the CPUs."""
    from nttgen.bench import cpu_times, idlest_cpu

    readings = iter(
        [
            {0: (100, 1000), 1: (100, 1000), 2: (100, 1000)},
            {0: (150, 1100), 1: (195, 1100), 2: (120, 1100)},
        ]
    )
    assert idlest_cpu([0, 1, 2], lambda: next(readings), interval=0) == 1
    same = {0: (10, 20), 1: (10, 20)}
    assert idlest_cpu([0, 1], lambda: same, interval=0) == 1  # no progress: a tie
    assert idlest_cpu([3, 5], lambda: {}, interval=0) == 5
    real = cpu_times()
    assert all(0 <= idle <= total for idle, total in real.values())
    assert idlest_cpu(sorted(os.sched_getaffinity(0)), interval=0.01) in os.sched_getaffinity(0)


def test_no_pinning_where_the_system_cannot_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where os has no sched_setaffinity (not Linux) the benchmark names no CPU and runs its
    harness unpinned, instead of failing."""
    from nttgen import bench

    monkeypatch.delattr(os, "sched_setaffinity")
    bench.bench_cpu.cache_clear()
    try:
        assert bench.bench_cpu() is None
        assert bench._run(["true"], Path("."), pin=True) == ""
    finally:
        bench.bench_cpu.cache_clear()


def test_bench_table_fits_100_columns_with_the_baseline_first() -> None:
    """The table a first run prints: portable C first, each SIMD ISA with its speed-up, the
    CPU and the compilers in the title, every line within 100 columns (the longest ring label
    included)."""
    from nttgen.bench.report import bench_table

    results = [
        BenchResult("newhope1024 (falcon1024)", isa, op, 3 if op == "basemul_acc" else 0,
                    ticks, ticks, ticks, "tsc", 0)
        for isa, scale in (("c", 6.0), ("avx2", 1.0), ("avx512", 0.9))
        for op, ticks in (("ntt", 720.0 * scale), ("basemul_acc", 737.0 * scale))
    ]  # fmt: skip
    table = bench_table(
        results, ["c", "avx2", "avx512"], samples=1000, batch=100,
        compilers={"c": "gcc 12.2.0", "avx2": "clang 19.1.7", "avx512": "clang 19.1.7"},
        cpu="AMD EPYC 9R14 96-Core Processor (family 0x19, model 0x11)",
    )  # fmt: skip
    text = table.render(100)
    assert max(map(len, text.splitlines())) <= 100
    assert table.columns == ["ring", "op", "c", "avx2", "c/avx2", "avx512", "c/avx512"]
    assert "AMD EPYC 9R14" in text and "clang 19.1.7" in text
    row = next(r for r in table.rows if r[1] == "basemul_acc k=3")
    assert row[2:] == ["4,422", "737", "6.00x", "663", "6.67x"]


def test_bench_cli_default_ops_on_an_ntt_ring(tmp_path: Path) -> None:
    """With no ``--op`` an x^n + 1 ring is timed on the headline ops it has (``polymul_small``,
    NTRU Prime's alone, is left to those rings; ``--op all`` adds ``basemul``); asking an
    x^n + 1 ring for NTRU Prime's op alone is refused in one line."""
    out = tmp_path / "b.json"
    args = ["bench", "--ring", "mlkem", "--isa", "c", "--samples", "3", "--batch", "1"]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    got = [(r["op"], r["k"]) for r in json.loads(out.read_text())["results"]]
    assert got == [
        ("ntt", 0),
        ("intt", 0),
        ("basemul_acc", 3),
        ("basemul_acc_cached", 3),
        ("polymul", 0),
    ]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", "bench", "--ring", "mlkem", "--op", "polymul_small"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert (
        "mlkem's kernels have ntt, intt, basemul, basemul_acc, basemul_acc_cached, polymul"
        in p.stderr
    )


def test_harness_refuses_an_op_its_kernels_lack() -> None:
    """The timing harness asked for an op whose slot is empty says so instead of calling it."""
    from nttgen.bench import Entry, run_entries
    from nttgen.errors import BuildError
    from nttgen.generate import generate

    ring = PRESETS["mlkem"]
    entry = Entry("c", generate(ring, "c"), ())
    with pytest.raises(BuildError, match="c kernels have no polymul_small"):
        run_entries(ring, [entry], ["polymul_small"], samples=1, batch=1, warmup=0, repeats=1)


def test_bench_with_no_arguments_times_every_preset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``nttgen bench`` as a newcomer types it (only fewer samples): every preset, its scheme
    names beside it, on the ISAs this CPU runs, portable C first; never an empty table."""
    from nttgen.cli import main

    out = tmp_path / "b.json"
    assert main(["bench", "--samples", "3", "--batch", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for label in ("mlkem", "mldsa", "kyber-r1", "newhope512 (falcon512)",
                  "newhope1024 (falcon1024)", "sntrup761 (ntrulpr761)"):  # fmt: skip
        assert label in text
    rows = json.loads(out.read_text())["results"]
    assert {(r["ring"], r["op"]) for r in rows} >= {
        ("mlkem", "ntt"),
        ("mlkem", "basemul_acc"),
        ("sntrup761 (ntrulpr761)", "polymul_small"),
    }
    assert max(map(len, text.splitlines())) <= 100


# (ring names, --op values, the ops timed per ring, or None where the run is refused)
OP_CASES = [
    (["mlkem"], [], {"mlkem": ["ntt", "intt", "basemul_acc", "basemul_acc_cached", "polymul"]}),
    (["mlkem"], ["all"], {"mlkem": ["ntt", "intt", "basemul", "basemul_acc",
                                          "basemul_acc_cached", "polymul", "ntt_vec",
                                          "intt_vec"]}),
    (["mlkem"], ["ntt_vec"], {"mlkem": ["ntt_vec"]}),
    (["mlkem"], ["ntt"], {"mlkem": ["ntt"]}),
    (["mlkem"], ["polymul", "polymul_small"], {"mlkem": ["polymul"]}),
    (["mlkem"], ["polymul_small"], None),
    (["sntrup761"], [], {"sntrup761 (ntrulpr761)": ["polymul", "polymul_small"]}),
    (["sntrup761"], ["all"], {"sntrup761 (ntrulpr761)": ["polymul", "polymul_small"]}),
    (["sntrup761"], ["polymul"], {"sntrup761 (ntrulpr761)": ["polymul"]}),
    (["sntrup761"], ["ntt"], None),
    (["mlkem", "sntrup761"], [], {"mlkem": ["ntt", "intt", "basemul_acc", "basemul_acc_cached",
                                            "polymul"],
                                  "sntrup761 (ntrulpr761)": ["polymul", "polymul_small"]}),
    (["mlkem", "sntrup761"], ["polymul"], {"mlkem": ["polymul"],
                                           "sntrup761 (ntrulpr761)": ["polymul"]}),
    (["mlkem", "sntrup761"], ["ntt"], None),
    (["mlkem", "sntrup761"], ["polymul_small"], None),
]  # fmt: skip


@pytest.mark.parametrize(("rings", "ops", "timed"), OP_CASES)
def test_bench_every_ring_kind_and_op_list(
    rings: list[str],
    ops: list[str],
    timed: dict[str, list[str]] | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each family alone and both together, with the default ops, ``all``, an op of one
    family, an op both have, and a mix: each ring times the ops it has (an op asked for by
    name that a ring lacks is named in a note), and a ring left with none is refused in one
    line naming its ops, before anything is built."""
    from nttgen.cli import main

    out = tmp_path / "b.json"
    args = ["bench", "--isa", "c", "--samples", "2", "--batch", "1", "--json", str(out)]
    args += [a for r in rings for a in ("--ring", r)] + [a for o in ops for a in ("--op", o)]
    status = main(args)
    err = capsys.readouterr().err
    if timed is None:
        assert status == 2 and not out.exists()
        assert err.count("nttgen: error:") == 1 and "kernels have" in err
        return
    assert status == 0, err
    got: dict[str, list[str]] = {}
    for r in json.loads(out.read_text())["results"]:
        got.setdefault(r["ring"], []).append(r["op"])
    assert got == timed
    lacking = [o for o in ops if o != "all" and any(o not in v for v in timed.values())]
    assert ("has no" in err) == bool(lacking)


def test_a_harness_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    """A harness that crashes is reported with its signal (a crash used to end the message
    after 'failed:')."""
    from nttgen.bench import _run, exit_status
    from nttgen.errors import BuildError

    assert exit_status(-11) == "killed by signal SIGSEGV" and exit_status(3) == "exit status 3"
    with pytest.raises(BuildError, match=r"sh -c failed \(killed by signal SIGSEGV\)"):
        _run(["sh", "-c", "kill -SEGV $$"], tmp_path)


def test_the_core_needs_only_numpy() -> None:
    """The command line and the library load without the optional plotting extra (and no
    terminal-formatting library at all): a core install is nttgen and numpy."""
    code = (
        "import sys, nttgen, nttgen.cli, nttgen.bench, nttgen.bench.report, nttgen.verify; "
        "bad = sorted(m for m in ('rich', 'matplotlib') if m in sys.modules); "
        "sys.exit(', '.join(bad) or None)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"imported at start: {p.stderr}"


def test_png_without_matplotlib_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--png without the plot extra is refused before any work, naming the extra."""
    from nttgen.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    args = ["bench", "--ring", "mlkem", "--isa", "c", "--png", str(tmp_path / "b.png")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'nttgen[plot]'" in err


def test_an_op_of_one_family_over_every_preset_leaves_the_others_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``nttgen bench --op ntt`` (every preset by default) times the rings that have an NTT
    and says which it left out, rather than refusing (or printing an empty table)."""
    from nttgen.cli import main

    out = tmp_path / "b.json"
    args = ["bench", "--isa", "c", "--op", "ntt", "--samples", "2", "--batch", "1"]
    assert main([*args, "--json", str(out)]) == 0
    assert "sntrup761 left out: its kernels have polymul, polymul_small" in capsys.readouterr().err
    rows = json.loads(out.read_text())["results"]
    assert {r["op"] for r in rows} == {"ntt"} and len({r["ring"] for r in rows}) == 5


def test_bench_cli_times_compilers_side_by_side_and_compares(tmp_path: Path) -> None:
    """--cc builds every ISA with each compiler (copies under their own names, in one
    harness); --compare prints the ratios of that run; an unknown compiler is refused."""
    require_isa("avx2")
    out = tmp_path / "b.json"
    args = ["bench", "--ring", "mlkem", "--op", "ntt", "--op", "polymul", "--isa", "c", "--isa"]
    args += ["avx2", "--cc", "gcc", "--cc", "clang-19", "--compare", "--samples", "5"]
    args += ["--batch", "2", "--json", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "avx2 gcc" in p.stdout and "avx2 clang-19" in p.stdout
    assert "avx2 clang-19/gcc" in p.stdout and "Ratios of ticks per call" in p.stdout
    data = json.loads(out.read_text())
    columns = {r["isa"] for r in data["results"]}
    assert columns == {"c gcc", "c clang-19", "avx2 gcc", "avx2 clang-19"}
    for r in data["results"]:
        assert r["median"] > 0 and "samples" not in r
    # the table's ratios, in the JSON too
    pairs = {(r["op"], r["pair"]) for r in data["ratios"] if r["ratio"] > 0}
    assert pairs == {
        (op, f"{isa} clang-19/gcc") for op in ("ntt", "polymul") for isa in ("c", "avx2")
    }
    bad = subprocess.run(
        [sys.executable, "-m", "nttgen", "bench", "--ring", "mlkem", "--cc", "no-such-cc"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert bad.returncode == 2 and "--cc no-such-cc: no such compiler" in bad.stderr


def _result(isa: str, samples: tuple[float, ...]) -> BenchResult:
    q1, med, q3 = quartiles(samples)
    return BenchResult("r", isa, "ntt", 0, med, q1, q3, "tsc", 0, samples)


def test_paired_ratio_divides_samples_taken_together() -> None:
    # the clock changes speed between samples: each sample of a takes twice b's, although the
    # medians (4 and 3) are not in that ratio
    a, b = _result("a", (2.0, 4.0, 12.0)), _result("b", (1.0, 2.0, 6.0))
    assert paired_ratio(a, b) == 2.0
    a, b = _result("a", (4.0, 2.0, 12.0)), _result("b", (1.0, 2.0, 6.0))
    assert paired_ratio(a, b) == 2.0  # ratios 4, 1, 2
    a, b = _result("a", (1.0, 1.0, 10.0)), _result("b", (1.0, 10.0, 10.0))
    assert paired_ratio(a, b) == 1.0 and a.median / b.median == 0.1
    # samples not taken together: the ratio of the medians
    assert paired_ratio(_result("a", (3.0,)), b) == 0.3


def test_compare_table_shows_the_paired_ratios() -> None:
    from nttgen.bench.report import compare_ratios, compare_table

    a, b = _result("avx2 clang-19", (2.0, 4.0, 12.0)), _result("avx2 gcc", (1.0, 2.0, 6.0))
    got = compare_ratios([b, a], ["avx2"], ["gcc", "clang-19"])
    assert got == [{"ring": "r", "op": "ntt", "k": 0, "pair": "avx2 clang-19/gcc", "ratio": 2.0}]
    t = compare_table([b, a], ["avx2"], ["gcc", "clang-19"])
    assert t.rows == [["r", "ntt", "2.00"]]


def test_compare_pairs_each_isa_with_the_next_and_each_compiler_with_the_first() -> None:
    from nttgen.bench.report import ratio_pairs

    assert ratio_pairs(["c", "avx512", "avx2"], []) == [("avx512/avx2", "avx512", "avx2")]
    pairs = ratio_pairs(["c", "avx2"], ["gcc", "clang-19"])
    assert ("c clang-19/gcc", "c clang-19", "c gcc") in pairs
    assert ("avx2 clang-19/gcc", "avx2 clang-19", "avx2 gcc") in pairs
