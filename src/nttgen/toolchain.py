"""The host's build settings: which C compiler builds here and where built things are kept.

Every module that compiles C reads these two (:mod:`nttgen.build` for the kernels' shared
libraries, :mod:`nttgen.cpu` for its feature probe, :mod:`nttgen.emulate` and the benchmark
for their executables), so they sit below all of them and import nothing of nttgen. The cache
lives in ``$NTTGEN_CACHE`` (default ``~/.cache/nttgen``); the compiler is ``$CC`` or the first
available of the caller's preferred compilers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PREFERRED_COMPILERS = ("cc", "gcc", "clang-19", "clang")


def cache_dir() -> Path:
    """Where compiled libraries are kept."""
    env = os.environ.get("NTTGEN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "nttgen"


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
