"""scripts/port_bound.py: its uop bounds model every op of the kernels they bound, and its
NTRU Prime stage harness runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from conftest import require_tool
from nttgen.bench.probes import time_probes
from nttgen.bench.report import medians_by_kernel
from nttgen.cpu import hardware_isas
from nttgen.emit.ntru_files import NTRU_PIPELINES, ntru_functions
from nttgen.generate import kernel_set
from nttgen.interp.cost import OP_WEIGHTS, count_ops
from nttgen.ntru_rings import get_ntru_ring
from nttgen.rings import PRESETS

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "port_bound.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("port_bound", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("pipeline", NTRU_PIPELINES)
@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_every_ntru_op_has_a_uop_count(isa: str, pipeline: str) -> None:
    """An op kind the uop model does not know would drop out of the bounds unseen."""
    pb = load_script()
    fs = ntru_functions(get_ntru_ring("sntrup761"), isa, pipeline)
    kinds = set()
    for fn in fs.functions.values():
        kinds |= set(count_ops(fn, {}))
    unknown = kinds - set(pb.NTRU_VEC_UOPS) - pb.NOT_VECTOR_WORK
    assert not unknown, f"no uop count for {sorted(unknown)}"
    assert set(pb.NTRU_MULS) <= set(pb.NTRU_VEC_UOPS)
    assert all(pb.NTRU_MULS[k] <= pb.NTRU_VEC_UOPS[k] for k in pb.NTRU_MULS)


@pytest.mark.parametrize("ring", ["mlkem", "kyber-r1", "newhope512", "newhope1024"])
@pytest.mark.parametrize("isa", ["avx2", "avx512"])
def test_every_op_of_the_16_bit_kernels_has_a_uop_count(isa: str, ring: str) -> None:
    """The 'uops' bound of the x^n + 1 kernels: no op kind left out, and the bound is the
    larger of the multiplier figure and the all-pipes figure."""
    pb = load_script()
    ks = kernel_set(PRESETS[ring], isa)
    for op in pb.OPS:
        counts = count_ops(ks.functions[op])
        unknown = set(counts) - set(OP_WEIGHTS) - pb.NOT_VECTOR_WORK
        assert not unknown, f"{op}: no uop count for {sorted(unknown)}"
        muls = sum(OP_WEIGHTS[k][0] * v for k, v in counts.items() if k in OP_WEIGHTS)
        uops = sum(sum(OP_WEIGHTS[k]) * v for k, v in counts.items() if k in OP_WEIGHTS)
        assert pb.uop_bound(counts, 1.0, 0.0) == muls
        assert pb.uop_bound(counts, 0.0, 1.0) == uops > muls


def test_stage_harness_times_every_stage() -> None:
    if "avx2" not in hardware_isas():
        pytest.skip("no AVX2 on this CPU: the stage harness runs native code only")
    pb = load_script()
    ticks, counts = pb.stage_ticks("sntrup761", "avx2", "good-rader-bruun", rounds=1)
    assert list(ticks) == [
        "forward (a)",
        "forward (b)",
        "base (a_hat, b_hat)",
        "inverse (c_hat)",
        "fold (c)",
        "polymul",
    ]
    assert all(t > 0 for t in ticks.values())
    assert {"forward", "base", "inverse", "fold", "polymul"} <= set(counts)


def test_measured_column_reads_runs_with_and_without_compilers(tmp_path: Path) -> None:
    """The bound scripts' measured column (``medians_by_kernel``): a run that timed several
    compilers names them in its columns (``avx2 gcc``), and the column shows the asked one's;
    a run of one compiler shows that one; aliases are dropped from the ring's name and ops
    not asked for are left out."""
    rec = lambda ring, isa, op, t: {"ring": ring, "isa": isa, "op": op, "median": t}  # noqa: E731
    both = tmp_path / "both.json"
    both.write_text(
        json.dumps(
            {
                "results": [
                    rec("newhope512 (falcon512)", "avx2 gcc", "ntt", 237.0),
                    rec("newhope512 (falcon512)", "avx2 clang-19", "ntt", 250.0),
                    rec("newhope512 (falcon512)", "avx512 clang-19", "ntt", 122.0),
                    rec("newhope512 (falcon512)", "avx2 clang-19", "basemul_acc", 140.0),
                ]
            }
        )
    )
    assert medians_by_kernel(both, {"ntt"}, "gcc") == {("newhope512", "avx2", "ntt"): 237.0}
    assert medians_by_kernel(both, {"ntt"}, "clang-19") == {
        ("newhope512", "avx2", "ntt"): 250.0,
        ("newhope512", "avx512", "ntt"): 122.0,
    }
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"results": [rec("mlkem", "avx2", "ntt", 82.0)]}))
    assert medians_by_kernel(one, {"ntt", "intt"}, "gcc") == {("mlkem", "avx2", "ntt"): 82.0}


def test_probe_programs_report_each_probe_best() -> None:
    """The probe runner both bound scripts use (``time_probes``): every probe's figure comes
    back under its (name, register kind), the best of its rounds, here two probes whose
    figures the rounds do not change and one that falls each round."""
    require_tool("gcc")
    probes = [
        "static double one(void) { return 1.5; }",
        "static double two(void) { return 0.25; }",
        "static int calls; static double falls(void) { return 10.0 - ++calls; }",
    ]
    calls = [("one", "vpaddw", "ymm"), ("two", "vpmullw", "ymm"), ("falls", "spill", "ymm")]
    got = time_probes(probes, calls, zmm=False, rounds=3)
    assert got == {("vpaddw", "ymm"): 1.5, ("vpmullw", "ymm"): 0.25, ("spill", "ymm"): 7.0}
