"""x86 ISAs this CPU lacks, run translated by SIMDe (nttgen.simde): the translation keeps the
generated program, every intrinsic the backends emit resolves, the switch is opt-in, and the
benchmark never times a translation. (The kernels themselves are checked through it by the
ISA-parametrised tests, like every other ISA's.)"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import nttgen
from conftest import SIMD_ISAS
from nttgen import cpu, simde
from nttgen.cross import Target, isa_target
from nttgen.emit.isa import isa_class
from nttgen.emit.ntru_files import NTRU_PIPELINES, generate_ntru
from nttgen.errors import BuildError, IsaUnavailableError
from nttgen.generate import generate
from nttgen.ntru_rings import NTRU_PRESETS
from nttgen.rings import PRESETS


def _lack_avx512(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this CPU one with AVX2 and no AVX-512 (as the development machine's Zen 3)."""
    monkeypatch.setattr(cpu, "cpu_features", lambda: frozenset({"avx2"}))


def test_translation_replaces_only_the_include() -> None:
    src = "int a;\n#include <immintrin.h>\nint b;\n"
    out = simde.translate(src, "avx512")
    assert out.startswith("int a;\n#include <simde/x86/avx512.h>\n")
    assert out.endswith("\nint b;\n") and "immintrin" not in out
    assert all(name in out for name in simde.SUPPLEMENTS)


@pytest.mark.parametrize("count", [0, 2])
def test_translation_refuses_a_source_it_would_not_keep(count: int) -> None:
    with pytest.raises(BuildError, match=f"expected one '#include <immintrin.h>'.*found {count}"):
        simde.translate("#include <immintrin.h>\n" * count, "avx2")


def test_every_emitted_intrinsic_resolves() -> None:
    """Each intrinsic name in the x86 C of every preset (NTT and NTRU Prime, every NTRU Prime
    pipeline, checked in or generated on demand) has a native alias in SIMDe's headers or a
    supplement, so no kernel meets an implicit declaration when translated."""
    inc = simde.require("avx512") / "simde" / "x86"
    defined = set()
    for header in inc.rglob("*.h"):
        defined |= set(re.findall(r"#\s*define\s+(_mm\w+)\(", header.read_text()))
    sources = [generate(ring, isa).source for ring in PRESETS.values() for isa in SIMD_ISAS]
    sources += [
        generate_ntru(ring, isa, pipeline).source
        for ring in NTRU_PRESETS.values()
        for isa in SIMD_ISAS
        for pipeline in NTRU_PIPELINES
    ]
    used = set()
    for src in sources:
        used |= set(re.findall(r"\b(_mm(?:256|512)?_\w+)\(", src))
    missing = sorted(used - defined - set(simde.SUPPLEMENTS))
    assert not missing, f"SIMDe does not define {missing}"
    assert set(simde.SUPPLEMENTS) <= used  # no supplement outlives its use


def test_only_x86_code_is_translated() -> None:
    with pytest.raises(IsaUnavailableError, match="SIMDe translates x86-64 code, not aarch64"):
        Target("aarch64", simde=True)
    with pytest.raises(IsaUnavailableError, match="not neon"):
        simde.require("neon")


def test_the_translation_is_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    _lack_avx512(monkeypatch)
    monkeypatch.setenv("NTTGEN_SIMDE", "0")
    assert not isa_target(isa_class("avx512")).simde
    with pytest.raises(IsaUnavailableError, match=r"needs avx512f.*NTTGEN_SIMDE=1"):
        nttgen.load("mlkem", "avx512")
    monkeypatch.setenv("NTTGEN_SIMDE", "1")
    assert isa_target(isa_class("avx512")) == Target("x86_64", simde=True)
    assert not isa_target(isa_class("avx2")).simde  # what the CPU runs stays native
    assert "avx512" not in cpu.usable_isas()  # so isa="auto" and dispatch never pick it


def test_a_translated_kernel_says_so_and_multiplies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the translation even where the CPU has AVX-512, so that this test runs the
    translated code everywhere."""
    import numpy as np

    from nttgen.api import Kernel, load
    from nttgen.ntru_rings import get_ntru_ring

    k = Kernel(get_ntru_ring("sntrup761"), "avx512", Target("x86_64", simde=True))
    assert repr(k).endswith("isa=avx512 on x86_64 via SIMDe>")
    ref = load("sntrup761", "c")
    rng = np.random.default_rng(5)
    a = rng.integers(-2295, 2296, (4, 761))
    b = np.vstack([np.full(761, 2295), np.full(761, -2295), rng.integers(-2295, 2296, (2, 761))])
    assert (k.polymul(a, b) == ref.polymul(a, b)).all()


def test_the_benchmark_never_times_a_translation() -> None:
    """Under NTTGEN_SIMDE=1 (set for the tests) a CPU without AVX-512 still refuses it."""
    if "avx512" in cpu.hardware_isas():
        assert not isa_target(isa_class("avx512")).simde  # this CPU runs it natively
        return
    args = ["bench", "--ring", "mlkem", "--op", "ntt", "--isa", "avx512", "--samples", "1"]
    p = subprocess.run(
        [sys.executable, "-m", "nttgen", *args], capture_output=True, text=True, timeout=600
    )
    assert p.returncode != 0
    assert "cannot run on this CPU" in p.stderr and "never a SIMDe translation" in p.stderr
