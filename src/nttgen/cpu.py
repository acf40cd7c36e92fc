"""What this machine can run: ISA detection at run time, not compile-time guessing.

A tiny C probe, compiled once into the build cache, asks the CPU (``__builtin_cpu_supports``,
which also checks that the operating system saves the vector registers). ``NTTGEN_ISA``
restricts the choice for testing and benchmarking (a comma-separated list of ISA names).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from .emit.isa import ISAS
from .errors import IsaUnavailableError
from .toolchain import cache_dir, compiler

# Preference order for isa="auto": the first usable one wins.
PREFERENCE = ("avx512", "avx2", "c")

_PROBE = r"""
#include <stdio.h>
int main(void) {
    __builtin_cpu_init();
    printf("avx2=%d\n", __builtin_cpu_supports("avx2") != 0);
    printf("avx512f=%d\n", __builtin_cpu_supports("avx512f") != 0);
    printf("avx512bw=%d\n", __builtin_cpu_supports("avx512bw") != 0);
    printf("avx512vl=%d\n", __builtin_cpu_supports("avx512vl") != 0);
    printf("avx512vbmi=%d\n", __builtin_cpu_supports("avx512vbmi") != 0);
    printf("avx512vbmi2=%d\n", __builtin_cpu_supports("avx512vbmi2") != 0);
    return 0;
}
"""


@cache
def cpu_features() -> frozenset[str]:
    """The SIMD features this CPU and OS support (empty if no C compiler can probe them)."""
    exe = cache_dir() / "cpu_probe"
    try:
        if not exe.exists():
            exe.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory() as tmp:
                src = Path(tmp) / "probe.c"
                src.write_text(_PROBE)
                built = Path(tmp) / "probe"
                subprocess.run(
                    [compiler(), str(src), "-o", str(built)], check=True, capture_output=True
                )
                os.replace(built, exe)
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return frozenset()
    return frozenset(k for k, v in (ln.split("=") for ln in out.split()) if v == "1")


@cache
def _cpuinfo() -> dict[str, str] | None:
    """The fields of the first processor in ``/proc/cpuinfo``; None where it cannot be read."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break  # the first processor is enough
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        return None
    return fields


@cache
def cpu_model() -> str:
    """This CPU as ``/proc/cpuinfo`` names it, with its family and model numbers (which tell
    AMD's Zen generations apart where the name does not), e.g. ``AMD EPYC (family 0x19,
    model 0x1)``; the platform's processor string where there is no ``/proc/cpuinfo``."""
    import platform

    fields = _cpuinfo()
    if fields is None:
        return platform.processor() or platform.machine() or "unknown CPU"
    name = fields.get("model name") or platform.machine() or "unknown CPU"
    family, model = fields.get("cpu family"), fields.get("model")
    if family and model and family.isdigit() and model.isdigit():
        return f"{name} (family {int(family):#x}, model {int(model):#x})"
    return name


@cache
def cpu_vendor_family() -> tuple[str, int] | None:
    """This CPU's vendor as CPUID spells it (``AuthenticAMD``, ``GenuineIntel``) and its
    family (base plus extended, as ``/proc/cpuinfo`` and CPUID leaf 1 give it); None where
    ``/proc/cpuinfo`` does not say (not Linux, not x86)."""
    fields = _cpuinfo() or {}
    vendor, family = fields.get("vendor_id"), fields.get("cpu family")
    if not vendor or not family or not family.isdigit():
        return None
    return vendor, int(family)


def hardware_isas() -> list[str]:
    """The ISAs whose instructions this CPU (and OS) supports, best first."""
    feats = cpu_features()
    return [n for n in PREFERENCE if n in ISAS and set(ISAS[n].features) <= feats]


def usable_isas() -> list[str]:
    """The ISAs whose generated code this CPU runs, best first (restricted by NTTGEN_ISA)."""
    out = hardware_isas()
    forced = os.environ.get("NTTGEN_ISA")
    if forced:
        allowed = {x.strip() for x in forced.split(",")}
        out = [n for n in out if n in allowed]
    return out


def require_runs(isa: str, translated: bool = False) -> None:
    """Raise IsaUnavailableError unless this CPU runs host ISA ``isa`` (:func:`usable_isas`) or
    its code runs ``translated`` by SIMDe; the message names the features and the way to run
    it translated."""
    if translated or isa in usable_isas():
        return
    feats = ", ".join(ISAS[isa].features)
    raise IsaUnavailableError(
        f"ISA {isa!r} cannot run on this CPU (it needs {feats}; NTTGEN_SIMDE=1 runs its code "
        "translated by SIMDe, for testing, not timing)"
    )


def best_isa() -> str:
    """The fastest usable ISA (portable C if nothing else)."""
    isas = usable_isas()
    return isas[0] if isas else "c"
