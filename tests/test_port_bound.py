"""scripts/port_bound.py: its NTRU Prime stage tables model every op and its harness runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from nttgen.cpu import hardware_isas
from nttgen.emit.ntru_files import NTRU_PIPELINES, ntru_functions
from nttgen.interp.cost import count_ops
from nttgen.ntru_rings import get_ntru_ring

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
