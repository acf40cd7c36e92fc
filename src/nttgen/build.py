"""Compile generated C into a shared library, cached by content, and load it with ctypes.

The cache key covers the generated source, the compiler and its flags, so a stale library is
never loaded. The cache lives in ``$NTTGEN_CACHE`` (default ``~/.cache/nttgen``); the compiler
is ``$CC`` or the first available of the ISA backend's preferred compilers (both settings come
from :mod:`nttgen.toolchain` and are re-exported here).

``$NTTGEN_SANITIZE`` (``address``, ``undefined`` or both, comma-separated) compiles the shared
libraries with those sanitizers, for tests: a process that loads them must have the sanitizer's
runtime loaded first (``LD_PRELOAD=$(gcc -print-file-name=libasan.so)``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

from . import simde
from .build_cache import cached_build
from .cross import Target
from .emit.files import GeneratedFiles
from .emit.isa.base import Isa
from .errors import BuildError, SettingError
from .toolchain import PREFERRED_COMPILERS, cache_dir, compiler

__all__ = [
    "BASE_CFLAGS",
    "PREFERRED_COMPILERS",
    "cache_dir",
    "compile_kernel",
    "compile_shared",
    "compiler",
    "load_library",
    "sanitizer_flags",
]

BASE_CFLAGS = ("-std=c99", "-O3", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror")
SANITIZE_ENV = "NTTGEN_SANITIZE"
SANITIZERS = ("address", "undefined")


def sanitizer_flags() -> tuple[str, ...]:
    """The compiler flags ``$NTTGEN_SANITIZE`` asks for: () when unset or empty, else
    ``-fsanitize=<names>`` with frame pointers and debug lines (readable reports), the
    sanitizer stopping at its first report. Raises :class:`SettingError` for a name outside
    :data:`SANITIZERS`."""
    value = os.environ.get(SANITIZE_ENV, "").strip()
    if not value:
        return ()
    names = [x.strip() for x in value.split(",") if x.strip()]
    unknown = [x for x in names if x not in SANITIZERS]
    if unknown:
        raise SettingError(
            f"{SANITIZE_ENV}={value!r}: unknown sanitizer {unknown[0]!r}; use "
            f"{' or '.join(SANITIZERS)} (comma-separated for both)"
        )
    joined = ",".join(names)
    return (
        f"-fsanitize={joined}",
        f"-fno-sanitize-recover={joined}",
        "-fno-omit-frame-pointer",
        "-g",
    )


def compile_shared(
    files: GeneratedFiles,
    extra_flags: tuple[str, ...] = (),
    preferences: tuple[str, ...] = PREFERRED_COMPILERS,
    cc: str | None = None,
) -> Path:
    """Compile a generated .c/.h pair into a shared library and return its path (cached).
    The compiler is ``cc`` if given, else :func:`compiler` of ``preferences``."""
    cc = cc or compiler(preferences)
    if shutil.which(cc) is None:
        raise BuildError(f"no C compiler: {cc!r} is not on PATH (set CC)")
    # sanitizer flags are part of the cache key: an instrumented library never replaces a plain one
    flags = (*BASE_CFLAGS, *extra_flags, *sanitizer_flags())
    name = f"lib{files.stem}.so"

    def build(t: Path) -> None:
        (t / f"{files.stem}.h").write_text(files.header)
        (t / f"{files.stem}.c").write_text(files.source)
        proc = subprocess.run(
            [cc, *flags, str(t / f"{files.stem}.c"), "-o", str(t / name)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise BuildError(f"{cc} failed on generated {files.stem}.c:\n{proc.stderr.strip()}")

    key = (files.header, files.source, cc, *flags)
    return cached_build(cache_dir(), files.stem, key, name, build)


def compile_kernel(files: GeneratedFiles, isa: type[Isa], target: Target) -> Path:
    """Compile ``isa``'s generated files into a shared library for the host ``target`` (its
    path, cached): with the ISA's flags and compilers, or, for a SIMDe target, translated
    (:mod:`nttgen.simde`; gcc with SIMDe's flags)."""
    if target.simde:
        name = isa.name
        translated = simde.translate_files(files, name)
        return compile_shared(translated, simde.cflags(name), cc=simde.COMPILERS[0])
    return compile_shared(files, tuple(isa.cflags), isa.compilers)


def load_library(path: Path) -> ctypes.CDLL:
    """Load a compiled library. Raises :class:`BuildError` naming the library when the dynamic
    loader refuses it (e.g. a cache on a ``noexec`` mount)."""
    try:
        return ctypes.CDLL(str(path))
    except OSError as err:
        raise BuildError(f"cannot load the compiled library {path}: {err}") from err
