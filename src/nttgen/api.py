"""The Python API: load a ring's kernels for an ISA and call them on numpy arrays.

>>> import nttgen
>>> k = nttgen.load("mlkem")                # compiles once into a cache, then loads
>>> c = k.polymul(a, b)                     # (n,) or (batch, n) integer arrays -> [0, q)
>>> ah = k.ntt(a); a2 = k.intt(ah)          # NTT domain in the ring's standard order, [0, q)
>>> k.basemul(ah, bh); k.basemul_acc(A, B)  # NTT-domain products (A, B: (k, n) -> (n,))

The high-level methods hide the Montgomery factors and the ISA's native order: ``ntt`` returns
the ring's standard order (FIPS 203/204 for ML-KEM/ML-DSA) fully reduced, ``intt(ntt(a)) == a``
mod q and ``intt(basemul(ntt(a), ntt(b))) == a*b``. :meth:`Kernel.raw` calls one C entry point
exactly as its contract states, for testing and benchmarking.
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cpu
from .build import compile_kernel, load_library
from .cross import HOST_ARCH, Target, check_vlen, isa_target
from .emit.isa import isa_class
from .emulate import EmulatedLibrary
from .errors import InputError, IsaUnavailableError, UnknownNameError
from .generate import generate, kernel_set
from .rings import Ring, custom_ring, get_ring

# flags of emulated builds (the shared-library flags less -fPIC/-shared)
BASE_EMULATED_CFLAGS = ("-std=c99", "-O3", "-Wall", "-Wextra", "-Werror")
_CTYPES = {"int16_t": ctypes.c_int16, "int32_t": ctypes.c_int32}
_NUMPY = {"int16_t": np.int16, "int32_t": np.int32}


@dataclass(frozen=True)
class _Entry:
    name: str
    fn: Any
    params: list[dict[str, Any]]


class Kernel:
    """A ring's compiled kernels for one ISA, on the host (ctypes) or, for another
    architecture's ISA, under QEMU (:mod:`nttgen.emulate`)."""

    def __init__(self, ring: Ring, isa: str, target: Target | None = None) -> None:
        self.ring = ring
        self.isa = isa
        cls = isa_class(isa)
        self.target = target or isa_target(cls)
        if cls.arch not in (None, self.target.arch):
            raise IsaUnavailableError(f"{isa} code runs on {cls.arch}, not {self.target.arch}")
        check_vlen(cls, self.target)
        files = generate(ring, isa)
        self.manifest: dict[str, Any] = json.loads(files.manifest)
        self._dtype = _NUMPY[ring.lane.c_type]
        self._entries: dict[str, _Entry] = {}
        self._emulated: EmulatedLibrary | None = None
        if self.target.native:
            self.library_path = compile_kernel(files, cls, self.target)
            self._lib = load_library(self.library_path)
        else:
            cmd = [*self.target.pick_compiler(cls.compilers), *BASE_EMULATED_CFLAGS, *cls.cflags]
            self._emulated = EmulatedLibrary(files, self.manifest, cmd, self.target)
            self.library_path = self._emulated.executable
        for name, meta in self.manifest["functions"].items():
            fn = None
            if self._emulated is None:
                fn = getattr(self._lib, meta["c_name"])
                argtypes = []
                for p in meta["params"]:
                    if p["kind"] == "size":
                        argtypes.append(ctypes.c_size_t)
                    else:
                        argtypes.append(ctypes.POINTER(_CTYPES[p["elem"]]))
                fn.argtypes = argtypes
                fn.restype = None
            self._entries[name] = _Entry(name, fn, meta["params"])
        perm = tuple(self.manifest["native_order"])
        ks = kernel_set(ring, isa)
        self._native_is_standard = ks.order.is_identity
        # native[p] = logical index stored at address p
        self._native_index = np.array([ks.order.index(p) for p in range(ring.n)], dtype=np.int64)
        del perm

    # ----------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        """The ring dimension."""
        return self.ring.n

    @property
    def q(self) -> int:
        """The modulus."""
        return self.ring.q

    def __repr__(self) -> str:
        ring = f"ring={self.ring.name} n={self.n} q={self.q}"
        return f"<nttgen.Kernel {ring} isa={self.isa}{self.target.note}>"

    # ----------------------------------------------------------------- raw calls
    def raw(self, op: str, *arrays: np.ndarray, k: int | None = None) -> list[np.ndarray]:
        """Call C entry point ``op`` once, exactly as its contract states: arrays are given for
        the parameters with role in/inout, in order, as lane-typed data in the ISA's native
        order (no range checks: the caller owns the contract). Returns the written arrays
        (roles out/inout) in parameter order."""
        if op not in self._entries:
            raise UnknownNameError(f"unknown operation {op!r}; known: {', '.join(self._entries)}")
        e = self._entries[op]
        args: list[Any] = []
        outs: list[np.ndarray] = []
        buffers: list[tuple[dict[str, Any], np.ndarray]] = []
        it = iter(arrays)
        for p in e.params:
            if p["kind"] == "size":
                if k is None:
                    raise InputError(f"{op} needs k")
                args.append(k)
                continue
            length = p["length"] * (k if p["times"] else 1)
            if p["role"] == "out":
                buf = np.zeros(length, dtype=self._dtype)
            else:
                src = np.asarray(next(it))
                buf = np.ascontiguousarray(src.reshape(-1), dtype=self._dtype).copy()
                if buf.size != length:
                    raise InputError(f"{op}: {p['name']} needs {length} elements, got {buf.size}")
            if p["role"] in ("out", "inout"):
                outs.append(buf)
            buffers.append((p, buf))
            args.append(buf.ctypes.data_as(ctypes.POINTER(_CTYPES[p["elem"]])))
        if self._emulated is not None:
            self._emulated.call(op, k or 0, buffers)
        else:
            e.fn(*args)
        return outs

    # ----------------------------------------------------------------- validation
    def _check(self, name: str, x: Any, *, extra_dims: int = 0) -> np.ndarray:
        arr = np.asarray(x)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
        want = (self.n,)
        core = arr.shape[arr.ndim - 1 - extra_dims :] if arr.ndim > extra_dims else arr.shape
        if arr.ndim not in (1 + extra_dims, 2 + extra_dims) or core[-1] != self.n:
            what = "(n,) or (batch, n)" if extra_dims == 0 else "(k, n) or (batch, k, n)"
            raise InputError(f"{name}: expected shape {what} with n = {self.n}, got {arr.shape}")
        del want
        lo, hi = -(self.q - 1), self.q - 1
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(
                f"{name}: coefficients must lie in [{lo}, {hi}] (residues mod q = {self.q}), "
                f"got values in [{int(arr.min())}, {int(arr.max())}]"
            )
        return arr.astype(np.int64)

    def _batched(self, arr: np.ndarray, core_dims: int) -> tuple[np.ndarray, bool]:
        single = arr.ndim == core_dims
        return (arr[None] if single else arr), single

    def _to_native(self, x: np.ndarray) -> np.ndarray:
        return x if self._native_is_standard else x[..., self._native_index]

    def _from_native(self, x: np.ndarray) -> np.ndarray:
        if self._native_is_standard:
            return x
        out = np.empty_like(x)
        out[..., self._native_index] = x
        return out

    # ----------------------------------------------------------------- high level
    def polymul(self, a: Any, b: Any) -> np.ndarray:
        """a*b mod (q, x^n + 1). a, b: shape (n,) or (batch, n), values in [-(q-1), q-1].
        Returns int64 coefficients in [0, q) with the same leading shape."""
        A, single = self._batched(self._check("a", a), 1)
        B, single_b = self._batched(self._check("b", b), 1)
        if A.shape != B.shape:
            raise InputError(
                f"a and b must have the same shape, got {np.shape(a)} and {np.shape(b)}"
            )
        out = np.stack([self.raw("polymul", A[i], B[i])[0] for i in range(A.shape[0])])
        out = out.astype(np.int64)
        return out[0] if single and single_b else out

    def ntt(self, a: Any) -> np.ndarray:
        """Forward NTT: (n,) or (batch, n) coefficients in [-(q-1), q-1] -> the NTT domain in the
        ring's standard order, in [0, q) (int64)."""
        A, single = self._batched(self._check("a", a), 1)
        rows = []
        for row in A:
            (x,) = self.raw("ntt", row)
            (x,) = self.raw("reduce", x)
            rows.append(self._from_native(x.astype(np.int64)))
        out = np.stack(rows)
        return out[0] if single else out

    def intt(self, a_hat: Any) -> np.ndarray:
        """Inverse NTT: NTT domain in the standard order, values in [-(q-1), q-1] -> coefficients
        in [0, q) (int64); intt(ntt(a)) == a mod q."""
        A, single = self._batched(self._check("a_hat", a_hat), 1)
        rows = []
        for row in A:
            (x,) = self.raw("intt", self._to_native(row))
            (x,) = self.raw("frommont", x)
            (x,) = self.raw("reduce", x)
            rows.append(x.astype(np.int64))
        out = np.stack(rows)
        return out[0] if single else out

    def basemul(self, a_hat: Any, b_hat: Any) -> np.ndarray:
        """NTT-domain product (standard order, values in [-(q-1), q-1]) -> standard order in
        [0, q) (int64), such that intt(basemul(ntt(a), ntt(b))) == a*b."""
        A, single = self._batched(self._check("a_hat", a_hat), 1)
        B, _ = self._batched(self._check("b_hat", b_hat), 1)
        if A.shape != B.shape:
            raise InputError(
                f"a_hat and b_hat must have the same shape, got {A.shape} and {B.shape}"
            )
        rows = []
        for x, y in zip(A, B, strict=True):
            (r,) = self.raw("basemul", self._to_native(x), self._to_native(y))
            (r,) = self.raw("tomont", r)
            (r,) = self.raw("reduce", r)
            rows.append(self._from_native(r.astype(np.int64)))
        out = np.stack(rows)
        return out[0] if single else out

    def basemul_acc(self, A: Any, B: Any) -> np.ndarray:
        """Sum of k NTT-domain products: A, B of shape (k, n) or (batch, k, n), standard order,
        values in [-(q-1), q-1] -> (n,) or (batch, n) in [0, q) (int64)."""
        X, single = self._batched(self._check("A", A, extra_dims=1), 2)
        Y, _ = self._batched(self._check("B", B, extra_dims=1), 2)
        if X.shape != Y.shape:
            raise InputError(f"A and B must have the same shape, got {X.shape} and {Y.shape}")
        k = X.shape[1]
        if k < 1:
            raise InputError("A and B must hold at least one polynomial (k >= 1)")
        rows = []
        for x, y in zip(X, Y, strict=True):
            (r,) = self.raw("basemul_acc", self._to_native(x), self._to_native(y), k=k)
            (r,) = self.raw("tomont", r)
            (r,) = self.raw("reduce", r)
            rows.append(self._from_native(r.astype(np.int64)))
        out = np.stack(rows)
        return out[0] if single else out


_LOADED: dict[tuple[Ring, str, Target], Kernel] = {}


def resolve_isa(isa: str, ring: Ring, target: Target | None = None) -> str:
    """Map ``auto`` to the best ISA this CPU runs for the ring; check that a named ISA exists,
    runs here (natively, or under QEMU for another architecture's ISA when its toolchain is
    installed) and supports the ring."""
    if isa == "auto":
        if target is not None and not target.native:
            raise InputError("isa='auto' picks among the host's ISAs: name one for another arch")
        for name in cpu.usable_isas():
            if isa_class(name).unsupported(ring.n, ring.lane) is None:
                return name
        return "c"
    cls = isa_class(isa)
    arch = (target.arch if target else None) or cls.arch or HOST_ARCH
    if cls.arch is not None and target is not None and target.arch != cls.arch:
        raise IsaUnavailableError(f"ISA {isa!r} runs on {cls.arch}, not on {target.arch}")
    if arch != HOST_ARCH:
        (target or Target(arch)).require(f"ISA {isa!r}")
    else:
        cpu.require_runs(isa, (target or isa_target(cls)).simde)
    why = cls.unsupported(ring.n, ring.lane)
    if why:
        raise IsaUnavailableError(why)
    return isa


def load(
    ring: str | Ring = "mlkem",
    isa: str = "auto",
    *,
    n: int | None = None,
    q: int | None = None,
    arch: str | None = None,
    vlen: int | None = None,
) -> Kernel:
    """Compile (once, cached) and load the kernels of a ring for an ISA.

    ``ring`` is a preset name, a custom name ``n<N>_q<Q>`` or a :class:`Ring`; alternatively give
    ``n`` and ``q`` for x^n + 1 over Z_q. ``isa="auto"`` picks the best ISA this CPU supports.
    ISAs of another architecture (``neon``: aarch64) run under QEMU; ``arch`` runs portable C
    there too (``isa="c", arch="aarch64"``) and ``vlen`` sets the emulated RISC-V vector length.
    Raises RingError / UnknownNameError / IsaUnavailableError with a message naming the rule."""
    if n is not None or q is not None:
        if n is None or q is None:
            raise InputError("give both n and q for a custom ring")
        r = custom_ring(n, q)
    elif isinstance(ring, Ring):
        r = ring
    else:
        r = get_ring(ring)
    target = None
    if arch is not None or vlen is not None:
        target = Target(arch or (isa_class(isa).arch if isa != "auto" else None) or HOST_ARCH, vlen)
    name = resolve_isa(isa, r, target)
    target = target or isa_target(isa_class(name))
    key = (r, name, target)
    if key not in _LOADED:
        _LOADED[key] = Kernel(r, name, target)
    return _LOADED[key]
