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
from functools import cache
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


@cache
def compiler_version(cc: str) -> str:
    """``cc`` with its version, e.g. ``gcc 12.2.0`` or ``clang 19.1.7`` (from the first line of
    ``cc --version``); ``cc`` alone where that does not answer."""
    import re
    import subprocess

    try:
        text = subprocess.run(
            [cc, "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout
        first = text.splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return cc
    gnu = "gcc" in first.lower() or "Free Software Foundation" in text  # `cc` is often gcc
    kind = "clang" if "clang" in first else "gcc" if gnu else Path(cc).name
    version = re.findall(r"\b(\d+\.\d+(?:\.\d+)?)\b", first)
    return f"{kind} {version[-1]}" if version else cc
