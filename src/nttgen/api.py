"""The Python API: load a ring's kernels for an ISA and call them on numpy arrays.

One loader and one kernel class serve every ring family (:mod:`nttgen.families`):

>>> import nttgen
>>> k = nttgen.load("mlkem")                # compiles once into a cache, then loads
>>> c = k.polymul(a, b)                     # (n,) or (batch, n) integer arrays -> [0, q)
>>> ah = k.ntt(a); a2 = k.intt(ah)          # NTT domain in the ring's standard order, [0, q)
>>> k.basemul(ah, bh); k.basemul_acc(A, B)  # NTT-domain products (A, B: (k, n) -> (n,))
>>> c = k.basemul_cache(B); k.basemul_acc_cached(A, B, c)  # the same, B's products cached
>>> s = nttgen.load("sntrup761")            # NTRU Prime: no NTT, products through a pipeline
>>> r = s.polymul(a, b); r = s.polymul_small(a, t)  # centred, [-(q-1)/2, (q-1)/2]

A kernel offers the operations its ring's files define (:attr:`Kernel.ops`); asking for another
raises :class:`~nttgen.errors.UnknownNameError` naming the ones it has. The high-level methods
check every input against the ring's :attr:`~nttgen.ring_family.RingSpec.coefficient_range`
and hide the Montgomery factors and the ISA's native order: ``ntt`` returns the ring's standard
order (FIPS 203/204 for ML-KEM/ML-DSA) fully reduced, ``intt(ntt(a)) == a`` mod q and
``intt(basemul(ntt(a), ntt(b))) == a*b``. :meth:`Kernel.raw` calls one C entry point after
checking every argument against the contract its manifest states, for testing and benchmarking.

Every method takes a single operand ((n,), or (k, n) for ``basemul_acc``) or a batch ((batch,
n), (batch, k, n)); an empty batch returns an empty (0, n) result. Every refusal is an
:class:`~nttgen.errors.NttgenError` (mostly :class:`~nttgen.errors.InputError`) naming the
argument and the rule; :func:`load` is thread-safe.
"""

from __future__ import annotations

import ctypes
import json
import sys
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cpu
from .api_arrays import check_values, integer_array, is_int
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
    def raw(self, op: str, *arrays: Any, k: int | None = None) -> list[np.ndarray]:
        """Call C entry point ``op`` once, after checking every argument against its contract
        (the manifest's ``functions[op]["params"]``), so that no call can read or write outside
        the buffers or feed a lane more than the proofs allow.

        ``arrays``: one per parameter with role in/inout, in parameter order (the ops' names are
        :attr:`ops`), lane-typed data in the ISA's native order. Each must have an integer
        dtype (any width, signed or unsigned; not bool, float or object), at least one
        dimension and exactly ``length`` elements (``length * k`` for a per-k parameter),
        read in C order (so a (k, n) block is k polynomials one after another), with every
        value in the parameter's ``in_range`` (else the C element type's range). Checked values
        are copied into fresh contiguous arrays of the C element type (int16/int32): the
        caller's arrays are never written, even for role inout. ``k``: the op's size parameter
        (e.g. the number of products of ``basemul_acc``), a Python or numpy integer >= its
        ``min``; it must be None for an op without one.

        Returns the written arrays (roles out/inout) in parameter order, of the C element type.
        Raises :class:`UnknownNameError` for an op the kernels lack and :class:`InputError`
        naming the op, the argument and the rule for anything else."""
        e = self._entry(op)
        sizes = self._size_args(e, k)
        ins = [p for p in e.params if p["kind"] != "size" and p["role"] != "out"]
        if len(arrays) != len(ins):
            names = ", ".join(p["name"] for p in ins) or "none"
            raise InputError(f"{op} takes {len(ins)} array(s) ({names}), got {len(arrays)}")
        given = iter(arrays)
        buffers: list[tuple[dict[str, Any], np.ndarray]] = []
        # every input is checked before any output buffer is allocated: a huge k must not
        # allocate memory for a call that is refused anyway
        checked = {p["name"]: self._raw_array(op, p, next(given), sizes) for p in ins}
        for p in e.params:
            if p["kind"] == "size":
                continue
            if p["role"] == "out":
                buf = np.zeros(self._raw_length(p, sizes), dtype=_NUMPY[p["elem"]])
            else:
                buf = checked[p["name"]]
            buffers.append((p, buf))
        if self._emulated is not None:
            self._emulated.call(op, sizes.get("k", 0), buffers)
        else:
            args: list[Any] = []
            bufs = iter(buffers)
            for p in e.params:
                if p["kind"] == "size":
                    args.append(sizes[p["name"]])
                else:
                    _, buf = next(bufs)
                    args.append(buf.ctypes.data_as(ctypes.POINTER(_CTYPES[p["elem"]])))
            e.fn(*args)
        return [buf for p, buf in buffers if p["role"] in ("out", "inout")]

    def _size_args(self, e: _Entry, k: Any) -> dict[str, int]:
        """The op's size parameters (``k``), checked: an integer >= the manifest's ``min`` and
        small enough that every per-k buffer fits the address space (sys.maxsize bytes)."""
        size_params = [p for p in e.params if p["kind"] == "size"]
        if not size_params:
            if k is not None:
                raise InputError(f"{e.name} takes no k (it has no size parameter), got k={k!r}")
            return {}
        sizes: dict[str, int] = {}
        for p in size_params:
            name, lo = p["name"], int(p.get("min", 1))
            if k is None:
                raise InputError(f"{e.name} needs {name}: {p.get('doc', 'an integer')}")
            if not is_int(k):
                raise InputError(
                    f"{e.name}: {name} must be an integer >= {lo}, got {type(k).__name__} {k!r}"
                )
            value = int(k)
            if value < lo:
                raise InputError(f"{e.name}: {name} must be an integer >= {lo}, got {value}")
            longest = max((q["length"] * 4 for q in e.params if q.get("times") == name), default=1)
            if value > sys.maxsize // longest:
                raise InputError(f"{e.name}: {name} = {value} is too large for memory")
            sizes[name] = value
        return sizes

    @staticmethod
    def _raw_length(p: dict[str, Any], sizes: dict[str, int]) -> int:
        """Parameter ``p``'s element count: ``length``, times its size parameter if per-k."""
        return int(p["length"]) * (sizes[p["times"]] if p.get("times") else 1)

    def _raw_array(self, op: str, p: dict[str, Any], x: Any, sizes: dict[str, int]) -> np.ndarray:
        """Argument ``x`` for array parameter ``p`` of ``op``, checked (see :meth:`raw`) and
        copied into a fresh contiguous 1-D array of the C element type."""
        what = f"{op}: {p['name']}"
        arr = integer_array(what, x)
        length = self._raw_length(p, sizes)
        if arr.ndim == 0 or arr.size != length:
            per_k = f" ({p['length']} * {p['times']} = {length})" if p.get("times") else ""
            got = "a scalar" if arr.ndim == 0 else f"{arr.size} element(s)"
            raise InputError(
                f"{what} needs {length} elements{per_k}, got shape {arr.shape} ({got})"
            )
        elem = p["elem"]
        limits = np.iinfo(_NUMPY[elem])
        declared = p.get("in_range")
        lo, hi = declared if declared else (int(limits.min), int(limits.max))
        rule = "values (the C contract)" if declared else f"values (C {elem})"
        check_values(what, p["name"], arr, lo, hi, rule)
        # the values fit the element type, so this conversion is exact
        return np.array(arr.reshape(-1), dtype=_NUMPY[elem], order="C", copy=True)

    def _entry(self, op: str) -> _Entry:
        """The entry point ``op``, or :class:`UnknownNameError` naming the ones the ring's
        files define."""
        if not isinstance(op, str) or op not in self._entries:
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
        default the ring's coefficient range). None, non-integer dtypes (bool, float, NaN,
        object, strings), other shapes and values outside the bounds raise :class:`InputError`;
        an empty batch ((0, n), (0, k, n)) passes."""
        arr = integer_array(name, x)
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
        check_values(name, name, arr, lo, hi, f"coefficients (q = {self.q})")
        return arr.astype(np.int64)  # exact: the values lie in [lo, hi]

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

    def _stack(self, rows: list[np.ndarray], single: bool) -> np.ndarray:
        """The per-row results as one int64 array: (n,) for a single operand, (batch, n)
        otherwise; an empty batch gives shape (0, n), like numpy's own batched functions."""
        out = np.stack(rows).astype(np.int64) if rows else np.zeros((0, self.n), np.int64)
        return out[0] if single else out

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
        for NTRU Prime) with the same leading shape ((0, n) for an empty batch). Raises
        :class:`InputError` naming the operand and the rule for any other dtype, shape or
        value (and :class:`UnknownNameError` where the ring's kernels lack the op)."""
        self._entry("polymul")
        A, B, single = self._pair(("a", "b"), self._check("a", a), self._check("b", b), 1)
        return self._stack(
            [self.raw("polymul", x, y)[0] for x, y in zip(A, B, strict=True)], single
        )

    # ----------------------------------------------------------------- NTRU Prime
    def polymul_small(self, a: Any, s: Any) -> np.ndarray:
        """a*s mod (q, f) for s with coefficients in {-1, 0, 1} (the R_q x small product of
        sntrup761's encapsulation); otherwise as :meth:`polymul`."""
        self._entry("polymul_small")
        x = self._check("a", a)
        y = self._check("s", s, bounds=(-1, 1))
        A, S, single = self._pair(("a", "s"), x, y, 1)
        rows = [self.raw("polymul_small", u, v)[0] for u, v in zip(A, S, strict=True)]
        return self._stack(rows, single)

    # ----------------------------------------------------------------- NTT domain
    def ntt(self, a: Any) -> np.ndarray:
        """Forward NTT: (n,) or (batch, n) coefficients in [-(q-1), q-1] -> the NTT domain in the
        ring's standard order, in [0, q) (int64)."""
        self._entry("ntt")
        A, single = self._batched(self._check("a", a), 1)
        rows = []
        for row in self._each_transformed("ntt", A):
            (x,) = self.raw("reduce", row)
            rows.append(self._from_native(x.astype(np.int64)))
        return self._stack(rows, single)

    def intt(self, a_hat: Any) -> np.ndarray:
        """Inverse NTT: NTT domain in the standard order, values in [-(q-1), q-1] -> coefficients
        in [0, q) (int64); intt(ntt(a)) == a mod q."""
        self._entry("intt")
        A, single = self._batched(self._check("a_hat", a_hat), 1)
        rows = []
        for row in self._each_transformed("intt", self._to_native(A)):
            (x,) = self.raw("frommont", row)
            (x,) = self.raw("reduce", x)
            rows.append(x.astype(np.int64))
        return self._stack(rows, single)

    def _each_transformed(self, op: str, A: np.ndarray) -> list[np.ndarray]:
        """``op`` (``ntt`` or ``intt``) of each row of the (batch, n) array ``A``, in the ISA's
        native order: one call of ``<op>_vec`` on the whole batch where the kernels have it
        (it runs the rows two at a time where that is faster), else one call per row."""
        if not len(A):
            return []
        if f"{op}_vec" in self._entries:
            (X,) = self.raw(f"{op}_vec", A, k=len(A))
            return list(X.reshape(len(A), self.n))
        return [self.raw(op, row)[0] for row in A]

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
        return self._stack(rows, single)

    def basemul_acc(self, A: Any, B: Any) -> np.ndarray:
        """Sum of k NTT-domain products: A, B of shape (k, n) or (batch, k, n), standard order,
        values in [-(q-1), q-1] -> (n,) or (batch, n) in [0, q) (int64)."""
        return self._inner_product("basemul_acc", A, B, None)

    def basemul_cache(self, B: Any) -> np.ndarray:
        """The multiplication cache of NTT-domain polynomials for :meth:`basemul_acc_cached`:
        B of shape (n,) or (k, n), standard order, values in [-(q-1), q-1] -> an int64 array
        of shape (m,) or (k, m), one row per polynomial, in this ISA's layout (m = n/2 for
        degree-2 factors, n for a complete NTT). Compute it once per B and pass it with every
        A that B meets; it is meaningful only to this kernel's :meth:`basemul_acc_cached`."""
        self._entry("basemul_cache")
        X, single = self._batched(self._check("B", B), 1)
        rows = [self.raw("basemul_cache", self._to_native(v))[0].astype(np.int64) for v in X]
        m = self._cache_length()
        out = np.stack(rows) if rows else np.zeros((0, m), np.int64)
        return out[0] if single else out

    def basemul_acc_cached(self, A: Any, B: Any, cache: Any) -> np.ndarray:
        """:meth:`basemul_acc` given B's cache (``basemul_cache(B)``, shape (k, m), or
        (batch, k, m) for batched A and B): the same result, with fewer multiplications."""
        return self._inner_product("basemul_acc_cached", A, B, cache)

    def _inner_product(self, op: str, A: Any, B: Any, cache: Any) -> np.ndarray:
        """``op`` (``basemul_acc``, or ``basemul_acc_cached`` with B's ``cache``) on checked
        operands, its result out of Montgomery form, reduced and in the standard order."""
        self._entry(op)
        x = self._check("A", A, extra_dims=1)
        y = self._check("B", B, extra_dims=1)
        X, Y, single = self._pair(("A", "B"), x, y, 2)
        k = X.shape[1]
        if k < 1:
            raise InputError("A and B must hold at least one polynomial (k >= 1)")
        caches: list[tuple[np.ndarray, ...]] = [()] * len(X)
        if op == "basemul_acc_cached":
            want = (*Y.shape[:-1], self._cache_length())
            C = integer_array("cache", cache)
            C = C[None] if single and C.ndim == 2 else C
            if C.shape != want:
                shape = want[1:] if single else want
                raise InputError(
                    f"cache: expected shape {shape} (basemul_cache of B), got {np.shape(cache)}"
                )
            caches = [(c,) for c in C]
        rows = []
        for u, v, c in zip(X, Y, caches, strict=True):
            (r,) = self.raw(op, self._to_native(u), self._to_native(v), *c, k=k)
            (r,) = self.raw("tomont", r)
            (r,) = self.raw("reduce", r)
            rows.append(self._from_native(r.astype(np.int64)))
        return self._stack(rows, single)

    def _cache_length(self) -> int:
        """Elements of one polynomial's multiplication cache (the manifest's)."""
        (p,) = [p for p in self._entry("basemul_cache").params if p["name"] == "cache"]
        return int(p["length"])


_LOADED: dict[tuple[RingSpec, str, Target, str | None], Kernel] = {}
# one lock per key: concurrent first loads of one kernel wait for a single generation and
# compilation, while loads of other kernels go on in parallel; _LOCKS_GUARD guards the dict
_LOAD_LOCKS: dict[tuple[RingSpec, str, Target, str | None], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class _DefaultRing(str):
    """The type of ``load``'s default ring name: ``load(n=..., q=...)`` must tell the default
    apart from an explicit ``"mlkem"``, which equal strings (interned, even) cannot."""

    __slots__ = ()


_DEFAULT_RING = _DefaultRing("mlkem")


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
    ring: str | RingSpec = _DEFAULT_RING,
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
    ``q`` (Python or numpy integers, not bools) for x^n + 1 over Z_q, and then no ring.
    ``isa="auto"`` picks the best ISA this CPU runs that has code for the ring. ISAs of
    another architecture (``neon``: aarch64) run under QEMU; ``arch`` runs portable C there too
    (``isa="c", arch="aarch64"``) and ``vlen`` sets the emulated RISC-V vector length.
    ``pipeline`` picks an NTRU Prime ring's multiplication pipeline (default: the ring's
    ``default_pipeline``, which ``nttgen plans`` marks).

    Thread-safe: concurrent calls for one (ring, ISA, target, pipeline) generate and compile it
    once and all return the same :class:`Kernel`. Raises RingError / UnknownNameError /
    IsaUnavailableError / InputError / CacheError (an unusable ``$NTTGEN_CACHE``) / BuildError
    with a message naming the rule."""
    if n is not None or q is not None:
        if not isinstance(ring, _DefaultRing):
            raise InputError(
                f"give either a ring ({getattr(ring, 'name', ring)!r}) or n and q for a custom "
                "ring, not both"
            )
        if n is None or q is None:
            raise InputError("give both n and q for a custom ring")
        for label, value in (("n", n), ("q", q)):
            if not is_int(value):
                raise InputError(
                    f"{label} must be an integer, got {type(value).__name__} {value!r}"
                )
        n, q = int(n), int(q)  # numpy integers are accepted, as Python ints
        r: RingSpec = custom_ring(n, q)
    elif isinstance(ring, str):
        r = get_ring(ring)
    else:
        try:
            family_of(ring)  # a ring object of a registered family
        except (KeyError, TypeError):  # TypeError: an unhashable type
            raise InputError(
                f"ring must be a ring name such as 'mlkem' or a ring object (or give n and q), "
                f"not {type(ring).__name__} {ring!r}"
            ) from None
        r = ring
    if pipeline is not None and not isinstance(pipeline, str):
        raise InputError(f"pipeline must be a pipeline name or None, not {pipeline!r}")
    family_of(r).check_variant(r, pipeline)
    if not isinstance(isa, str):
        raise InputError(f"isa must be an ISA name such as 'avx2' or 'auto', not {isa!r}")
    if arch is not None and not isinstance(arch, str):
        raise InputError(f"arch must be an architecture name such as 'aarch64', not {arch!r}")
    if vlen is not None and not is_int(vlen):
        raise InputError(f"vlen must be an integer (bits), not {vlen!r}")
    isa = isa.lower()  # names are read in any case, like ring names
    target = None
    if arch is not None or vlen is not None:
        vlen = None if vlen is None else int(vlen)
        target = Target(arch or (isa_class(isa).arch if isa != "auto" else None) or HOST_ARCH, vlen)
    name = resolve_isa(isa, r, target)
    target = target or isa_target(isa_class(name))
    key = (r, name, target, pipeline)
    kernel = _LOADED.get(key)
    if kernel is not None:
        return kernel
    with _LOCKS_GUARD:
        lock = _LOAD_LOCKS.setdefault(key, threading.Lock())
    with lock:
        kernel = _LOADED.get(key)  # loaded while this thread waited for the lock
        if kernel is None:
            kernel = Kernel(r, name, target, variant=pipeline)
            _LOADED[key] = kernel
    return kernel
