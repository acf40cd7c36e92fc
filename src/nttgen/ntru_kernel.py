"""The Python API of NTRU Prime rings: compiled multipliers called on numpy arrays.

>>> from nttgen.ntru_kernel import load_ntru
>>> k = load_ntru("sntrup761", "avx2")   # compiles once into a cache, then loads
>>> r = k.polymul(a, b)                  # (p,) or (batch, p) ints in [-(q-1)/2, (q-1)/2]
>>> r = k.polymul_small(a, s)            # s with coefficients in {-1, 0, 1}

Results are the centred representatives in [-(q-1)/2, (q-1)/2], as sntrup761 stores R_q
elements. Inputs outside the contract are refused (InputError naming the range), never
multiplied. ISAs of another architecture (``neon``) run under QEMU.
"""

from __future__ import annotations

import ctypes
import json
from typing import Any

import numpy as np

from . import cpu
from .api import BASE_EMULATED_CFLAGS
from .build import compile_kernel, load_library
from .cross import HOST_ARCH, Target, check_vlen, isa_target
from .emit.isa import isa_class
from .emit.ntru_files import NTRU_ISAS, NTRU_PIPELINES, generate_ntru
from .emulate import EmulatedLibrary
from .errors import InputError, IsaUnavailableError
from .ntru_rings import NtruPrimeRing, get_ntru_ring
from .programs.ntru_config import NtruConfig


class NtruKernel:
    """The compiled multipliers of one NTRU Prime ring for one ISA (host: ctypes; another
    architecture: the QEMU server of :mod:`nttgen.emulate`)."""

    def __init__(
        self,
        ring: NtruPrimeRing,
        isa: str,
        target: Target | None = None,
        pipeline: str | None = None,
        config: NtruConfig | None = None,
    ) -> None:
        self.ring, self.isa, self.pipeline = ring, isa, pipeline
        cls = isa_class(isa)
        self.target = target or isa_target(cls)
        check_vlen(cls, self.target)
        files = generate_ntru(ring, isa, pipeline, config)
        self.files = files
        self.manifest: dict[str, Any] = json.loads(files.manifest)
        self._emulated: EmulatedLibrary | None = None
        self._fns: dict[str, Any] = {}
        if self.target.native:
            self.library_path = compile_kernel(files, cls, self.target)
            lib = load_library(self.library_path)
            for name, meta in self.manifest["functions"].items():
                fn = getattr(lib, meta["c_name"])
                fn.argtypes = [ctypes.POINTER(ctypes.c_int16)] * len(meta["params"])
                fn.restype = None
                self._fns[name] = fn
        else:
            cmd = [*self.target.pick_compiler(cls.compilers), *BASE_EMULATED_CFLAGS, *cls.cflags]
            self._emulated = EmulatedLibrary(files, self.manifest, cmd, self.target)
            self.library_path = self._emulated.executable

    def __repr__(self) -> str:
        return f"<nttgen.NtruKernel ring={self.ring.name} isa={self.isa}{self.target.note}>"

    def raw(self, op: str, *arrays: np.ndarray) -> np.ndarray:
        """Call entry point ``op`` once on int16 arrays of p elements (no range check: the
        caller owns the contract); returns r."""
        meta = self.manifest["functions"][op]
        bufs: list[tuple[dict[str, Any], np.ndarray]] = []
        it = iter(arrays)
        for p in meta["params"]:
            if p["role"] == "out":
                bufs.append((p, np.zeros(p["length"], dtype=np.int16)))
            else:
                bufs.append((p, np.ascontiguousarray(next(it), dtype=np.int16).copy()))
        if self._emulated is not None:
            self._emulated.call(op, 0, bufs)
        else:
            ptr = ctypes.POINTER(ctypes.c_int16)
            self._fns[op](*(b.ctypes.data_as(ptr) for _, b in bufs))
        return next(b for p, b in bufs if p["role"] == "out")

    def _check(self, name: str, x: Any, lo: int, hi: int) -> np.ndarray:
        arr = np.asarray(x)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
        p = self.ring.p
        if arr.ndim not in (1, 2) or arr.shape[-1] != p:
            raise InputError(
                f"{name}: expected shape (p,) or (batch, p) with p = {p}, got {arr.shape}"
            )
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(
                f"{name}: coefficients must lie in [{lo}, {hi}], got values in "
                f"[{int(arr.min())}, {int(arr.max())}]"
            )
        return arr.astype(np.int64)

    def _mul(self, op: str, a: Any, b: Any, b_range: tuple[int, int]) -> np.ndarray:
        h = self.ring.half
        x = self._check("a", a, -h, h)
        y = self._check("b", b, *b_range)
        single = x.ndim == 1 and y.ndim == 1
        x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
        if x2.shape[0] != y2.shape[0] and 1 not in (x2.shape[0], y2.shape[0]):
            raise InputError(f"a and b have different batch sizes: {x2.shape[0]} and {y2.shape[0]}")
        batch = max(x2.shape[0], y2.shape[0])
        x2 = np.broadcast_to(x2, (batch, self.ring.p))
        y2 = np.broadcast_to(y2, (batch, self.ring.p))
        out = np.stack([self.raw(op, u, v) for u, v in zip(x2, y2, strict=True)]).astype(np.int64)
        return out[0] if single else out

    def polymul(self, a: Any, b: Any) -> np.ndarray:
        """a*b mod (q, x^p - x - 1) for a, b with coefficients in [-(q-1)/2, (q-1)/2] (shape
        (p,) or (batch, p)); centred coefficients, int64."""
        h = self.ring.half
        return self._mul("polymul", a, b, (-h, h))

    def polymul_small(self, a: Any, s: Any) -> np.ndarray:
        """a*s mod (q, x^p - x - 1) for s with coefficients in {-1, 0, 1}; as :meth:`polymul`."""
        return self._mul("polymul_small", a, s, (-1, 1))


_LOADED: dict[tuple[NtruPrimeRing, str, Target, str | None], NtruKernel] = {}


def load_ntru(
    ring: str | NtruPrimeRing = "sntrup761",
    isa: str = "auto",
    *,
    vlen: int | None = None,
    pipeline: str | None = None,
) -> NtruKernel:
    """Compile (once, cached) and load an NTRU Prime ring's multipliers for an ISA.
    ``isa="auto"`` picks the best of :data:`~nttgen.emit.ntru_files.NTRU_ISAS` this CPU runs;
    ``vlen`` sets the emulated RISC-V vector length for ``isa="rvv"`` (128 by default).
    Raises IsaUnavailableError naming why an ISA cannot run here or has no NTRU Prime code,
    or why the vlen does not apply (another ISA, or not 128, 256, 512 or 1024). ``pipeline``:
    one of :data:`~nttgen.emit.ntru_files.NTRU_PIPELINES` (default Good–Rader–Bruun)."""
    r = ring if isinstance(ring, NtruPrimeRing) else get_ntru_ring(ring)
    if isa == "auto":
        isa = next((i for i in cpu.usable_isas() if i in NTRU_ISAS), "c")
    if isa not in NTRU_ISAS:
        raise IsaUnavailableError(
            f"NTRU Prime rings are generated for {', '.join(NTRU_ISAS)}, not yet for {isa}"
        )
    cls = isa_class(isa)
    target = isa_target(cls)
    if (cls.arch or HOST_ARCH) == HOST_ARCH:
        cpu.require_runs(isa, target.simde)
    if vlen is not None:  # Target refuses a vlen off RISC-V or outside 128 .. 1024
        target = Target(cls.arch or HOST_ARCH, vlen)
    if (cls.arch or HOST_ARCH) != HOST_ARCH:
        target.require(f"ISA {isa!r}")
    if pipeline is not None and pipeline not in NTRU_PIPELINES:
        raise IsaUnavailableError(
            f"unknown pipeline {pipeline!r}: choose from {', '.join(NTRU_PIPELINES)}"
        )
    key = (r, isa, target, pipeline)
    if key not in _LOADED:
        _LOADED[key] = NtruKernel(r, isa, target, pipeline)
    return _LOADED[key]
