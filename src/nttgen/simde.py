"""x86 SIMD code on a CPU that lacks its ISA, translated by SIMDe: for correctness, never timing.

The development machine may have no AVX-512 (an AMD Zen 3 does not), and no install provides
the instructions, so the AVX-512 kernels could only be compiled there, not run. SIMDe ("SIMD
Everywhere", header-only C, the ``cmeel-simde`` wheel of the test extra) implements every x86
intrinsic in portable C with the instruction's documented lane semantics. The generated source is
compiled unchanged except for its one ``#include <immintrin.h>``, which becomes SIMDe's header
with native aliases (``_mm512_mulhi_epi16`` resolves to SIMDe's function), so the program that
runs is the generated one, each intrinsic emulated.

It is opt-in, by ``NTTGEN_SIMDE=1`` (the test suite sets it): ``nttgen.load("mlkem", "avx512")``
then loads the translation where the CPU cannot run the ISA, and a :class:`~nttgen.cross.Target`
with ``simde=True`` says so (its kernels' ``repr`` ends "via SIMDe"). Nothing else changes:
``isa="auto"``, ``nttgen bench`` and dispatch see only what the CPU runs (:func:`nttgen.cpu.
usable_isas`), as an emulated intrinsic is some ten times slower than the instruction and its
timings mean nothing. Constant time is not claimed for the translation either (SIMDe's C is not
the instructions); it is checked on the native code (``tests/test_constant_time.py``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import cache
from importlib import metadata
from pathlib import Path

from .emit.files import GeneratedFiles
from .errors import BuildError, IsaUnavailableError

ENV = "NTTGEN_SIMDE"
# the include every x86 backend emits, exactly once per file
NATIVE_INCLUDE = "#include <immintrin.h>"
# SIMDe's header for each x86 ISA (each includes the narrower ones)
HEADERS = {"avx2": "simde/x86/avx2.h", "avx512": "simde/x86/avx512.h"}
# gcc only: clang-19 turns SIMDe's vectorisation hints into -Wpass-failed errors, and without
# SIMDE_NO_NATIVE its own __m128bh typedef clashes with SIMDe's alias
COMPILERS = ("gcc",)
# -O1: SIMDe's headers take gcc 8 s to compile a 2,000-line AVX-512 file at -O1 and 18 s at -O2,
# and the emulated code is only run, not timed. SIMDE_NO_NATIVE: every intrinsic in portable C
# (no mix of host instructions with emulated ones). -Wno-psabi: gcc warns that 512-bit vector
# arguments change the ABI without -mavx512f, which concerns no caller outside the file.
# NTTGEN_NO_ISA_CHECK: the translated file runs without the ISA's -m flags on purpose
_FLAGS = (
    "-O1",
    "-DSIMDE_NO_NATIVE",
    "-DSIMDE_ENABLE_NATIVE_ALIASES",
    "-DNTTGEN_NO_ISA_CHECK",
    "-Wno-psabi",
)
# Intrinsics the backends emit that SIMDe 0.8.2 does not define, each written from Intel's
# definition with ones it does (tests/test_simde.py checks that every intrinsic name the x86
# backends emit resolves)
SUPPLEMENTS = {
    # a < b lane by lane is b > a
    "_mm512_cmplt_epi32_mask": "#define _mm512_cmplt_epi32_mask(a, b) "
    "simde_mm512_cmpgt_epi32_mask((b), (a))",
}
PACKAGE = "cmeel-simde"
MIN_VERSION = (0, 8, 2)  # 0.7.4's native alias of _mm512_madd_epi16 takes the masked form's 4 args


def enabled() -> bool:
    """Whether ``NTTGEN_SIMDE`` asks for SIMDe translations of the x86 ISAs this CPU lacks."""
    return os.environ.get(ENV, "").lower() in ("1", "true", "yes")


@cache
def include_dir() -> Path | None:
    """The directory holding ``simde/x86/avx512.h`` from the ``cmeel-simde`` wheel (at least
    version 0.8.2), or None when it is not installed."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        return None
    version = tuple(int(x) for x in dist.version.split(".")[:3] if x.isdigit())
    path = Path(str(dist.locate_file("cmeel.prefix/include")))
    if version < MIN_VERSION or not (path / HEADERS["avx512"]).is_file():
        return None
    return path


def require(isa: str) -> Path:
    """SIMDe's include directory, or :class:`IsaUnavailableError` naming what to install."""
    if isa not in HEADERS:
        raise IsaUnavailableError(f"SIMDe translates x86 ISAs ({', '.join(HEADERS)}), not {isa}")
    path = include_dir()
    if path is None:
        want = ".".join(map(str, MIN_VERSION))
        raise IsaUnavailableError(
            f"{ENV}=1 runs {isa} code translated by SIMDe, which needs the Python package "
            f"{PACKAGE}>={want} (in nttgen's test extra: pip install -e '.[test]')"
        )
    return path


def cflags(isa: str) -> tuple[str, ...]:
    """The flags that compile ``isa``'s code translated by SIMDe (in place of the ISA's
    ``-m`` flags; after the library's own flags, so the ``-O1`` here wins)."""
    return (*_FLAGS, "-isystem", str(require(isa)))


def translate(source: str, isa: str) -> str:
    """``source`` (C that includes ``<immintrin.h>`` once) with that include replaced by SIMDe's
    header for ``isa`` and the :data:`SUPPLEMENTS`; every other byte is kept. Raises BuildError
    if the include is missing or repeated, as the translation would then not be the generated
    program."""
    count = source.count(NATIVE_INCLUDE)
    if count != 1:
        raise BuildError(f"expected one '{NATIVE_INCLUDE}' in {isa} code, found {count}")
    lines = [f"#include <{HEADERS[isa]}>"]
    for name, definition in SUPPLEMENTS.items():
        lines += [f"#ifndef {name}", definition, "#endif"]
    return source.replace(NATIVE_INCLUDE, "\n".join(lines))


def translate_files(files: GeneratedFiles, isa: str) -> GeneratedFiles:
    """The generated files with the source translated (:func:`translate`); the header and the
    manifest are unchanged (the header includes no intrinsics)."""
    return replace(files, source=translate(files.source, isa))
