"""Shared helpers for the test suite.

Tests that need a tool this machine lacks skip with the reason; under CI (CI=true), where the
test command installs every tool, a missing tool fails the test instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from nttgen.arith import is_prime
from nttgen.rings import PRESETS, Ring, make_ring

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# x86 ISAs this CPU lacks (AVX-512 on a Zen 3) run translated by SIMDe (nttgen.simde): their
# kernels are checked like every other ISA's, and only the benchmark cannot time them
os.environ.setdefault("NTTGEN_SIMDE", "1")


def require_tool(name: str) -> str:
    """The path of a command-line tool, or skip (fail under CI) naming what is missing."""
    path = shutil.which(name)
    if path is None:
        msg = f"{name} is not installed (run `make toolchain`)"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@cache
def largest_prime(modulus: int, limit: int, exclude_modulus: int | None = None) -> int:
    """The largest prime q < limit with q = 1 mod modulus (and, if given, q != 1 mod
    exclude_modulus)."""
    q = (limit - 1) // modulus * modulus + 1
    while q > 2:
        if q < limit and is_prime(q) and (exclude_modulus is None or (q - 1) % exclude_modulus):
            return q
        q -= modulus
    raise ValueError("no such prime")


def extreme_custom_rings() -> list[Ring]:
    """Custom rings at the edges: the largest q each lane width admits (complete and
    degree-2 incomplete), the smallest and a large n."""
    rings = [
        make_ring(256, largest_prime(512, 1 << 15)),  # 16-bit lanes, complete
        make_ring(256, largest_prime(256, 1 << 15, 512)),  # 16-bit lanes, incomplete
        make_ring(256, largest_prime(512, 1 << 31)),  # 32-bit lanes, complete
        make_ring(256, largest_prime(256, 1 << 31, 512)),  # 32-bit lanes, incomplete
        make_ring(256, largest_prime(512, 1 << 27)),  # largest q with x86 Shoup products
        make_ring(1024, largest_prime(2048, 1 << 15)),  # n=1024, 16-bit, largest q
        make_ring(16, 97),  # smallest n
        make_ring(2048, 12289),  # large n
        make_ring(256, 3329, lane_bits=32, name="n256_q3329_l32"),  # small q in 32-bit lanes
    ]
    return rings


ALL_RINGS = list(PRESETS.values()) + extreme_custom_rings()

SIMD_ISAS = ("avx2", "avx512")  # the host's (x86-64)
# other architectures', run under QEMU (RVV at the VLEN each needs; test_rvv.py varies it)
EMULATED_ISAS = ("neon", "rvv", "rvv128", "rvv256")
ALL_ISAS = ("c", *SIMD_ISAS, *EMULATED_ISAS)


def require_isa(isa: str) -> None:
    """Skip when ``isa``'s code cannot run here: for an x86 ISA this CPU lacks, when SIMDe is
    missing to translate it (installable with the test extra: a failure under CI); for
    another architecture's ISA, when its cross toolchain or QEMU is missing (likewise)."""
    from nttgen import cpu
    from nttgen.cross import isa_target
    from nttgen.emit.isa import isa_class

    target = isa_target(isa_class(isa))
    if not target.native:
        missing = target.missing_tools()
        if missing:
            msg = f"{isa} needs {', '.join(missing)} (run `make toolchain`)"
            if IN_CI:
                pytest.fail(msg)
            pytest.skip(msg)
    elif isa not in cpu.usable_isas() and not target.simde:
        from nttgen import simde

        msg = f"no {isa} on this CPU (its code is still compiled and checked here)"
        if simde.enabled() and isa in simde.HEADERS and simde.include_dir() is None:
            msg = f"no {isa} on this CPU, and no SIMDe to translate it (pip install -e '.[test]')"
            if IN_CI:
                pytest.fail(msg)
        pytest.skip(msg)


def compile_command(compiler: str, isa: str) -> list[str]:
    """The command prefix that compiles ``isa``'s code with ``compiler`` (``gcc`` or
    ``clang-19``) for the ISA's architecture (a cross compiler for another one), or skips."""
    from nttgen.cross import target_of
    from nttgen.emit.isa import isa_class

    cmd = target_of(isa_class(isa).arch).compile_command(compiler)
    require_tool(cmd[0])
    return cmd


def ring_isa_cases(isas: tuple[str, ...] = ALL_ISAS) -> list:  # type: ignore[type-arg]
    """(ring, isa) pairs for every ring and every ISA of ``isas`` that supports its size."""
    from nttgen.emit.isa import isa_class

    out = []
    for isa in isas:
        for r in ALL_RINGS:
            if isa_class(isa).unsupported(r.n, r.lane) is None:
                out.append(pytest.param(r, isa, id=f"{r.name}-{isa}"))
    return out


# gcc 12, the only riscv64 gcc this distribution ships, has no RVV intrinsics: RVV code is
# built with clang only (../shared/MACHINE.md)
COMPILERS = ("gcc", "clang-19")


def compilers_for(isa: str) -> tuple[str, ...]:
    """The compilers the tests build ``isa``'s code with."""
    from nttgen.emit.isa import isa_class

    return ("clang-19",) if isa_class(isa).arch == "riscv64" else COMPILERS


def ring_id(r: Ring) -> str:
    """A readable pytest id."""
    return r.name


def host_executable(isa: str, src: Path, exe: Path) -> Path:
    """The executable to run for a host program of ``isa`` built as ``exe`` from ``src``: ``exe``
    itself where this CPU runs the ISA; else SIMDe's translation of ``src``, built beside it
    with gcc (or a skip or failure, as :func:`require_isa` decides)."""
    from nttgen import cpu, simde

    if isa == "c" or isa in cpu.hardware_isas():
        return exe
    require_isa(isa)
    translated = src.with_name(f"{src.stem}_simde.c")
    translated.write_text(simde.translate(src.read_text(), isa))
    out = exe.with_name(f"{exe.name}_simde")
    cmd = [simde.COMPILERS[0], "-std=c99", "-Wall", "-Wextra", "-Werror", *simde.cflags(isa)]
    subprocess.run([*cmd, str(translated), "-o", str(out)], check=True)
    return out
