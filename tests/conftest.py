"""Shared helpers for the test suite.

Tests that need a tool this machine lacks skip with the reason; under CI (CI=true), where the
test command installs every tool, a missing tool fails the test instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from functools import cache
from pathlib import Path

import pytest

from nttgen.arith import is_prime
from nttgen.emit.files import GeneratedFiles
from nttgen.rings import PRESETS, Ring, make_ring

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# x86 ISAs this CPU lacks (AVX-512 on a Zen 3) run translated by SIMDe (nttgen.simde): their
# kernels are checked like every other ISA's, and only the benchmark cannot time them
os.environ.setdefault("NTTGEN_SIMDE", "1")
# the workers share generated kernel sets and files through the build cache (one generation
# per ring and ISA for the whole run; nttgen.build_cache.stored) instead of each making its own
os.environ.setdefault("NTTGEN_STORE_GENERATED", "1")


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


# what the generated C must compile under without a warning
STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-Wpedantic", "-Wconversion", "-Wshadow")


def compiled_object(
    compiler: str, isa: str, files: GeneratedFiles, opt: str, warnings: tuple[str, ...] = STRICT
) -> Path:
    """The object file of generated ``files`` compiled for ``isa`` by ``compiler`` (``gcc`` or
    ``clang-19``) at ``opt`` with ``warnings`` and the ISA's flags; a warning fails the test
    with the compiler's message. Each object is built once per content for every test and
    worker (nttgen.build_cache): the warning checks, the constant-time checks of the objects
    and the symbol checks read the same objects."""
    from nttgen.build import cache_dir
    from nttgen.build_cache import cached_build
    from nttgen.emit.isa import isa_class

    cmd = [*compile_command(compiler, isa), *warnings, *isa_class(isa).cflags, opt]

    def build(directory: Path) -> None:
        for name, text in files.items():
            (directory / name).write_text(text)
        src = directory / f"{files.stem}.c"
        proc = subprocess.run(
            [*cmd, "-c", str(src), "-o", str(directory / "k.o")], capture_output=True, text=True
        )
        if proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)}:\n{proc.stderr[:3000]}")

    key = [*cmd, *(part for item in files.items() for part in item)]
    return cached_build(cache_dir() / "objects", files.stem, key, "k.o", build)


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


# ------------------------------------------------------------------------- tiers
# `make test` runs everything; `make test-fast` (the inner loop) deselects the tests marked
# `slow` here: whole-object constant-time checks, valgrind, QEMU, exhaustive and z3 proofs,
# clang-format over every ring, the non-default NTRU pipelines and the other-VLEN and LMUL
# variants. What stays is every module's unit tests and every ring's portable C and host SIMD
# against the oracles. docs/testing.md says what each tier covers and what each costs.
SLOW = {
    "test_ctcheck.py::test_generated_objects_are_constant_time": "objects at five -O levels",
    "test_ctcheck_arches.py::test_generated_kernels_pass": "cross-compiled objects",
    "test_ntru_programs.py::test_objects_are_constant_time": "objects of every pipeline",
    "test_constant_time.py": "valgrind",
    "test_proofs.py::test_every_transfer_application_is_proven": "exhaustive and z3 proofs",
    "test_proofs.py::test_shoup_kernels_are_proven": "z3 proofs",
    "test_proofs.py::test_neon_shoup2_kernels_are_proven": "z3 proofs",
    "test_proofs.py::test_shipped_kernels_are_proven": "exhaustive and z3 proofs",
    "test_build_files.py": "CMake and make builds of whole ring directories",
    "test_large_rings.py": "n = 4096 generated and compiled on every ISA",
    "test_license_and_flags.py::test_the_sdist_and_the_wheel_carry_the_license": "sdist, wheel",
    "test_front_end.py::test_concurrent_first_calls_are_race_free": "ThreadSanitizer builds",
    "test_proofs.py::test_an_unsound_transfer_function_fails_the_proofs": "proofs",
    "test_proofs.py::test_worst_case_inputs": "adversarial search",
    "test_ntru_programs.py::test_every_transfer_application_is_proven": "exhaustive proofs",
    "test_semantics.py::test_montmul_by_every_table_constant_exhaustive": "exhaustive",
    "test_semantics.py::test_compiled_helpers_exhaustive": "exhaustive",
    "test_emulated.py": "QEMU",
    "test_rvv.py": "QEMU",
    "test_bench.py::test_instruction_counts_under_qemu": "QEMU",
    "test_bench.py::test_block_counts_are_single_step_counts": "QEMU",
    "test_bench.py::test_ntru_instruction_counts_under_qemu": "QEMU",
    "test_bench.py::test_bench_cli_counts_ntru_rings": "QEMU",
    "test_bench.py::test_bench_cli_counts_emulated_isas": "QEMU",
    "test_dispatch.py::test_aarch64_front_end_picks_neon": "QEMU",
    "test_dispatch.py::test_riscv_front_end_picks_by_vlen": "QEMU",
    "test_lint.py::test_generated_c_is_clang_formatted": "clang-format over generated/",
    "test_emit.py::test_clang_format_clean": "clang-format over every ring",
    "test_dispatch.py::test_front_ends_are_clang_format_clean": "clang-format",
    "test_emit.py::test_generation_is_deterministic": "every ring generated twice",
    "test_emit.py::test_parts_leave_optimised_objects_unchanged": "files compiled twice",
    "test_ntru_programs.py::test_compiled_both_ways": "program variants",
    "test_ntru_programs.py::test_compiled_base_products": "program variants",
    "test_ntru_programs.py::test_compiled_schoenhage_pipelines": "non-default pipelines",
    "test_ntru_programs.py::test_checked_in_presets_match_the_generator": "every pipeline",
    "test_properties.py::test_random_valid_rings_verify": "random rings",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out of `make test-fast` (see conftest.SLOW)")
    config.stash[_STARTED] = time.monotonic()


_STARTED = pytest.StashKey[float]()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    """The run's wall time, collection included (the tiers' budgets are wall times)."""
    if _STARTED in config.stash:
        seconds = time.monotonic() - config.stash[_STARTED]
        terminalreporter.write_line(f"wall time: {seconds:.0f} s ({seconds / 60:.1f} min)")


def _is_slow(item: pytest.Item, emulated: set[str]) -> bool:
    path = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
    name = f"{path}::{item.nodeid.split('::')[1].split('[')[0]}"
    if path in SLOW or name in SLOW:
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    isa, ring = params.get("isa"), params.get("ring")
    if isinstance(isa, str) and isa in emulated:
        return True  # runs under QEMU, or translated by SIMDe on a CPU without it
    return isinstance(ring, Ring) and not ring.preset  # the extreme custom rings


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow tier (the tests named in :data:`SLOW`, every test of an ISA that runs
    under QEMU or translated by SIMDe (an x86 ISA this CPU lacks: the fast tier keeps the
    SIMD ISAs the host runs natively), every test of an extreme custom ring) and run it first:
    the longest tests started last would leave one worker running alone at the end."""
    from nttgen.cpu import hardware_isas

    translated = set(SIMD_ISAS) - set(hardware_isas())
    emulated = {*EMULATED_ISAS, "rvv512", "rvv1024", *translated}
    slow = {id(item) for item in items if _is_slow(item, emulated)}
    for item in items:
        if id(item) in slow:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: id(item) not in slow)  # stable: each tier keeps its order
