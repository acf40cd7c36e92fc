"""The exact evaluator: runs a kernel's IR on numpy arrays with the lanes' true semantics.

This is the executable specification every compiled kernel is compared against bit for bit.
Values are int64 arrays of shape (batch, *iterations, lanes): a static loop is evaluated for all
of its iterations at once (the bounds analysis has checked that iterations are independent), a
runtime-count loop runs sequentially. In *checked* mode every op whose contract is not to wrap
(add, sub, the Montgomery and Barrett subtractions, ...) fails with
:class:`nttgen.errors.LaneOverflowError` when the lane result differs from the mathematical one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..dsl import semantics
from ..dsl.ir import Affine, Buffer, Call, CallEach, Count, Function, LoopVar, Memory, Table, Var
from ..dsl.replay import replay
from ..errors import LaneOverflowError
from ..plan.constants import Arith

Array = np.ndarray


class Evaluator:
    """Evaluate one function over a batch of inputs held in ``memory`` (Buffer -> array)."""

    def __init__(
        self,
        fn: Function,
        arith: Arith,
        memory: dict[Buffer, Array],
        scalars: Mapping[str, int],
        *,
        checked: bool = False,
    ) -> None:
        self.fn = fn
        self.arith = arith
        self.lane = arith.lane
        self.lanes = fn.lanes
        self.memory = memory
        self.scalars = dict(scalars)
        self.checked = checked
        self.tag = ""
        self.axes: list[tuple[LoopVar, int]] = []
        self.runtime: dict[LoopVar, int] = {}
        self.vars: dict[Var, Array] = {}
        self.var_depth: dict[Var, int] = {}
        batch = next(iter(memory.values())).shape[0] if memory else 1
        self.peak = np.zeros(batch, dtype=np.int64)  # max |result| per batch row

    # ----------------------------------------------------------------- shapes
    def _align(self, x: Array) -> Array:
        """Give a value defined in an outer loop the singleton axes of the current depth."""
        depth = x.ndim - 2
        want = len(self.axes)
        if depth == want:
            return x
        return x.reshape(x.shape[:-1] + (1,) * (want - depth) + x.shape[-1:])

    def _index_array(self, index: Affine) -> Array:
        depth = len(self.axes)
        idx = np.full((1,) * depth, index.const, dtype=np.int64)
        for v, c in index.terms:
            idx = idx + c * self._counter(v)
        if index.lookup is not None:
            offsets = np.asarray(index.lookup.table.values, dtype=np.int64)
            at = self._counter(index.lookup.var)
            if at.max() >= len(offsets):
                raise ValueError(
                    f"{self.fn.name}: offsets table {index.lookup.table.name} has "
                    f"{len(offsets)} entries, read at {int(at.max())}"
                )
            idx = idx + offsets[at]
        return idx

    def _counter(self, v: LoopVar) -> Array:
        """The values of counter ``v``: a scalar for a runtime loop, else along its axis."""
        if v in self.runtime:
            return np.asarray(self.runtime[v], dtype=np.int64)
        depth = len(self.axes)
        pos = next(i for i, (w, _) in enumerate(self.axes) if w is v)
        shape = [1] * depth
        shape[pos] = self.axes[pos][1]
        return np.arange(self.axes[pos][1], dtype=np.int64).reshape(shape)

    def _finish(self, op: str, exact: Array, wide: bool = False) -> Array:
        lane = self.lane.wide if wide else self.lane
        if not wide:  # the peak is the largest lane value (wide sums are reduced right after)
            mag = np.abs(exact)
            self.peak = np.maximum(self.peak, mag.reshape(mag.shape[0], -1).max(axis=1))
        wrapped = semantics.wrap(exact, lane)
        if self.checked and not np.array_equal(wrapped, exact):
            bad = exact[wrapped != exact].flat[0]
            raise LaneOverflowError(
                f"{self.fn.name} ({self.tag}): {op} overflowed: exact result {int(bad)} does "
                f"not fit the {lane.bits}-bit lane"
            )
        return wrapped

    # ----------------------------------------------------------------- memory
    def _array(self, src: Memory) -> Array:
        if isinstance(src, Table):
            return np.asarray(src.values, dtype=np.int64)[None, :]
        return self.memory[src]

    def _lanes(self, lanes_at: tuple[int, ...] | None) -> Array:
        """The element offsets of the L lanes of an access."""
        return np.arange(self.lanes) if lanes_at is None else np.asarray(lanes_at, np.int64)

    def load(
        self,
        src: Memory,
        index: Affine,
        *,
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> Array:
        """Gather L lanes per iteration (or one element into every lane)."""
        lanes = np.zeros(self.lanes, dtype=np.int64) if broadcast else self._lanes(lanes_at)
        idx = self._index_array(index)[..., None] + lanes
        arr = self._array(src)
        if idx.size and (idx.min() < 0 or idx.max() >= arr.shape[1]):
            raise IndexError(f"{self.fn.name}: load from {src.name} out of bounds")
        return arr[:, idx]

    def store(
        self, dst: Buffer, index: Affine, value: Array, *, lanes_at: tuple[int, ...] | None = None
    ) -> None:
        """Scatter L lanes per iteration."""
        idx = self._index_array(index)[..., None] + self._lanes(lanes_at)
        arr = self.memory[dst]
        full = np.broadcast_to(self._align(value), (arr.shape[0], *idx.shape))
        if idx.size and (idx.min() < 0 or idx.max() >= arr.shape[1]):
            raise IndexError(f"{self.fn.name}: store to {dst.name} out of bounds")
        arr[:, np.broadcast_to(idx, full.shape[1:]).reshape(-1)] = full.reshape(arr.shape[0], -1)

    # ----------------------------------------------------------------- structure
    def _count(self, count: Count) -> int:
        if count.static:
            return count.const
        assert count.param is not None
        return count.trips(self.scalars[count.param.name], self.runtime)

    def loop(
        self, var: LoopVar, count: Count, run_body: Callable[[], None], *, unroll: bool = False
    ) -> None:
        """Static loops run vectorised over a new axis; runtime loops run one by one."""
        del unroll
        n = self._count(count)
        if n <= 0:
            return
        if count.static:
            self.axes.append((var, n))
            run_body()
            self.axes.pop()
        else:
            for i in range(n):
                self.runtime[var] = i
                run_body()
            del self.runtime[var]

    def var_def(self, var: Var, init: Array) -> None:
        """Declare a mutable register."""
        self.vars[var] = self._align(init)
        self.var_depth[var] = len(self.axes)

    def var_set(self, var: Var, value: Array) -> None:
        """Assign a mutable register (only at the depth it was declared at)."""
        if len(self.axes) != self.var_depth[var]:
            raise RuntimeError(f"{self.fn.name}: register {var.hint} assigned in a static loop")
        self.vars[var] = self._align(value)

    def var_get(self, var: Var) -> Array:
        """Read a mutable register."""
        return self._align(self.vars[var])

    def call(self, stmt: Call) -> None:
        """Run the callee on the caller's arrays."""
        mem: dict[Buffer, Array] = {}
        scalars: dict[str, int] = {}
        for name, arg in stmt.args:
            p = stmt.callee.param(name)
            if isinstance(p, Buffer):
                assert isinstance(arg, Buffer)
                mem[p] = self.memory[arg]
            else:
                scalars[name] = self.scalars[arg.name] if not isinstance(arg, int) else arg
        sub = Evaluator(stmt.callee, self.arith, mem, scalars, checked=self.checked)
        sub.run()
        self.peak = np.maximum(self.peak, sub.peak)  # a caller's peak includes its callees'

    def call_each(self, stmt: CallEach) -> None:
        """Run each callee on its group of polynomials of the caller's array (views, so its
        stores land in it)."""
        n = stmt.array.length
        whole = self.memory[stmt.array]
        for callee, start, _ in stmt.groups(self.scalars[stmt.count.name]):
            mem = {
                p: whole[:, (start + m) * n : (start + m + 1) * n]
                for m, p in enumerate(callee.buffers)
            }
            sub = Evaluator(callee, self.arith, mem, {}, checked=self.checked)
            sub.run()
            self.peak = np.maximum(self.peak, sub.peak)

    def run(self) -> None:
        """Evaluate the whole function body."""
        for buf in self.fn.locals:
            batch = next(iter(self.memory.values())).shape[0] if self.memory else 1
            self.memory[buf] = np.zeros((batch, buf.length), dtype=np.int64)
        replay(self.fn, self)

    # ----------------------------------------------------------------- vocabulary
    def _bin(self, a: Array, b: Array) -> tuple[Array, Array]:
        return self._align(a), self._align(b)

    def const(self, *, value: int) -> Array:
        """Broadcast constant."""
        shape = (1,) * (len(self.axes) + 1) + (self.lanes,)
        return np.full(shape, value, dtype=np.int64)

    def add(self, a: Array, b: Array) -> Array:
        """a + b."""
        return self._finish("add", semantics.add(*self._bin(a, b)))

    def sub(self, a: Array, b: Array) -> Array:
        """a - b."""
        return self._finish("sub", semantics.sub(*self._bin(a, b)))

    def mullo(self, a: Array, b: Array) -> Array:
        """lo(a*b)."""
        return semantics.mullo(*self._bin(a, b), self.lane)

    def mulhi(self, a: Array, b: Array) -> Array:
        """hi(a*b)."""
        return semantics.mulhi(*self._bin(a, b), self.lane)

    def sra(self, a: Array, *, k: int) -> Array:
        """a >> k."""
        return semantics.sra(self._align(a), k)

    def montmul(self, a: Array, z: Array, zq: Array) -> Array:
        """Montgomery product by a twisted constant."""
        a, z, zq = self._align(a), self._align(z), self._align(zq)
        return self._finish("montmul", semantics.montmul(a, z, zq, self.lane, self.arith.q))

    def shoupmul(self, a: Array, z: Array, zs: Array) -> Array:
        """Product by a constant with a precomputed quotient (Shoup)."""
        a, z, zs = self._align(a), self._align(z), self._align(zs)
        exact = semantics.shoupmul(a, z, zs, self.lane, self.arith.q, self.arith.shoup_shift)
        return self._finish("shoupmul", exact)

    def montmul_twist(self, a: Array, b: Array, bq: Array) -> Array:
        """Montgomery product by a variable given a twist (montmul's arithmetic)."""
        a, b, bq = self._align(a), self._align(b), self._align(bq)
        return self._finish("montmul_twist", semantics.montmul(a, b, bq, self.lane, self.arith.q))

    def montmul_var(self, a: Array, b: Array) -> Array:
        """Montgomery product of two variables."""
        a, b = self._bin(a, b)
        exact = semantics.montmul_var(a, b, self.lane, self.arith.q, self.arith.qinv)
        return self._finish("montmul_var", exact)

    def _wide64(self, op: str, estimate: Callable[[], Array]) -> None:
        """Where double-width lanes are 64-bit (whose int64 arithmetic wraps unseen), check
        a floating-point ``estimate`` of the exact result against the lane."""
        lane = self.lane.wide
        if self.checked and lane.bits == 64 and semantics.estimate_overflows(estimate(), lane):
            raise LaneOverflowError(
                f"{self.fn.name} ({self.tag}): {op} overflowed the {lane.bits}-bit lane"
            )

    def madd(self, a0: Array, b0: Array, a1: Array, b1: Array) -> Array:
        """a0*b0 + a1*b1 in a double-width lane."""
        a0, b0, a1, b1 = (self._align(x) for x in (a0, b0, a1, b1))
        f = lambda x: x.astype(np.float64)  # noqa: E731
        self._wide64("madd", lambda: f(a0) * f(b0) + f(a1) * f(b1))
        return self._finish("madd", semantics.madd(a0, b0, a1, b1), wide=True)

    def mulw(self, a: Array, b: Array) -> Array:
        """a*b in a double-width lane."""
        a, b = self._bin(a, b)
        return self._finish("mulw", semantics.mulw(a, b), wide=True)

    def addw(self, a: Array, b: Array) -> Array:
        """a + b of double-width values."""
        a, b = self._bin(a, b)
        self._wide64("addw", lambda: a.astype(np.float64) + b)
        return self._finish("addw", semantics.add(a, b), wide=True)

    def mredw(self, a: Array) -> Array:
        """Montgomery reduction of a double-width value."""
        a = self._align(a)
        # a - m*q, |m| < beta/2, must not wrap either
        self._wide64(
            "mredw", lambda: np.abs(a.astype(np.float64)) + self.lane.beta / 2 * self.arith.q
        )
        exact = semantics.mredw(a, self.lane, self.arith.q, self.arith.qinv)
        return self._finish("mredw", exact)

    def pair_madd(self, a: Array, b: Array) -> Array:
        """Pair sums in double-width lanes (half as many)."""
        a, b = self._bin(a, b)
        return self._finish("pair_madd", semantics.pair_madd(a, b), wide=True)

    def pair_add(self, a: Array, b: Array) -> Array:
        """a + b of pair sums."""
        return self._finish("pair_add", semantics.add(*self._bin(a, b)), wide=True)

    def pair_mred(self, even: Array, odd: Array) -> Array:
        """Two pair sums reduced and interleaved."""
        even, odd = self._bin(even, odd)
        exact = semantics.pair_mred(even, odd, self.lane, self.arith.q, self.arith.qinv)
        return self._finish("pair_mred", exact)

    def pair_swap(self, a: Array) -> Array:
        """Lanes 2i and 2i+1 exchanged."""
        return semantics.pair_swap(self._align(a))

    def pair_blend(self, a: Array, b: Array) -> Array:
        """Even lanes from a, odd from b."""
        return semantics.pair_blend(*self._bin(a, b))

    def barrett(self, a: Array) -> Array:
        """Barrett reduction."""
        ar = self.arith
        exact = semantics.barrett(self._align(a), self.lane, ar.q, ar.barrett_v, ar.barrett_k)
        return self._finish("barrett", exact)

    def barrett_coarse(self, a: Array) -> Array:
        """Barrett reduction by one rounding high product."""
        ar = self.arith
        exact = semantics.barrett_coarse(
            self._align(a), self.lane, ar.q, ar.barrett_coarse_v, ar.barrett_coarse_shift
        )
        return self._finish("barrett_coarse", exact)

    def cond_add_q(self, a: Array) -> Array:
        """a + q where a < 0."""
        return self._finish(
            "cond_add_q", semantics.cond_add_q(self._align(a), self.lane, self.arith.q)
        )

    def shuffle(self, a: Array, b: Array, *, d: int) -> tuple[Array, Array]:
        """Lane interleave."""
        a, b = self._bin(a, b)
        a, b = np.broadcast_arrays(a, b)
        return semantics.shuffle(d, a, b)

    def zip(self, a: Array, b: Array, *, w: int, g: int, inverse: int) -> tuple[Array, Array]:
        """Lane (de-)interleave inside groups of 2^g lanes."""
        a, b = self._bin(a, b)
        a, b = np.broadcast_arrays(a, b)
        return semantics.zip_lanes(w, g, inverse, a, b)


def evaluate(
    fn: Function,
    arith: Arith,
    inputs: Mapping[str, Array],
    scalars: Mapping[str, int] | None = None,
    *,
    checked: bool = False,
    peaks: list[Array] | None = None,
) -> dict[str, Array]:
    """Evaluate ``fn`` on a batch. ``inputs`` maps each buffer parameter's name to an integer
    array of shape (batch, length) (for outputs-only buffers it may be omitted). Returns every
    written buffer (role out/inout) by name, as int64 arrays of lane values. If ``peaks`` is
    a list, the largest |intermediate result| of each batch row is appended to it."""
    scalars = dict(scalars or {})
    batch = None
    memory: dict[Buffer, Array] = {}
    for buf in fn.buffers:
        length = buf.length * (scalars[buf.per_param.name] if buf.per_param else 1)
        if buf.name in inputs:
            arr = np.array(inputs[buf.name], dtype=np.int64)
            if arr.ndim == 1:
                arr = arr[None, :]
            if arr.shape[1] != length:
                raise ValueError(
                    f"{fn.name}: {buf.name} needs {length} elements, got {arr.shape[1]}"
                )
            batch = arr.shape[0] if batch is None else batch
            memory[buf] = arr
    if batch is None:
        batch = 1
    for buf in fn.buffers:
        if buf not in memory:
            if buf.role in ("in", "inout"):
                raise ValueError(f"{fn.name}: missing input {buf.name}")
            memory[buf] = np.zeros((batch, buf.length), dtype=np.int64)
    ev = Evaluator(fn, arith, memory, scalars, checked=checked)
    ev.run()
    if peaks is not None:
        peaks.append(ev.peak)
    return {b.name: memory[b] for b in fn.buffers if b.role in ("out", "inout")}
