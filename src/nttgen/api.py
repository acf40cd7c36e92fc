"""The Python API: load a ring's kernels for an ISA and call them on numpy arrays.

One loader and one kernel class serve every ring family (:mod:`nttgen.families`):

>>> import nttgen
>>> k = nttgen.load("mlkem")                # compiles once into a cache, then loads
>>> c = k.polymul(a, b)                     # (n,) or (batch, n) integer arrays -> [0, q)
>>> ah = k.ntt(a); a2 = k.intt(ah)          # NTT domain in the ring's standard order, [0, q)
>>> k.basemul(ah, bh); k.basemul_acc(A, B)  # NTT-domain products (A, B: (k, n) -> (n,))
>>> s = nttgen.load("sntrup761")            # NTRU Prime: no NTT, products through a pipeline
>>> r = s.polymul(a, b); r = s.polymul_small(a, t)  # centred, [-(q-1)/2, (q-1)/2]

A kernel offers the operations its ring's files define (:attr:`Kernel.ops`); asking for another
raises :class:`~nttgen.errors.UnknownNameError` naming the ones it has. The high-level methods
check every input against the ring's :attr:`~nttgen.ring_family.RingSpec.coefficient_range`
and hide the Montgomery factors and the ISA's native order: ``ntt`` returns the ring's standard
order (FIPS 203/204 for ML-KEM/ML-DSA) fully reduced, ``intt(ntt(a)) == a`` mod q and
``intt(basemul(ntt(a), ntt(b))) == a*b``. :meth:`Kernel.raw` calls one C entry point exactly as
its contract states, for testing and benchmarking.
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
from .emit.files import GeneratedFiles
from .emit.isa import isa_class
from .emulate import EmulatedLibrary
from .errors import InputError, IsaUnavailableError, UnknownNameError
from .families import family_of, get_ring
from .ring_family import RingSpec
from .rings import custom_ring

# flags of emulated builds (the shared-library flags less -fPIC/-shared)
BASE_EMULATED_CFLAGS = ("-std=c99", "-O3", "-Wall", "-Wextra", "-Werror")
_CTYPES = {"int16_t": ctypes.c_int16, "int32_t": ctypes.c_int32}
_NUMPY = {"int16_t": np.int16, "int32_t": np.int32}


@dataclass(frozen=True)
class _Entry:
    name: str
    fn: Any
    params: list[dict[str, Any]]


def _native_index(perm: list[int], size: int) -> np.ndarray:
    """native[p] = the logical index stored at address p, for the bit permutation ``perm`` of
    a manifest's ``native_order`` (address bit b holds index bit perm[b])."""
    return np.array(
        [sum(((p >> b) & 1) << dst for b, dst in enumerate(perm)) for p in range(size)],
        dtype=np.int64,
    )


class Kernel:
    """A ring's compiled kernels for one ISA, on the host (ctypes) or, for another
    architecture's ISA, under QEMU (:mod:`nttgen.emulate`).

    ``variant`` names one of the ring family's programs (an NTRU Prime pipeline; None: the
    default); ``files`` replaces the generated files (tests of program variants)."""

    def __init__(
        self,
        ring: RingSpec,
        isa: str,
        target: Target | None = None,
        *,
        variant: str | None = None,
        files: GeneratedFiles | None = None,
    ) -> None:
        self.ring = ring
        self.isa = isa
        self.variant = variant
        cls = isa_class(isa)
        self.target = target or isa_target(cls)
        if cls.arch not in (None, self.target.arch):
            raise IsaUnavailableError(f"{isa} code runs on {cls.arch}, not {self.target.arch}")
        check_vlen(cls, self.target)
        self.files = files or family_of(ring).generate(ring, isa, variant)
        self.manifest: dict[str, Any] = json.loads(self.files.manifest)
        self._entries: dict[str, _Entry] = {}
        self._emulated: EmulatedLibrary | None = None
        if self.target.native:
            self.library_path = compile_kernel(self.files, cls, self.target)
            self._lib = load_library(self.library_path)
        else:
            cmd = [*self.target.pick_compiler(cls.compilers), *BASE_EMULATED_CFLAGS, *cls.cflags]
            self._emulated = EmulatedLibrary(self.files, self.manifest, cmd, self.target)
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
        perm = self.manifest.get("native_order")
        self._native_is_standard = self.manifest.get("native_order_is_standard", True)
        self._native_index = _native_index(perm, self.n) if perm else None

    # ----------------------------------------------------------------- properties
    @property
    def n(self) -> int:
        """The number of coefficients of one ring element (deg f: n, or p for NTRU Prime)."""
        return self.ring.degree

    @property
    def q(self) -> int:
        """The modulus."""
        return self.ring.q

    @property
    def ops(self) -> tuple[str, ...]:
        """The C entry points the ring's files define, in their order (callable through
        :meth:`raw`; the high-level methods of the same names wrap them)."""
        return tuple(self._entries)

    def __repr__(self) -> str:
        ring = f"ring={self.ring.name} {self.ring.degree_text.replace(' ', '')} q={self.q}"
        variant = f" pipeline={self.variant}" if self.variant else ""
        return f"<nttgen.Kernel {ring} isa={self.isa}{variant}{self.target.note}>"

    # ----------------------------------------------------------------- raw calls
    def raw(self, op: str, *arrays: np.ndarray, k: int | None = None) -> list[np.ndarray]:
        """Call C entry point ``op`` once, exactly as its contract states: arrays are given for
        the parameters with role in/inout, in order, as lane-typed data in the ISA's native
        order (no range checks: the caller owns the contract). Returns the written arrays
        (roles out/inout) in parameter order."""
        e = self._entry(op)
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
            dtype = _NUMPY[p["elem"]]
            if p["role"] == "out":
                buf = np.zeros(length, dtype=dtype)
            else:
                src = np.asarray(next(it))
                buf = np.ascontiguousarray(src.reshape(-1), dtype=dtype).copy()
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

    def _entry(self, op: str) -> _Entry:
        """The entry point ``op``, or :class:`UnknownNameError` naming the ones the ring's
        files define."""
        if op not in self._entries:
            raise UnknownNameError(
                f"unknown operation {op!r}: {self.ring.name}'s kernels define "
                f"{', '.join(self._entries)}"
            )
        return self._entries[op]

    # ----------------------------------------------------------------- validation
    def _check(
        self,
        name: str,
        x: Any,
        *,
        extra_dims: int = 0,
        bounds: tuple[int, int] | None = None,
    ) -> np.ndarray:
        """``x`` as int64 after checking its dtype, its shape ((n,) or (batch, n); with
        ``extra_dims`` = 1, (k, n) or (batch, k, n)) and its values (within ``bounds``, by
        default the ring's coefficient range)."""
        arr = np.asarray(x)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{name}: expected an integer array, got dtype {arr.dtype}")
        core = arr.shape[arr.ndim - 1 - extra_dims :] if arr.ndim > extra_dims else arr.shape
        if arr.ndim not in (1 + extra_dims, 2 + extra_dims) or core[-1] != self.n:
            letter = self.ring.degree_text.split()[0]
            what = f"({letter},) or (batch, {letter})"
            if extra_dims:
                what = f"(k, {letter}) or (batch, k, {letter})"
            raise InputError(
                f"{name}: expected shape {what} with {self.ring.degree_text}, got {arr.shape}"
            )
        lo, hi = bounds or self.ring.coefficient_range
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(
                f"{name}: coefficients must lie in [{lo}, {hi}] (q = {self.q}), "
                f"got values in [{int(arr.min())}, {int(arr.max())}]"
            )
        return arr.astype(np.int64)

    def _batched(self, arr: np.ndarray, core_dims: int) -> tuple[np.ndarray, bool]:
        single = arr.ndim == core_dims
        return (arr[None] if single else arr), single

    def _pair(
        self, names: tuple[str, str], x: np.ndarray, y: np.ndarray, core_dims: int
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """Two checked operands as batches of equal shape, and whether both were single."""
        X, single_x = self._batched(x, core_dims)
        Y, single_y = self._batched(y, core_dims)
        if X.shape != Y.shape:
            raise InputError(
                f"{names[0]} and {names[1]} must have the same shape, got {x.shape} and {y.shape}"
            )
        return X, Y, single_x and single_y

    def _to_native(self, x: np.ndarray) -> np.ndarray:
        if self._native_is_standard or self._native_index is None:
            return x
        return x[..., self._native_index]

    def _from_native(self, x: np.ndarray) -> np.ndarray:
        if self._native_is_standard or self._native_index is None:
            return x
        out = np.empty_like(x)
        out[..., self._native_index] = x
        return out

    # ----------------------------------------------------------------- every family
    def polymul(self, a: Any, b: Any) -> np.ndarray:
        """a*b mod (q, f). a, b: shape (n,) or (batch, n) (n = deg f), values in the ring's
        :attr:`~nttgen.ring_family.RingSpec.coefficient_range`. Returns int64 coefficients in
        its :attr:`~nttgen.ring_family.RingSpec.output_range` ([0, q) for x^n + 1, centred
        for NTRU Prime) with the same leading shape."""
        self._entry("polymul")
        A, B, single = self._pair(("a", "b"), self._check("a", a), self._check("b", b), 1)
        out = np.stack([self.raw("polymul", x, y)[0] for x, y in zip(A, B, strict=True)])
        out = out.astype(np.int64)
        return out[0] if single else out

    # ----------------------------------------------------------------- NTRU Prime
    def polymul_small(self, a: Any, s: Any) -> np.ndarray:
        """a*s mod (q, f) for s with coefficients in {-1, 0, 1} (the R_q x small product of
        sntrup761's encapsulation); otherwise as :meth:`polymul`."""
        self._entry("polymul_small")
        x = self._check("a", a)
        y = self._check("s", s, bounds=(-1, 1))
        A, S, single = self._pair(("a", "s"), x, y, 1)
        out = np.stack([self.raw("polymul_small", u, v)[0] for u, v in zip(A, S, strict=True)])
        out = out.astype(np.int64)
        return out[0] if single else out

    # ----------------------------------------------------------------- NTT domain
    def ntt(self, a: Any) -> np.ndarray:
        """Forward NTT: (n,) or (batch, n) coefficients in [-(q-1), q-1] -> the NTT domain in the
        ring's standard order, in [0, q) (int64)."""
        self._entry("ntt")
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
        self._entry("intt")
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
        self._entry("basemul")
        x, y = self._check("a_hat", a_hat), self._check("b_hat", b_hat)
        A, B, single = self._pair(("a_hat", "b_hat"), x, y, 1)
        rows = []
        for u, v in zip(A, B, strict=True):
            (r,) = self.raw("basemul", self._to_native(u), self._to_native(v))
            (r,) = self.raw("tomont", r)
            (r,) = self.raw("reduce", r)
            rows.append(self._from_native(r.astype(np.int64)))
        out = np.stack(rows)
        return out[0] if single else out

    def basemul_acc(self, A: Any, B: Any) -> np.ndarray:
        """Sum of k NTT-domain products: A, B of shape (k, n) or (batch, k, n), standard order,
        values in [-(q-1), q-1] -> (n,) or (batch, n) in [0, q) (int64)."""
        self._entry("basemul_acc")
        x = self._check("A", A, extra_dims=1)
        y = self._check("B", B, extra_dims=1)
        X, Y, single = self._pair(("A", "B"), x, y, 2)
        k = X.shape[1]
        if k < 1:
            raise InputError("A and B must hold at least one polynomial (k >= 1)")
        rows = []
        for u, v in zip(X, Y, strict=True):
            (r,) = self.raw("basemul_acc", self._to_native(u), self._to_native(v), k=k)
            (r,) = self.raw("tomont", r)
            (r,) = self.raw("reduce", r)
            rows.append(self._from_native(r.astype(np.int64)))
        out = np.stack(rows)
        return out[0] if single else out


_LOADED: dict[tuple[RingSpec, str, Target, str | None], Kernel] = {}


def resolve_isa(isa: str, ring: RingSpec, target: Target | None = None) -> str:
    """Map ``auto`` to the best ISA this CPU runs for the ring; check that a named ISA exists,
    runs here (natively, or under QEMU for another architecture's ISA when its toolchain is
    installed) and has code for the ring."""
    fam = family_of(ring)
    if isa == "auto":
        if target is not None and not target.native:
            raise InputError("isa='auto' picks among the host's ISAs: name one for another arch")
        for name in cpu.usable_isas():
            if fam.unsupported(ring, name) is None:
                return name
        return "c"
    cls = isa_class(isa)
    arch = (target.arch if target else None) or cls.arch or HOST_ARCH
    if cls.arch is not None and target is not None and target.arch != cls.arch:
        raise IsaUnavailableError(f"ISA {isa!r} runs on {cls.arch}, not on {target.arch}")
    why = fam.unsupported(ring, isa)
    if why:
        raise IsaUnavailableError(why)
    if arch != HOST_ARCH:
        (target or Target(arch)).require(f"ISA {isa!r}")
    else:
        cpu.require_runs(isa, (target or isa_target(cls)).simde)
    return isa


def load(
    ring: str | RingSpec = "mlkem",
    isa: str = "auto",
    *,
    n: int | None = None,
    q: int | None = None,
    arch: str | None = None,
    vlen: int | None = None,
    pipeline: str | None = None,
) -> Kernel:
    """Compile (once, cached) and load the kernels of a ring of any family for an ISA.

    ``ring`` is a preset name (``mlkem``, ``sntrup761``, a scheme alias such as ``falcon512``),
    a custom name (``n<N>_q<Q>``, ``p<P>_q<Q>``) or a ring object; alternatively give ``n`` and
    ``q`` for x^n + 1 over Z_q. ``isa="auto"`` picks the best ISA this CPU runs that has code
    for the ring. ISAs of another architecture (``neon``: aarch64) run under QEMU; ``arch``
    runs portable C there too (``isa="c", arch="aarch64"``) and ``vlen`` sets the emulated
    RISC-V vector length. ``pipeline`` picks an NTRU Prime ring's multiplication pipeline
    (default Good–Rader–Bruun). Raises RingError / UnknownNameError / IsaUnavailableError /
    InputError with a message naming the rule."""
    if n is not None or q is not None:
        if n is None or q is None:
            raise InputError("give both n and q for a custom ring")
        r: RingSpec = custom_ring(n, q)
    elif isinstance(ring, str):
        r = get_ring(ring)
    else:
        family_of(ring)  # a ring object of a registered family
        r = ring
    family_of(r).check_variant(r, pipeline)
    if not isinstance(isa, str):
        raise InputError(f"isa must be an ISA name such as 'avx2' or 'auto', not {isa!r}")
    isa = isa.lower()  # names are read in any case, like ring names
    target = None
    if arch is not None or vlen is not None:
        target = Target(arch or (isa_class(isa).arch if isa != "auto" else None) or HOST_ARCH, vlen)
    name = resolve_isa(isa, r, target)
    target = target or isa_target(isa_class(name))
    key = (r, name, target, pipeline)
    if key not in _LOADED:
        _LOADED[key] = Kernel(r, name, target, variant=pipeline)
    return _LOADED[key]
