"""What this machine can run: ISA detection at run time (not compile-time guessing).

Only the portable C backend exists so far; SIMD backends register their CPU feature checks here.
"""

from __future__ import annotations

from .emit.isa import ISAS

# Preference order for isa="auto": the first usable one wins.
PREFERENCE = ("c",)


def usable_isas() -> list[str]:
    """The ISAs whose generated code this CPU and toolchain can run."""
    return [name for name in PREFERENCE if name in ISAS]


def best_isa() -> str:
    """The fastest usable ISA."""
    return usable_isas()[0]
