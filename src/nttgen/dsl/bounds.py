"""The bounds (interval) interpreter: proves that no lane overflows and computes output ranges.

It interprets the IR op by op over per-lane intervals (:class:`nttgen.intervals.Bound`) using the
transfer functions of :mod:`nttgen.dsl.transfer`. Memory is tracked per element. A static loop
body is analysed once: a load joins the ranges of every element the load touches over the whole
iteration space, and the loop's stores are committed when the outermost loop ends (a strong
update, sound because each element is written by exactly one iteration and no iteration reads an
element another iteration writes; both facts are checked). A loop with a runtime trip count is
analysed to a fixpoint of its mutable registers.

The :class:`nttgen.dsl.builder.Builder` drives this interpreter live while a program runs, so the
program's reduction decisions come from the analysis; that is why it lives in the DSL, below the
builder. Replaying a finished IR through a fresh instance re-derives every range independently
(:func:`nttgen.interp.bounds.analyse`, which also re-exports the names of this module).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import BoundsError
from ..intervals import Bound
from ..plan.constants import Arith
from . import semantics, transfer
from .ir import Affine, Buffer, Call, CallEach, Count, LoopVar, Memory, Table, Var

FIXPOINT_ROUNDS = 16
WIDEN_AFTER = 3
State = tuple[dict[Var, Bound], dict[Buffer, list[tuple[int, int] | None]]]


@dataclass(frozen=True)
class Application:
    """One use of a transfer function: op, operand ranges, the range it concluded (a fact that
    :mod:`nttgen.proofs` proves)."""

    kind: str
    inputs: tuple[tuple[int, int], ...]
    output: tuple[int, int]


@dataclass
class _LoopFrame:
    """An open loop. Only the outermost frame collects the nest's stores and reads."""

    var: LoopVar
    count: Count
    pending: list[
        tuple[Buffer, Affine, tuple[int, ...], Bound, tuple[tuple[LoopVar, Count], ...]]
    ] = field(default_factory=list)
    reads: list[tuple[Buffer, Affine, tuple[int, ...], tuple[tuple[LoopVar, Count], ...]]] = field(
        default_factory=list
    )


class BoundsInterp:
    """Interval interpretation of one kernel function with L lanes per value."""

    def __init__(self, arith: Arith, lanes: int, function: str = "") -> None:
        self.arith = arith
        self.lane = arith.lane
        self.lanes = lanes
        self.function = function
        self.tag = ""
        self.memory: dict[Buffer, list[tuple[int, int] | None]] = {}
        self.frames: list[_LoopFrame] = []
        self.vars: dict[Var, Bound] = {}
        self.log: set[Application] | None = None

    # ----------------------------------------------------------------- helpers
    def _where(self) -> str:
        where = self.function
        if self.tag:
            where += f" ({self.tag})"
        return where

    def _lanewise(self, kind: str, f: Callable[..., tuple[int, int]], *bounds: Bound) -> Bound:
        # per lane (L lanes, or L/2 for pair sums) the (lo, hi) of each operand; lanes often
        # share their intervals, and f is a pure function: once per distinct one, in lane order
        columns = list(zip(*(zip(b.lo, b.hi, strict=True) for b in bounds), strict=True))
        results = {args: f(*args) for args in dict.fromkeys(columns)}
        if self.log is not None:
            self.log.update(Application(kind, args, r) for args, r in results.items())
        out = [results[args] for args in columns]
        return Bound(tuple(r[0] for r in out), tuple(r[1] for r in out))

    def _checked(self, op: str, result: Bound, wide: bool = False) -> Bound:
        lane = self.lane.wide if wide else self.lane
        if not lane.fits(result.min, result.max):
            raise BoundsError(
                f"{self._where()}: {op} can overflow: its result lies in {result}, outside "
                f"the {lane.bits}-bit lane [{lane.min}, {lane.max}]"
            )
        return result

    # ----------------------------------------------------------------- memory
    def bind_buffer(self, buf: Buffer) -> None:
        """Start tracking a buffer: inputs get their contract, outputs and locals start
        undefined (reading them before writing is an error)."""
        if buf.readonly:
            return
        init = buf.contract if buf.role == "inout" else None
        self.memory[buf] = [init] * buf.length

    def _static_stack(self) -> tuple[tuple[LoopVar, Count], ...]:
        """The static loops enclosing the current point, inside the innermost runtime loop."""
        return tuple((f.var, f.count) for f in self.frames[self._nest_start() :])

    def _nest_start(self) -> int:
        """Index of the outermost static frame inside every runtime frame."""
        start = 0
        for i, f in enumerate(self.frames):
            if not f.count.static:
                start = i + 1
        return start

    def _commit_frame(self) -> _LoopFrame | None:
        start = self._nest_start()
        return self.frames[start] if start < len(self.frames) else None

    def _iterations(
        self, index: Affine, stack: tuple[tuple[LoopVar, Count], ...]
    ) -> list[dict[LoopVar, int]]:
        runtime = {f.var for f in self.frames if not f.count.static}
        if any(v in runtime for v in index.loop_vars):
            raise BoundsError(
                f"{self._where()}: memory indexed by a runtime loop counter must be read-only input"
            )
        used = [(v, c) for v, c in stack if v in index.loop_vars]
        ranges = [range(c.const) for _, c in used]
        return [
            dict(zip((v for v, _ in used), vals, strict=True))
            for vals in itertools.product(*ranges)
        ]

    def _element_bound(self, src: Memory, i: int) -> tuple[int, int]:
        if isinstance(src, Table):
            v = src.values[i]
            return v, v
        if src.readonly:
            assert src.contract is not None
            return src.contract
        cell = self.memory[src][i]
        if cell is None:
            raise BoundsError(f"{self._where()}: reads {src.name}[{i}] before it is written")
        return cell

    def _lanes(self, lanes_at: tuple[int, ...] | None) -> tuple[int, ...]:
        """The element offsets of the L lanes of an access."""
        return tuple(range(self.lanes)) if lanes_at is None else lanes_at

    def load(
        self,
        src: Memory,
        index: Affine,
        *,
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> Bound:
        """Range of a vector load: per lane, the join over every iteration that reaches it."""
        if isinstance(src, Buffer) and src.readonly:
            assert src.contract is not None
            return Bound.uniform(*src.contract, self.lanes)
        offsets = (0,) * self.lanes if broadcast else self._lanes(lanes_at)
        frame = self._commit_frame()
        if isinstance(src, Buffer) and frame is not None:
            frame.reads.append((src, index, offsets, self._static_stack()))
        lo = [None] * self.lanes
        hi = [None] * self.lanes
        for env in self._iterations(index, self._static_stack()):
            base = index.evaluate(env)
            for k in range(self.lanes):
                a, b = self._element_bound(src, base + offsets[k])
                lo[k] = a if lo[k] is None else min(lo[k], a)
                hi[k] = b if hi[k] is None else max(hi[k], b)
        return Bound(tuple(lo), tuple(hi))  # type: ignore[arg-type]

    def store(
        self, dst: Buffer, index: Affine, value: Bound, *, lanes_at: tuple[int, ...] | None = None
    ) -> None:
        """Record a store; inside loops it is committed when the outermost loop ends."""
        if dst.readonly:
            raise BoundsError(f"{self._where()}: writes read-only input {dst.name}")
        offsets = self._lanes(lanes_at)
        frame = self._commit_frame()
        if frame is not None:
            frame.pending.append((dst, index, offsets, value, self._static_stack()))
            return
        self._iterations(index, ())  # rejects an index on a runtime counter
        self._commit(dst, index.const, offsets, value)

    def _commit(self, dst: Buffer, base: int, offsets: tuple[int, ...], value: Bound) -> None:
        cells = self.memory[dst]
        if base < 0 or base + max(offsets) >= len(cells):
            raise BoundsError(f"{self._where()}: store to {dst.name}[{base}] is out of bounds")
        for k, off in enumerate(offsets):
            cells[base + off] = (value.lo[k], value.hi[k])

    def _close_outermost(self, frame: _LoopFrame) -> None:
        writers: dict[tuple[Buffer, int], tuple[int, ...]] = {}
        for dst, index, offsets, _, stack in frame.pending:
            for env in self._full_iterations(stack):
                base = index.evaluate(env)
                key = tuple(env[v] for v, _ in stack)
                for off in offsets:
                    prev = writers.setdefault((dst, base + off), key)
                    if prev != key:
                        raise BoundsError(
                            f"{self._where()}: {dst.name}[{base + off}] is written by two loop "
                            "iterations"
                        )
        for src, index, offsets, stack in frame.reads:
            for env in self._full_iterations(stack):
                base = index.evaluate(env)
                key = tuple(env[v] for v, _ in stack)
                for off in offsets:
                    w = writers.get((src, base + off))
                    if w is not None and w[: len(key)] != key[: len(w)]:
                        raise BoundsError(
                            f"{self._where()}: {src.name}[{base + off}] is read by one loop "
                            "iteration and written by another"
                        )
        for dst, index, offsets, value, stack in frame.pending:
            for env in self._full_iterations(stack):
                self._commit(dst, index.evaluate(env), offsets, value)

    @staticmethod
    def _full_iterations(stack: tuple[tuple[LoopVar, Count], ...]) -> list[dict[LoopVar, int]]:
        ranges = [range(c.const) for _, c in stack]
        vars_ = [v for v, _ in stack]
        return [dict(zip(vars_, vals, strict=True)) for vals in itertools.product(*ranges)]

    def buffer_hull(self, buf: Buffer) -> tuple[int, int]:
        """The single range covering every element of a buffer (all must be written)."""
        if buf.readonly:
            assert buf.contract is not None
            return buf.contract
        cells = self.memory[buf]
        if any(c is None for c in cells):
            raise BoundsError(f"{self.function}: {buf.name} is used before it is fully written")
        return min(c[0] for c in cells), max(c[1] for c in cells)  # type: ignore[index]

    def call(self, stmt: Call, *, check_only: bool = False) -> None:
        """A call: the arguments must satisfy the callee's input contract; afterwards the
        arrays it writes hold its proven output ranges (``check_only``: only the check)."""
        if self.frames:
            raise BoundsError(f"{self._where()}: calls inside loops are not supported")
        callee = stmt.callee
        args = dict(stmt.args)
        for p in callee.buffers:
            arg = args[p.name]
            assert isinstance(arg, Buffer)
            if p.role in ("in", "inout"):
                lo, hi = callee.contract.inputs[p.name]
                have = self.buffer_hull(arg)
                if have[0] < lo or have[1] > hi:
                    raise BoundsError(
                        f"{self.function}: passes {arg.name} in [{have[0]}, {have[1]}] to "
                        f"{callee.name}, whose {p.name} must lie in [{lo}, {hi}]"
                    )
        if check_only:
            return
        for p in callee.buffers:
            arg = args[p.name]
            assert isinstance(arg, Buffer)
            if p.role in ("out", "inout"):
                bound = callee.output_bounds[p.name]
                self.memory[arg] = list(zip(bound.lo, bound.hi, strict=True))

    def call_each(self, stmt: CallEach) -> None:
        """Calls on the polynomials of an array of k polynomials (:class:`CallEach`): the
        array must satisfy each callee's input contracts; afterwards each position holds the
        join, over the callees' parameters, of their proven output ranges there (each
        polynomial is written by exactly one call, and every callee writes its arrays)."""
        if self.frames:
            raise BoundsError(f"{self._where()}: calls inside loops are not supported")
        arg = stmt.array
        cells: list[tuple[int, int]] | None = None
        for callee, _ in stmt.calls:
            params = callee.buffers
            self.call(Call(callee, tuple((p.name, arg) for p in params)), check_only=True)
            for p in params:
                if p.role != "inout":
                    raise BoundsError(f"{self.function}: {callee.name} must transform in place")
                bound = callee.output_bounds[p.name]
                pairs = list(zip(bound.lo, bound.hi, strict=True))
                cells = (
                    pairs
                    if cells is None
                    else [
                        (min(a[0], b[0]), max(a[1], b[1]))
                        for a, b in zip(cells, pairs, strict=True)
                    ]
                )
        assert cells is not None
        self.memory[arg] = cells

    # ----------------------------------------------------------------- loops
    def enter_loop(self, var: LoopVar, count: Count) -> None:
        """Open a loop scope (static loops only hold stores until the outermost one closes)."""
        self.frames.append(_LoopFrame(var, count))

    def exit_loop(self) -> None:
        """Close the innermost loop scope; closing the outermost static loop of a nest commits
        the nest's stores."""
        frame = self.frames.pop()
        if frame.count.static and self._nest_start() == len(self.frames):
            self._close_outermost(frame)

    def loop(
        self, var: LoopVar, count: Count, run_body: Callable[[], None], *, unroll: bool = False
    ) -> None:
        """Interpret a loop: one pass for a static count, a fixpoint of the mutable registers
        for a runtime count. Unrolling does not change the analysis."""
        del unroll
        self.enter_loop(var, count)
        if count.static:
            if count.const > 0:
                run_body()
        elif count.cap is not None:
            self.bounded(run_body, count.cap)
        else:
            self.fixpoint(run_body)
        self.exit_loop()

    def snapshot(self) -> State:
        """The mutable abstract state: registers and written memory."""
        return dict(self.vars), {b: list(c) for b, c in self.memory.items()}

    def restore(self, state: State) -> None:
        """Reset the mutable abstract state."""
        self.vars = dict(state[0])
        self.memory = {b: list(c) for b, c in state[1].items()}

    def _join_states(self, a: State, b: State, widen: bool) -> State:
        vars_: dict[Var, Bound] = {}
        for v, bb in b[0].items():
            if v not in a[0]:
                continue  # declared inside the loop body: not carried from one trip to the next
            j = a[0][v].join(bb)
            full = Bound.uniform(v.lane.min, v.lane.max, len(bb.lo))
            vars_[v] = full if widen and j != a[0].get(v) else j
        mem: dict[Buffer, list[tuple[int, int] | None]] = {}
        for buf, cells in b[1].items():
            old = a[1].get(buf, [None] * len(cells))
            out: list[tuple[int, int] | None] = []
            for x, y in zip(old, cells, strict=True):
                if x is None or y is None:
                    out.append(y if x is None else x)
                    continue
                j = (min(x[0], y[0]), max(x[1], y[1]))
                out.append((self.lane.min, self.lane.max) if widen and j != x else j)
            mem[buf] = out
        return vars_, mem

    def fixpoint(self, run_body: Callable[[], None]) -> State:
        """Find an invariant of a runtime loop over registers and memory: iterate the body,
        joining each round's state into the invariant; ranges still growing after
        ``WIDEN_AFTER`` rounds are widened to the whole lane, which obliges the body to reduce
        them. Leaves the state at the invariant (on every iteration's entry and exit) and
        returns it."""
        inv = self.snapshot()
        for round_ in range(FIXPOINT_ROUNDS):
            self.restore(inv)
            run_body()
            new = self._join_states(inv, self.snapshot(), widen=round_ >= WIDEN_AFTER)
            if new == inv:
                self.restore(inv)
                return inv
            inv = new
        grown = ", ".join(f"{v.hint} in {inv[0][v]}" for v in inv[0])
        raise BoundsError(
            f"{self._where()}: a loop-carried value grows without bound ({grown}); the program "
            "must reduce it inside the loop"
        )

    def bounded(self, run_body: Callable[[], None], cap: int) -> State:
        """Analyse a runtime loop of at most ``cap`` trips exactly, without widening: run the
        body from the entry state up to ``cap`` times (stopping early once a trip changes
        nothing). Returns the join of the states each trip may start from (the state the body
        must be valid for), and leaves the state at the join of the states after 0 to
        ``cap`` trips (the loop's exit)."""
        state = self.snapshot()
        starts, exits = state, state
        for trip in range(cap):
            if trip:
                starts = self._join_states(starts, state, widen=False)
            self.restore(state)
            run_body()
            after = self.snapshot()
            exits = self._join_states(exits, after, widen=False)
            if after == state:
                break
            state = after
        self.restore(exits)
        return starts

    # ----------------------------------------------------------------- vars
    def var_def(self, var: Var, init: Bound) -> None:
        """Declare a mutable register."""
        self.vars[var] = init

    def var_set(self, var: Var, value: Bound) -> None:
        """Assign a mutable register."""
        self.vars[var] = value

    def var_get(self, var: Var) -> Bound:
        """Read a mutable register."""
        return self.vars[var]

    # ----------------------------------------------------------------- vocabulary
    def const(self, *, value: int) -> Bound:
        """A broadcast constant."""
        return self._checked("const", Bound.uniform(value, value, self.lanes))

    def add(self, a: Bound, b: Bound) -> Bound:
        """a + b."""
        return self._checked("add", self._lanewise("add", transfer.add, a, b))

    def sub(self, a: Bound, b: Bound) -> Bound:
        """a - b."""
        return self._checked("sub", self._lanewise("sub", transfer.sub, a, b))

    def mullo(self, a: Bound, b: Bound) -> Bound:
        """lo(a*b)."""
        return self._lanewise("mullo", lambda x, y: transfer.mullo(x, y, self.lane), a, b)

    def mulhi(self, a: Bound, b: Bound) -> Bound:
        """hi(a*b)."""
        return self._lanewise("mulhi", lambda x, y: transfer.mulhi(x, y, self.lane), a, b)

    def sra(self, a: Bound, *, k: int) -> Bound:
        """a >> k."""
        return self._lanewise(f"sra:{k}", lambda x: transfer.sra(x, k), a)

    def _no_minimum_square(self, op: str, a: Bound, b: Bound) -> None:
        """Refuse a product whose two factors can both be the lane minimum -beta/2 in the same
        lane: ISAs that form the high half with a doubling multiply (NEON ``sqdmulh``, whose
        2*a*b saturates only there) would then differ from the exact semantics."""
        m = self.lane.min
        if any(x == m and y == m for x, y in zip(a.lo, b.lo, strict=True)):
            raise BoundsError(
                f"{self._where()}: {op} can multiply {m} by {m}: Montgomery products need "
                f"|a*b| < beta^2/4 (a doubling high product saturates there)"
            )

    def montmul(self, a: Bound, z: Bound, zq: Bound) -> Bound:
        """Montgomery product by a twisted constant."""
        del zq
        self._no_minimum_square("montmul", a, z)
        return self._checked(
            "montmul",
            self._lanewise("montmul", lambda x, y: transfer.montmul(x, y, self.arith), a, z),
        )

    def shoupmul(self, a: Bound, z: Bound, zs: Bound) -> Bound:
        """Product by a constant with a precomputed quotient (Shoup)."""
        del zs
        self._no_minimum_square("shoupmul", a, z)
        return self._checked(
            "shoupmul",
            self._lanewise("shoupmul", lambda x, y: transfer.shoupmul(x, self.arith), a, z),
        )

    def montmul_twist(self, a: Bound, b: Bound, bq: Bound) -> Bound:
        """Montgomery product by a variable given a twist from memory (any value)."""
        del bq
        self._no_minimum_square("montmul_twist", a, b)
        return self._checked(
            "montmul_twist",
            self._lanewise(
                "montmul_twist", lambda x, y: transfer.montmul_twist(x, y, self.arith), a, b
            ),
        )

    def montmul_var(self, a: Bound, b: Bound) -> Bound:
        """Montgomery product of two variables."""
        self._no_minimum_square("montmul_var", a, b)
        return self._checked(
            "montmul_var",
            self._lanewise(
                "montmul_var", lambda x, y: transfer.montmul_var(x, y, self.arith), a, b
            ),
        )

    def madd(self, a0: Bound, b0: Bound, a1: Bound, b1: Bound) -> Bound:
        """a0*b0 + a1*b1 in a double-width lane."""
        return self._checked("madd", self._lanewise("madd", transfer.madd, a0, b0, a1, b1), True)

    def mulw(self, a: Bound, b: Bound) -> Bound:
        """a*b in a double-width lane."""
        return self._checked("mulw", self._lanewise("mulw", transfer.mulw, a, b), True)

    def addw(self, a: Bound, b: Bound) -> Bound:
        """a + b of double-width values."""
        return self._checked("addw", self._lanewise("addw", transfer.add, a, b), True)

    def mredw(self, a: Bound) -> Bound:
        """Montgomery reduction of a double-width value to a lane."""
        return self._checked(
            "mredw", self._lanewise("mredw", lambda x: transfer.mredw(x, self.arith), a)
        )

    @staticmethod
    def _pairs(a: Bound, parity: int) -> Bound:
        """The ranges of lanes 2i + parity (i < L/2)."""
        return Bound(a.lo[parity::2], a.hi[parity::2])

    def pair_madd(self, a: Bound, b: Bound) -> Bound:
        """Pair sums: lane i is madd of lanes 2i and 2i+1 (the same transfer function)."""
        a0, b0, a1, b1 = (self._pairs(x, parity) for parity in (0, 1) for x in (a, b))
        sums = self._lanewise("madd", transfer.madd, a0, b0, a1, b1)
        return self._checked("pair_madd", sums, True)

    def pair_add(self, a: Bound, b: Bound) -> Bound:
        """a + b of pair sums."""
        return self._checked("pair_add", self._lanewise("addw", transfer.add, a, b), True)

    def pair_mred(self, even: Bound, odd: Bound) -> Bound:
        """Two pair sums reduced (as mredw) and interleaved."""
        r = [self.mredw(x) for x in (even, odd)]
        lo = tuple(v for pair in zip(r[0].lo, r[1].lo, strict=True) for v in pair)
        hi = tuple(v for pair in zip(r[0].hi, r[1].hi, strict=True) for v in pair)
        return Bound(lo, hi)

    def pair_swap(self, a: Bound) -> Bound:
        """Lanes 2i and 2i+1 exchanged: their ranges with them."""
        swap = lambda t: tuple(v for i in range(0, len(t), 2) for v in (t[i + 1], t[i]))  # noqa: E731
        return Bound(swap(a.lo), swap(a.hi))

    def pair_blend(self, a: Bound, b: Bound) -> Bound:
        """Even lanes' ranges from a, odd lanes' from b."""
        pick = lambda x, y: tuple(x[i] if i % 2 == 0 else y[i] for i in range(len(x)))  # noqa: E731
        return Bound(pick(a.lo, b.lo), pick(a.hi, b.hi))

    def barrett(self, a: Bound) -> Bound:
        """Barrett reduction."""
        return self._checked(
            "barrett", self._lanewise("barrett", lambda x: transfer.barrett(x, self.arith), a)
        )

    def barrett_coarse(self, a: Bound) -> Bound:
        """Barrett reduction by a one-step estimate; the input must leave room for the
        rounding constant (:attr:`~nttgen.plan.constants.Arith.coarse_room`)."""
        room = self.arith.coarse_room
        if a.magnitude > room:
            raise BoundsError(
                f"{self._where()}: barrett_coarse's rounding can overflow: its input lies in "
                f"{a}, beyond +-{room}"
            )
        return self._checked(
            "barrett_coarse",
            self._lanewise("barrett_coarse", lambda x: transfer.barrett_coarse(x, self.arith), a),
        )

    def cond_add_q(self, a: Bound) -> Bound:
        """Conditional add of q from the sign."""
        return self._checked(
            "cond_add_q",
            self._lanewise("cond_add_q", lambda x: transfer.cond_add_q(x, self.arith.q), a),
        )

    def shuffle(self, a: Bound, b: Bound, *, d: int) -> tuple[Bound, Bound]:
        """Lane interleave: ranges move with their lanes."""
        return self._permute(a, b, semantics.shuffle_lane_sources(d, self.lanes))

    def zip(self, a: Bound, b: Bound, *, w: int, g: int, inverse: int) -> tuple[Bound, Bound]:
        """Lane (de-)interleave in groups: ranges move with their lanes."""
        return self._permute(a, b, semantics.zip_lane_sources(w, g, inverse, self.lanes))

    @staticmethod
    def _permute(
        a: Bound,
        b: Bound,
        sources: tuple[list[tuple[int, int]], list[tuple[int, int]]],
    ) -> tuple[Bound, Bound]:
        src0, src1 = sources
        regs = (a, b)

        def gather(src: list[tuple[int, int]]) -> Bound:
            return Bound(tuple(regs[r].lo[k] for r, k in src), tuple(regs[r].hi[k] for r, k in src))

        return gather(src0), gather(src1)
