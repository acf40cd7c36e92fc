"""Machines other than the host: cross compilers and the QEMU user-mode emulator.

Kernels for another architecture (NEON on AArch64, RVV on RISC-V 64) are compiled into static
executables with a cross toolchain and run with ``qemu-<arch>`` (binfmt is not registered on the
development machine, so the emulator is always named explicitly). A :class:`Target` says which
machine, and for RISC-V which vector length the emulated core has.

Toolchains (Debian packages; ``scripts/install-toolchain.sh`` installs them):
``gcc-aarch64-linux-gnu``, ``gcc-riscv64-linux-gnu`` (with their libc), ``clang-19`` with
``lld-19``, and ``qemu-user``.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import cpu, simde
from .build_cache import cached_build
from .errors import BuildError, IsaUnavailableError

HOST_ARCH = platform.machine()

# Per architecture: the GNU triple (cross gcc, clang --target), the emulator, and flags every
# compile for it needs.
_TRIPLES = {"aarch64": "aarch64-linux-gnu", "riscv64": "riscv64-linux-gnu"}
_BASE_MARCH = {"riscv64": ("-march=rv64gc",)}  # the scalar baseline (portable C)
RVV_VLENS = (128, 256, 512, 1024)


@dataclass(frozen=True)
class Target:
    """A machine to build for and run on: an architecture (``uname -m`` spelling) and, for
    RISC-V, the emulated vector length VLEN in bits (128 unless given). ``simde``: the host
    runs x86 code it lacks the instructions for, each intrinsic translated to portable C by
    SIMDe (:mod:`nttgen.simde`; for correctness only, never timed)."""

    arch: str = HOST_ARCH
    vlen: int | None = None
    simde: bool = False

    def __post_init__(self) -> None:
        if self.arch != HOST_ARCH and self.arch not in _TRIPLES:
            known = ", ".join([HOST_ARCH, *_TRIPLES])
            raise IsaUnavailableError(f"unknown architecture {self.arch!r}: known are {known}")
        if self.vlen is not None:
            if self.arch != "riscv64":
                raise IsaUnavailableError(f"vlen applies to riscv64 only, not {self.arch}")
            if self.vlen not in RVV_VLENS:
                raise IsaUnavailableError(
                    f"vlen must be one of {', '.join(map(str, RVV_VLENS))} bits, got {self.vlen}"
                )
        if self.simde and self.arch != "x86_64":
            raise IsaUnavailableError(f"SIMDe translates x86-64 code, not {self.arch} code")

    @property
    def native(self) -> bool:
        """Whether code for this target runs directly on the host."""
        return self.arch == HOST_ARCH

    @property
    def label(self) -> str:
        """``aarch64``, ``riscv64 vlen=256``, ``x86_64 via SIMDe``."""
        if self.simde:
            return f"{self.arch} via SIMDe"
        return self.arch + (f" vlen={self.emulated_vlen}" if self.arch == "riscv64" else "")

    @property
    def note(self) -> str:
        """How code runs here, for a ``repr``: empty on the host's own instructions, else
        `` on aarch64 (QEMU)`` or `` on x86_64 via SIMDe``."""
        if self.simde:
            return f" on {self.label}"
        return "" if self.native else f" on {self.label} (QEMU)"

    @property
    def emulated_vlen(self) -> int:
        """The vector length QEMU gives the RISC-V core."""
        return self.vlen or 128

    @property
    def triple(self) -> str:
        """The GNU triple of the cross toolchain."""
        return _TRIPLES[self.arch]

    @property
    def linker(self) -> str:
        """The cross gcc, which links static executables against the target's libc."""
        return "cc" if self.native else f"{self.triple}-gcc"

    def emulator(self) -> list[str]:
        """The command prefix that runs a static executable of this target (empty if native)."""
        if self.native:
            return []
        if self.arch == "riscv64":
            cpu = f"rv64,v=true,vlen={self.emulated_vlen},vext_spec=v1.0"
            return ["qemu-riscv64", "-cpu", cpu]
        return [f"qemu-{self.arch}"]

    def missing_tools(self) -> list[str]:
        """The commands this target needs that are not on PATH."""
        if self.native:
            return []
        needed = [self.linker, self.emulator()[0]]
        return [t for t in needed if shutil.which(t) is None]

    def require(self, what: str) -> None:
        """Raise :class:`IsaUnavailableError` naming the missing tools, if any."""
        missing = self.missing_tools()
        if missing:
            raise IsaUnavailableError(
                f"{what} runs on {self.arch} under QEMU here and needs {', '.join(missing)} "
                "(run `make toolchain` or scripts/install-toolchain.sh)"
            )

    def compile_command(self, cc: str) -> list[str]:
        """The command prefix that compiles C for this target with compiler ``cc`` (a name from
        an ISA's ``compilers``): clang gets ``--target``; a host gcc is replaced by the cross
        gcc."""
        if self.native:
            return [cc]
        base = list(_BASE_MARCH.get(self.arch, ()))
        if "clang" in cc:
            return [cc, f"--target={self.triple}", *base]
        return [self.linker, *base]

    def pick_compiler(self, preferences: tuple[str, ...]) -> list[str]:
        """The first available compiler of ``preferences`` (or the cross gcc) for this target."""
        for cc in preferences:
            cmd = self.compile_command(cc)
            if shutil.which(cmd[0]):
                return cmd
        return self.compile_command(self.linker)


def target_of(arch: str | None, min_vlen: int = 128) -> Target:
    """The machine that runs code for ``arch`` (an ISA's ``arch``; None, as for portable C, is
    any machine: the host); for RISC-V code that needs a longer VLEN than 128 bits
    (``min_vlen``), a core with that VLEN."""
    if arch == "riscv64" and min_vlen > 128:
        return Target(arch, min_vlen)
    return Target(arch or HOST_ARCH)


def isa_target(cls: object) -> Target:
    """The machine that runs an ISA class's code by default (:func:`target_of` its arch and
    its ``min_vlen``); for an x86 ISA this CPU lacks, with ``NTTGEN_SIMDE=1``, the host
    running SIMDe's translation (:mod:`nttgen.simde`)."""
    target = target_of(getattr(cls, "arch", None), getattr(cls, "min_vlen", 128))
    name = getattr(cls, "name", "")
    # the cheap tests first: the CPU probe runs only when a translation is wanted
    translated = simde.enabled() and target.native and name in simde.HEADERS
    lacked = translated and name not in cpu.hardware_isas()
    return Target(target.arch, simde=True) if lacked else target


def check_vlen(cls: object, target: Target) -> None:
    """Raise :class:`IsaUnavailableError` when ``target``'s VLEN is below what the ISA's code
    needs (VLEN-specialised RVV code would silently compute on too few lanes)."""
    need = getattr(cls, "min_vlen", 128)
    if target.arch == "riscv64" and target.emulated_vlen < need:
        raise IsaUnavailableError(
            f"{getattr(cls, 'name', '?')} code needs VLEN >= {need} bits; this RISC-V core has "
            f"VLEN = {target.emulated_vlen} (use isa='rvv', which reads VLEN at run time)"
        )


def build_static(
    target: Target,
    sources: dict[str, str],
    objects_from: list[tuple[str, list[str]]],
    main_source: str,
    out_name: str,
    cache: Path,
) -> Path:
    """Compile and link a static executable for ``target``, cached by content.

    ``sources`` are file name -> text written beside each other (headers included);
    ``objects_from`` lists (C file name, full compile command prefix with flags) for the
    kernels; ``main_source`` is the C file holding ``main``, compiled with the target's gcc.
    Returns the executable's path."""
    key_parts = [target.arch, main_source, out_name]
    for name in sorted(sources):
        key_parts += [name, sources[name]]
    for name, cmd in objects_from:
        key_parts += [name, *cmd]

    def build(t: Path) -> None:
        for name, text in sources.items():
            (t / name).write_text(text)
        objects = []
        for name, cmd in objects_from:
            obj = t / (Path(name).stem + ".o")
            _check([*cmd, "-c", str(t / name), "-o", str(obj)], f"compiling {name}")
            objects.append(str(obj))
        link = [*target.compile_command(target.linker), "-O2", "-std=gnu99", "-static"]
        _check([*link, str(t / main_source), *objects, "-o", str(t / out_name)],
               f"linking {out_name}")  # fmt: skip

    return cached_build(cache, f"{out_name}-{target.arch}", key_parts, out_name, build)


def _check(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed ({' '.join(cmd[:3])} ...):\n{proc.stderr.strip()}")
