#!/usr/bin/env python3
"""Price one kind of operation in a SIMD kernel by removing it: a *wrong but timeable* variant.

Builds the preset's kernels for an x86 ISA, then variants whose C helpers are replaced by the
identity (``nored``: every Barrett reduction; ``noshuf``: every interleave helper; ``nomont``:
every Montgomery product by a twiddle; and combinations), links all of them into one harness and
times them back to back (see :func:`nttgen.bench.run_entries`), so the differences are
what those operations cost on this machine. The variants compute wrong results: this is a
measurement tool, never a kernel.

    scripts/ablate.py RING [avx2|avx512]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import replace

from nttgen.bench import Entry, run_entries
from nttgen.emit.files import FileWriter
from nttgen.emit.isa import isa_class
from nttgen.generate import canonical_command, default_config
from nttgen.programs.kernels import build_kernels
from nttgen.rings import PRESETS

Edit = Callable[[str, str], str]
SHUFFLE_HELPERS = ("ilv16_lo", "ilv16_hi", "unzip32_lo", "unzip32_hi")


def _identity(source: str, prefix: str, helper: str, params: str, keep: str) -> str:
    """The helper ``prefix_helper(params)`` rewritten to return its argument ``keep``."""
    unused = [p.split()[-1] for p in params.split(",") if p.split()[-1] != keep]
    body = "".join(f"(void){u}; " for u in unused) + f"return {keep};"
    pattern = rf"(static inline __m\d+i {prefix}_{helper}\({params}\) \{{)(.*?)\n\}}"
    return re.sub(pattern, rf"\1\n    {body}\n}}", source, flags=re.S)


def no_barrett(source: str, prefix: str) -> str:
    """Every Barrett reduction returns its input."""
    return _identity(source, prefix, "barrett", r"__m\d+i a", "a")


def no_shuffles(source: str, prefix: str) -> str:
    """Every interleave helper returns its first input."""
    for h in SHUFFLE_HELPERS:
        source = _identity(source, prefix, h, r"__m\d+i a, __m\d+i b", "a")
    return source


def no_montmul(source: str, prefix: str) -> str:
    """Every Montgomery product by a twiddle returns its input."""
    return _identity(source, prefix, "montmul", r"__m\d+i a, __m\d+i z, __m\d+i zq", "a")


VARIANTS: dict[str, tuple[Edit, ...]] = {
    "base": (),
    "nored": (no_barrett,),
    "noshuf": (no_shuffles,),
    "noredshuf": (no_barrett, no_shuffles),
    "nomont": (no_montmul,),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ring", choices=sorted(PRESETS), help="a preset")
    parser.add_argument("isa", nargs="?", default="avx2", choices=("avx2", "avx512"))
    args = parser.parse_args()
    ring = PRESETS[args.ring]
    isa = args.isa
    cls = isa_class(isa)
    entries = []
    for name, edits in VARIANTS.items():
        ks = build_kernels(ring, default_config(ring, isa))
        prefix = f"nttgen_{ring.c_name}_{isa}_{name}"
        files = FileWriter(ks, cls, canonical_command(ring, isa), prefix=prefix).files()
        source = files.source
        for edit in edits:
            source = edit(source, prefix)
        entries.append(Entry(name, replace(files, source=source), cls.cflags, "clang-19"))
    recs = run_entries(ring, entries, ("ntt", "intt", "polymul"), samples=300, repeats=2, ks=(3,))
    for rec in recs:
        print(f"{rec['isa']:10s} {rec['op']:8s} {rec['median']:.0f}")


if __name__ == "__main__":
    main()
