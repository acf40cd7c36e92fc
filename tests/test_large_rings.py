"""The largest rings nttgen admits (n = 4096) are generated as loops, not straight-line code
(:data:`nttgen.generate.UNROLL_MAX_N`): their C stays a few thousand lines on every ISA, compiles
at -O3 in seconds with gcc and clang, and multiplies correctly."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import nttgen
from conftest import require_isa
from nttgen.cross import isa_target
from nttgen.emit.isa import ISAS, isa_class
from nttgen.generate import UNROLL_MAX_N, default_config, generate
from nttgen.reference import schoolbook
from nttgen.rings import MAX_N, Ring, custom_ring

# q = 12289 = 3 * 2^12 + 1 admits a depth-12 NTT of x^4096 + 1 in 16-bit lanes; the same q in
# 32-bit lanes is the other lane width
LARGE = {16: custom_ring(MAX_N, 12289), 32: custom_ring(MAX_N, 12289, lane_bits=32)}
COMPILE_LIMIT_S = 60.0
MAX_SOURCE_LINES = 10_000  # the twiddle tables are most of it; unrolled, this was 118,000


def _compile_seconds(cmd: list[str], files: nttgen.GeneratedFiles, where: Path) -> float:
    (where / f"{files.stem}.h").write_text(files.header)
    source = where / f"{files.stem}.c"
    source.write_text(files.source)
    start = time.monotonic()
    proc = subprocess.run(
        [*cmd, "-O3", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(source),
         "-o", str(where / "kernel.o")],
        capture_output=True, text=True, check=False, timeout=10 * COMPILE_LIMIT_S,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return time.monotonic() - start


def test_the_largest_rings_keep_their_loops() -> None:
    assert MAX_N > UNROLL_MAX_N
    for ring in LARGE.values():
        for isa in ISAS:
            config = default_config(ring, isa)
            assert not config.unroll and not config.unroll_products, (ring.name, isa)


@pytest.mark.parametrize("lane_bits", [16, 32])
@pytest.mark.parametrize("cc", ["gcc", "clang-19"])
def test_n4096_compiles_in_seconds_on_avx2(lane_bits: int, cc: str, tmp_path: Path) -> None:
    """At both lane widths, with gcc and clang at -O3 (unrolled, clang-19 had not finished
    compiling the 8.6 MB file after an hour)."""
    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (make toolchain installs it)")
    files = generate(LARGE[lane_bits], "avx2")
    assert files.source.count("\n") < MAX_SOURCE_LINES
    seconds = _compile_seconds([cc, *isa_class("avx2").cflags], files, tmp_path)
    assert seconds < COMPILE_LIMIT_S, f"{cc} took {seconds:.0f} s"


@pytest.mark.parametrize("lane_bits", [16, 32])
@pytest.mark.parametrize("isa", [i for i in ISAS if i != "avx2"])
def test_n4096_compiles_in_seconds_on_every_isa(isa: str, lane_bits: int, tmp_path: Path) -> None:
    """Every other ISA, with the first compiler it is built with for its target."""
    ring = LARGE[lane_bits]
    if isa_class(isa).unsupported(ring.n, ring.lane):
        pytest.skip(isa_class(isa).unsupported(ring.n, ring.lane) or "")
    cls = isa_class(isa)
    target = isa_target(cls)
    files = generate(ring, isa)
    assert files.source.count("\n") < MAX_SOURCE_LINES
    cmd = [*target.pick_compiler(cls.compilers), *cls.cflags]
    seconds = _compile_seconds(cmd, files, tmp_path)
    assert seconds < COMPILE_LIMIT_S, f"{cmd[0]} took {seconds:.0f} s"


@pytest.mark.parametrize("lane_bits", [16, 32])
@pytest.mark.parametrize("isa", list(ISAS))
def test_n4096_multiplies_correctly(isa: str, lane_bits: int) -> None:
    """The loops compute the product on every ISA (natively, through SIMDe or under QEMU):
    random and extreme inputs against the schoolbook."""
    require_isa(isa)
    ring: Ring = LARGE[lane_bits]
    if isa_class(isa).unsupported(ring.n, ring.lane):
        pytest.skip(isa_class(isa).unsupported(ring.n, ring.lane) or "")
    k = nttgen.load(ring, isa)
    rng = np.random.default_rng(lane_bits)
    q, n = ring.q, ring.n
    a = np.stack([rng.integers(0, q, n), np.full(n, q - 1), np.full(n, q // 2)])
    b = np.stack([rng.integers(0, q, n), np.full(n, q - 1), rng.integers(0, q, n)])
    got = k.polymul(a, b)
    for i in range(len(a)):
        assert np.array_equal(got[i] % q, schoolbook(a[i], b[i], q) % q), i
