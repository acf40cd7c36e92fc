"""``nttgen bench`` runs end to end (its figures are reported by the command, never asserted
by a test: speed is shown by the benchmark, not by timed unit tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import require_isa
from nttgen.bench import BENCH_OPS, bench_ring
from nttgen.rings import PRESETS


def test_bench_ring_measures_every_op() -> None:
    res = bench_ring(PRESETS["mlkem"], ["c"], samples=5, batch=2, warmup=1, ks=(3, 5))
    labels = [r.label for r in res]
    assert labels == ["ntt", "intt", "basemul", "basemul_acc k=3", "basemul_acc k=5", "polymul"]
    assert all(r.median > 0 and r.q1 <= r.median <= r.q3 for r in res)
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
    assert "median tsc ticks per call" in p.stdout and "mldsa" in p.stdout
    assert "c/avx2" in p.stdout  # side by side, with the ratio
    data = json.loads(out.read_text())
    got = [(r["isa"], r["op"]) for r in data["results"]]
    assert got == [("c", "ntt"), ("c", "polymul"), ("avx2", "ntt"), ("avx2", "polymul")]
    assert data["meta"]["samples"] == 5
    assert data["meta"]["compilers"]["avx2"]
