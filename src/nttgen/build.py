"""Compile generated C into a shared library, cached by content, and load it with ctypes.

The cache key covers the generated source, the compiler and its flags, so a stale library is
never loaded. The cache lives in ``$NTTGEN_CACHE`` (default ``~/.cache/nttgen``); the compiler
is ``$CC`` or the first available of the ISA backend's preferred compilers.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .cross import Target
from .emit.files import GeneratedFiles
from .emit.isa.base import Isa
from .errors import BuildError

BASE_CFLAGS = ("-std=c99", "-O3", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror")


def cache_dir() -> Path:
    """Where compiled libraries are kept."""
    env = os.environ.get("NTTGEN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "nttgen"


PREFERRED_COMPILERS = ("cc", "gcc", "clang-19", "clang")


def compiler(preferences: tuple[str, ...] = PREFERRED_COMPILERS) -> str:
    """The C compiler to use: ``$CC`` if set, else the first of ``preferences`` on PATH (each
    ISA backend names the compilers that build its code best)."""
    env = os.environ.get("CC")
    if env:
        return env
    for cc in preferences:
        if shutil.which(cc):
            return cc
    return "cc"


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
    flags = (*BASE_CFLAGS, *extra_flags)
    key = hashlib.sha256("\0".join((files.header, files.source, cc, *flags)).encode()).hexdigest()[
        :20
    ]
    out = cache_dir() / f"{files.stem}-{key}" / f"lib{files.stem}.so"
    if out.exists():
        return out
    out.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent.parent) as tmp:
        t = Path(tmp)
        (t / f"{files.stem}.h").write_text(files.header)
        (t / f"{files.stem}.c").write_text(files.source)
        lib = t / out.name
        proc = subprocess.run(
            [cc, *flags, str(t / f"{files.stem}.c"), "-o", str(lib)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise BuildError(f"{cc} failed on generated {files.stem}.c:\n{proc.stderr.strip()}")
        final = out.parent
        try:
            t.rename(final)
        except OSError:
            if not out.exists():  # a concurrent build won the race only if it finished
                raise
        # TemporaryDirectory cleanup must not fail on the renamed directory
        t.mkdir(exist_ok=True)
    return out


def compile_kernel(files: GeneratedFiles, isa: type[Isa], target: Target) -> Path:
    """Compile ``isa``'s generated files into a shared library for the host ``target`` (its
    path, cached): with the ISA's flags and compilers, or, for a SIMDe target, translated
    (:mod:`nttgen.simde`; gcc with SIMDe's flags)."""
    if target.simde:
        from . import simde

        name = isa.name
        translated = simde.translate_files(files, name)
        return compile_shared(translated, simde.cflags(name), cc=simde.COMPILERS[0])
    return compile_shared(files, tuple(isa.cflags), isa.compilers)


def load_library(path: Path) -> ctypes.CDLL:
    """Load a compiled library."""
    return ctypes.CDLL(str(path))
