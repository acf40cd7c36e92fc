"""The builder: the interpretation programs are written against.

A program is a Python function ``program(S, ...)`` that calls the vocabulary on ``S``
(``S.add(a, b)``, ``S.montmul(b, z, zq)``, ``S.loop(...)``). Running it on a :class:`Builder`
records the IR of one kernel function *and* interprets every op over intervals as it goes, so the
program can ask ``S.bound(x)`` and decide, from the analysis, whether a value must be reduced
before the next op. Every other interpretation (evaluator, C emitters, op counter, the
independent bounds check) replays the recorded IR, so all of them see exactly the same program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ..errors import BoundsError
from ..intervals import Bound
from ..lanes import I32
from ..plan.constants import Arith
from .bounds import BoundsInterp, State
from .dce import eliminate_dead_code
from .ir import (
    Affine,
    Buffer,
    Call,
    CallEach,
    Comment,
    Count,
    Function,
    Load,
    Loop,
    LoopVar,
    Memory,
    Op,
    ScalarParam,
    Stmt,
    Store,
    Table,
    Value,
    Var,
    VarDef,
    VarGet,
    VarSet,
)
from .replay import run_block
from .vocab import VOCABULARY

_KIND_NAMES = {"n": "lane", "w": "double-width", "p": "pair-sum"}


class Builder:
    """Records one kernel function from a tagless-final program, with live interval analysis.

    ``lanes`` is the number of lanes of every value (1 for portable C). The builder never
    emits anything by itself; see :mod:`nttgen.dsl.replay`."""

    def __init__(self, name: str, arith: Arith, lanes: int, doc: str = "") -> None:
        self.arith = arith
        self.lane = arith.lane
        self.lanes = lanes
        self.fn = Function(name=name, lanes=lanes, lane=arith.lane, params=[], body=[], doc=doc)
        self.bounds = BoundsInterp(arith, lanes, name)
        self._blocks: list[list[Stmt]] = [self.fn.body]
        self.unroll_default = False
        # whether the lazy policy (programs.lazy.Reducer) may reduce by barrett_coarse (3
        # x86 instructions where barrett takes 5) where its wider range serves: a program
        # option, as unroll_default; the analysis checks every use of the wider range
        self.coarse_reductions = False
        self._ids = 0
        self._tags: list[str] = []

    # ----------------------------------------------------------------- plumbing
    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _emit(self, stmt: Stmt) -> None:
        self._blocks[-1].append(stmt)

    @property
    def _tag(self) -> str:
        return " / ".join(self._tags)

    @contextmanager
    def tag(self, text: str) -> Iterator[None]:
        """Label the ops recorded inside (shown in errors, bounds reports and C comments)."""
        self._tags.append(text)
        self.bounds.tag = self._tag
        try:
            yield
        finally:
            self._tags.pop()
            self.bounds.tag = self._tag

    def comment(self, text: str) -> None:
        """Record a comment for the emitted code."""
        self._emit(Comment(text))

    def _value(self, hint: str, bound: Bound, wide: bool = False, pair_sum: bool = False) -> Value:
        v = Value(self.lane.wide if wide else self.lane, hint, self._next_id(), pair_sum)
        self.fn.bounds[v] = bound
        return v

    def bound(self, v: Value) -> Bound:
        """The proven per-lane range of a value."""
        return self.fn.bounds[v]

    # ----------------------------------------------------------------- declarations
    def _param(self, buf: Buffer) -> Buffer:
        self.fn.params.append(buf)
        self.bounds.bind_buffer(buf)
        if buf.contract is not None:
            self.fn.contract.inputs[buf.name] = buf.contract
        return buf

    def input(
        self,
        name: str,
        length: int,
        contract: tuple[int, int],
        *,
        per: ScalarParam | None = None,
        doc: str = "",
    ) -> Buffer:
        """A read-only input array whose elements lie in ``contract``; ``per`` makes it
        ``length * per`` elements long."""
        return self._param(Buffer(name, self.lane, length, "in", contract, per, doc))

    def inout(
        self,
        name: str,
        length: int,
        contract: tuple[int, int],
        doc: str = "",
        *,
        per: ScalarParam | None = None,
    ) -> Buffer:
        """An array transformed in place; its elements lie in ``contract`` on entry; ``per``
        makes it ``length * per`` elements long."""
        return self._param(Buffer(name, self.lane, length, "inout", contract, per, doc))

    def output(self, name: str, length: int, doc: str = "") -> Buffer:
        """An array the kernel writes completely."""
        return self._param(Buffer(name, self.lane, length, "out", None, None, doc))

    def local(self, name: str, length: int) -> Buffer:
        """A scratch array on the stack."""
        buf = Buffer(name, self.lane, length, "local")
        self.fn.locals.append(buf)
        self.bounds.bind_buffer(buf)
        return buf

    def scalar(self, name: str, min_value: int = 1, doc: str = "") -> ScalarParam:
        """A public size_t parameter (a count)."""
        p = ScalarParam(name, min_value, doc)
        self.fn.params.append(p)
        return p

    def table(
        self,
        name: str,
        values: list[int],
        notes: list[tuple[int, str]] | None = None,
        doc: str = "",
        *,
        in_frame: bool = False,
    ) -> Table:
        """A constant table; each value must fit the lane. ``in_frame``: the emitted C copies
        it into the function's stack frame on entry and reads the copy (:class:`Table`)."""
        for v in values:
            if not self.lane.fits(v, v):
                raise ValueError(f"table {name}: {v} does not fit {self.lane.name}")
        if in_frame and len(values) % self.fn.lanes:
            raise ValueError(
                f"table {name}: a copy in the frame needs whole vectors "
                f"({len(values)} values, {self.fn.lanes} lanes)"
            )
        t = Table(name, self.lane, tuple(values), tuple(notes or ()), doc, in_frame)
        self.fn.tables.append(t)
        return t

    def offsets(self, name: str, values: Sequence[int], doc: str = "") -> Table:
        """A table of element offsets (each in [0, 2^31)) for indices that read them by a loop
        counter (:meth:`Affine.looked_up`): public constants, never loaded as lanes."""
        if not values or any(not 0 <= v < 2**31 for v in values):
            raise ValueError(f"offsets {name}: need offsets in [0, 2^31), got {list(values)}")
        t = Table(name, I32, tuple(values), doc=doc)
        self.fn.tables.append(t)
        return t

    # ----------------------------------------------------------------- structure
    def loop(
        self,
        count: int | Count,
        body: Callable[[LoopVar], None],
        *,
        hint: str = "i",
        unroll: bool | None = None,
    ) -> None:
        """for var in [0, count): body(var). A runtime count (``Count(c, param)``) is analysed
        to a fixpoint of the mutable registers the body assigns. ``unroll`` defaults to the
        builder's ``unroll_default`` for static counts (emitters then repeat the body)."""
        cnt = count if isinstance(count, Count) else Count(int(count))
        if unroll is None:
            unroll = self.unroll_default and cnt.static
        if (cnt.static and cnt.const <= 0) or cnt.cap == 0:
            return
        var = LoopVar(hint, self._next_id())
        stmt = Loop(var, cnt, [], unroll, self._tag)
        self.bounds.enter_loop(var, cnt)
        entry = None if cnt.static else self.bounds.snapshot()
        if entry is not None:
            self._runtime_fixpoint(var, cnt, body)  # decisions are made from this invariant
        self._blocks.append(stmt.body)
        try:
            body(var)
        finally:
            self._blocks.pop()
        if entry is not None:
            # With the decisions now fixed, the recorded body is monotone: its fixpoint (or
            # capped run) from the entry state is the tight invariant (never larger than the
            # one above).
            self.bounds.restore(entry)
            env = dict(self.fn.bounds)
            replay = lambda: run_block(stmt.body, env, self.bounds)  # noqa: E731
            if cnt.cap is None:
                self.bounds.fixpoint(replay)
            else:
                self.bounds.bounded(replay, cnt.cap)
        self.bounds.exit_loop()
        self._emit(stmt)

    def _runtime_fixpoint(
        self, var: LoopVar, count: Count, body: Callable[[LoopVar], None]
    ) -> State:
        """Find the loop invariant by running the body in dry mode (recording nothing); the
        real recording that follows then makes its decisions from the invariant (for a
        capped count: the join of the states its trips may start from)."""

        def dry_run() -> None:
            self._blocks.append([])
            try:
                body(var)
            finally:
                self._blocks.pop()

        if count.cap is None:
            return self.bounds.fixpoint(dry_run)
        starts = self.bounds.bounded(dry_run, count.cap)
        self.bounds.restore(starts)
        return starts

    def var(self, init: Value, hint: str = "acc") -> Var:
        """Declare a mutable register initialised to ``init``."""
        v = Var(init.lane, hint, self._next_id())
        self._emit(VarDef(v, init))
        self.bounds.var_def(v, self.bound(init))
        return v

    def set(self, var: Var, value: Value) -> None:
        """Assign a mutable register (a value of its width)."""
        if value.lane != var.lane or value.pair_sum:
            raise TypeError(f"{self.fn.name}: register {var.hint} holds {var.lane.name} values")
        self._emit(VarSet(var, value))
        self.bounds.var_set(var, self.bound(value))

    def get(self, var: Var) -> Value:
        """Read a mutable register."""
        v = self._value(var.hint, self.bounds.var_get(var), wide=var.lane != self.lane)
        self._emit(VarGet(v, var))
        return v

    def call(self, callee: Function, **args: Buffer | ScalarParam | int) -> None:
        """Call another kernel function. The caller's arrays must satisfy the callee's input
        contract; afterwards they hold the callee's proven output ranges."""
        for p in callee.params:
            if p.name not in args:
                raise TypeError(f"call to {callee.name}: missing argument {p.name}")
        if callee.distinct_buffers:
            passed = [v for v in args.values() if isinstance(v, Buffer)]
            if len({id(v) for v in passed}) < len(passed):
                raise ValueError(
                    f"call to {callee.name}: its buffer parameters are declared restrict, so "
                    f"each must get a different array (got {[v.name for v in passed]})"
                )
        stmt = Call(callee, tuple((k, v) for k, v in args.items()), self._tag)
        self.bounds.call(stmt)
        self._emit(stmt)

    def call_each(
        self, count: ScalarParam, calls: Sequence[tuple[Function, int]], array: Buffer
    ) -> None:
        """Call ``calls`` ((callee, width): widths 2 then 1, or 1 alone) on the
        polynomials of ``array`` (``count`` polynomials), one group after another (see
        :class:`CallEach`). A callee of width w takes w buffer parameters of one polynomial
        each. The array must satisfy every callee's input contracts; afterwards each position
        holds the join of their proven output ranges there."""
        widths = [w for _, w in calls]
        if widths not in ([1], [2, 1]):  # what the emitters write: pairs, then one left over
            raise ValueError(
                f"{self.fn.name}: call widths must fall strictly to 1 from at most 2, got {widths}"
            )
        if array.per_param is not count:
            held = array.per_param.name if array.per_param else "one"
            raise ValueError(
                f"{self.fn.name}: {array.name} holds {held} polynomial(s), not {count.name}"
            )
        for callee, width in calls:
            params = callee.params
            if len(params) != width or any(
                not isinstance(p, Buffer) or p.length != array.length for p in params
            ):
                raise TypeError(
                    f"call of {callee.name} on groups of {width}: it must take {width} "
                    f"arrays of {array.length} elements"
                )
        stmt = CallEach(count, tuple(calls), array, self._tag)
        self.bounds.call_each(stmt)
        self._emit(stmt)

    def _buffer_hull(self, buf: Buffer) -> tuple[int, int]:
        return self.bounds.buffer_hull(buf)

    # ----------------------------------------------------------------- memory
    def load(
        self,
        src: Memory,
        index: Affine | int | LoopVar,
        hint: str = "",
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> Value:
        """Load L consecutive lanes starting at element ``index`` (or, with ``broadcast``, the
        element at ``index`` into every lane; with ``lanes_at``, lane k from element
        ``index + lanes_at[k]``: a gather whose offsets are public constants)."""
        idx = Affine.of(index)
        lanes_at = self._check_lanes_at(lanes_at)
        b = self.bounds.load(src, idx, broadcast=broadcast, lanes_at=lanes_at)
        v = self._value(hint or src.name, b)
        self._emit(Load(v, src, idx, self._tag, broadcast, lanes_at))
        return v

    def store(
        self,
        dst: Buffer,
        index: Affine | int | LoopVar,
        value: Value,
        lanes_at: tuple[int, ...] | None = None,
    ) -> None:
        """Store L lanes at element ``index`` (with ``lanes_at``, lane k at element
        ``index + lanes_at[k]``: a scatter whose offsets are public constants)."""
        idx = Affine.of(index)
        lanes_at = self._check_lanes_at(lanes_at)
        self.bounds.store(dst, idx, self.bound(value), lanes_at=lanes_at)
        self._emit(Store(dst, idx, value, self._tag, lanes_at))

    def _check_lanes_at(self, lanes_at: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """Gather/scatter offsets: L distinct non-negative offsets, or None for the
        consecutive lanes (which they also normalise to)."""
        if lanes_at is None:
            return None
        lanes_at = tuple(lanes_at)
        if len(lanes_at) != self.lanes or len(set(lanes_at)) != self.lanes or min(lanes_at) < 0:
            raise ValueError(
                f"lane offsets {lanes_at} must be {self.lanes} distinct non-negative offsets"
            )
        return None if lanes_at == tuple(range(self.lanes)) else lanes_at

    # ----------------------------------------------------------------- vocabulary
    def _op(self, kind: str, args: tuple[Value, ...], hint: str, **attrs: int) -> Value:
        spec = VOCABULARY[kind]
        assert len(args) == len(spec.operands) and spec.results == 1
        for k, a in enumerate(args):
            want = spec.operand_kind(k)
            if a.kind_for(self.lane) != want:
                raise TypeError(
                    f"{self.fn.name}: operand {spec.operands[k]} of {kind} must be a "
                    f"{_KIND_NAMES[want]} value, got {a!r} "
                    f"({_KIND_NAMES[a.kind_for(self.lane)]}, {a.lane.name})"
                )
        b = getattr(self.bounds, kind)(*(self.bound(a) for a in args), **attrs)
        v = self._value(hint, b, spec.result_wide, spec.result_kind == "p")
        self._emit(Op(kind, (v,), args, tuple(sorted(attrs.items())), self._tag))
        return v

    def const(self, value: int, hint: str = "c") -> Value:
        """Broadcast a compile-time integer."""
        return self._op("const", (), hint, value=value)

    def add(self, a: Value, b: Value, hint: str = "sum") -> Value:
        """a + b."""
        return self._op("add", (a, b), hint)

    def sub(self, a: Value, b: Value, hint: str = "diff") -> Value:
        """a - b."""
        return self._op("sub", (a, b), hint)

    def mullo(self, a: Value, b: Value, hint: str = "lo") -> Value:
        """lo(a*b)."""
        return self._op("mullo", (a, b), hint)

    def mulhi(self, a: Value, b: Value, hint: str = "hi") -> Value:
        """hi(a*b)."""
        return self._op("mulhi", (a, b), hint)

    def sra(self, a: Value, k: int, hint: str = "sh") -> Value:
        """a >> k."""
        return self._op("sra", (a,), hint, k=k)

    def montmul(self, a: Value, z: Value, zq: Value, hint: str = "t") -> Value:
        """Montgomery product by a twisted constant (z, zq)."""
        return self._op("montmul", (a, z, zq), hint)

    def shoupmul(self, a: Value, z: Value, zs: Value, hint: str = "t") -> Value:
        """Product by a constant z with its precomputed quotient zs (Shoup)."""
        return self._op("shoupmul", (a, z, zs), hint)

    def mulconst(self, a: Value, z: Value, zq: Value, hint: str = "t") -> Value:
        """Product by a constant given as the pair :meth:`nttgen.plan.constants.Arith.twisted`
        made for it: a Montgomery or a Shoup product, as the lane arithmetic's ``const_mul``
        says."""
        if self.arith.const_mul != "montgomery":
            return self.shoupmul(a, z, zq, hint)
        return self.montmul(a, z, zq, hint)

    def montmul_twist(self, a: Value, b: Value, bq: Value, hint: str = "p") -> Value:
        """Montgomery product a*b/beta given b's twist bq from memory, analysed for any bq."""
        return self._op("montmul_twist", (a, b, bq), hint)

    def montmul_var(self, a: Value, b: Value, hint: str = "p") -> Value:
        """Montgomery product of two variables."""
        return self._op("montmul_var", (a, b), hint)

    def madd(self, a0: Value, b0: Value, a1: Value, b1: Value, hint: str = "w") -> Value:
        """a0*b0 + a1*b1 exactly, as a double-width value."""
        self._need_wide("madd")
        return self._op("madd", (a0, b0, a1, b1), hint)

    def mulw(self, a: Value, b: Value, hint: str = "w") -> Value:
        """a*b exactly, as a double-width value."""
        self._need_wide("mulw")
        return self._op("mulw", (a, b), hint)

    def addw(self, a: Value, b: Value, hint: str = "w") -> Value:
        """a + b of double-width values."""
        self._need_wide("addw")
        return self._op("addw", (a, b), hint)

    def mredw(self, a: Value, hint: str = "r") -> Value:
        """Signed Montgomery reduction of a double-width value to a lane: a/beta mod q."""
        self._need_wide("mredw")
        return self._op("mredw", (a,), hint)

    def pair_madd(self, a: Value, b: Value, hint: str = "w") -> Value:
        """Pair sums a[2i]*b[2i] + a[2i+1]*b[2i+1]: L/2 double-width lanes (16-bit lanes,
        an even lane count)."""
        self._need_pairs("pair_madd")
        return self._op("pair_madd", (a, b), hint)

    def pair_add(self, a: Value, b: Value, hint: str = "w") -> Value:
        """a + b of pair sums."""
        self._need_pairs("pair_add")
        return self._op("pair_add", (a, b), hint)

    def pair_mred(self, even: Value, odd: Value, hint: str = "r") -> Value:
        """Montgomery reductions of two pair sums into one vector: lane 2i from even[i], lane
        2i+1 from odd[i], each a/beta mod q."""
        self._need_pairs("pair_mred")
        return self._op("pair_mred", (even, odd), hint)

    def pair_swap(self, a: Value, hint: str = "sw") -> Value:
        """Lanes 2i and 2i+1 exchanged."""
        self._need_pairs("pair_swap")
        return self._op("pair_swap", (a,), hint)

    def pair_blend(self, a: Value, b: Value, hint: str = "bl") -> Value:
        """Even lanes from a, odd lanes from b."""
        self._need_pairs("pair_blend")
        return self._op("pair_blend", (a, b), hint)

    def _need_pairs(self, op: str) -> None:
        self._need_wide(op)
        if self.lanes % 2:
            raise ValueError(
                f"{self.fn.name}: {op} works on pairs of lanes; this program has "
                f"{self.lanes} lane(s) per vector"
            )

    def _need_wide(self, op: str) -> None:
        if self.lane.bits not in (16, 32):
            raise ValueError(
                f"{self.fn.name}: {op} needs 16- or 32-bit lanes (double-width values are "
                f"32- or 64-bit); this program has {self.lane.bits}-bit lanes"
            )

    def barrett(self, a: Value, hint: str = "r") -> Value:
        """Barrett reduction."""
        return self._op("barrett", (a,), hint)

    def barrett_coarse(self, a: Value, hint: str = "r") -> Value:
        """Barrett reduction by a one-step estimate (a rounding high product of 16-bit lanes,
        a rounding shift of 32-bit lanes where q lies near a power of two): congruent to a,
        within a wider range than :meth:`barrett` gives (see
        :func:`~nttgen.dsl.semantics.barrett_coarse`)."""
        if not self.arith.coarse_usable:
            raise ValueError(
                f"{self.fn.name}: barrett_coarse needs 16-bit lanes, or 32-bit lanes with q "
                f"near a power of two; q = {self.arith.q} in {self.lane.bits}-bit lanes is not"
            )
        return self._op("barrett_coarse", (a,), hint)

    def cond_add_q(self, a: Value, hint: str = "r") -> Value:
        """a + q where a < 0."""
        return self._op("cond_add_q", (a,), hint)

    def shuffle(
        self, a: Value, b: Value, d: int, hints: tuple[str, str] = ("s", "s")
    ) -> tuple[Value, Value]:
        """Interleave two vectors at lane distance d."""
        b0, b1 = self.bounds.shuffle(self.bound(a), self.bound(b), d=d)
        v0 = self._value(hints[0], b0)
        v1 = self._value(hints[1], b1)
        self._emit(Op("shuffle", (v0, v1), (a, b), (("d", d),), self._tag))
        return v0, v1

    def zip(
        self, a: Value, b: Value, w: int, g: int, inverse: int, hints: tuple[str, str] = ("s", "s")
    ) -> tuple[Value, Value]:
        """Interleave (or, with ``inverse``, de-interleave) elements of 2^w lanes of two
        vectors inside groups of 2^g lanes (see :func:`nttgen.dsl.semantics.zip_lanes`)."""
        b0, b1 = self.bounds.zip(self.bound(a), self.bound(b), w=w, g=g, inverse=inverse)
        v0 = self._value(hints[0], b0)
        v1 = self._value(hints[1], b1)
        attrs = (("g", g), ("inverse", inverse), ("w", w))
        self._emit(Op("zip", (v0, v1), (a, b), attrs, self._tag))
        return v0, v1

    # ----------------------------------------------------------------- finish
    def finish(self, require: dict[str, tuple[int, int]] | None = None) -> Function:
        """Close the function: compute each output's proven range, check it against
        ``require`` (name -> inclusive range the caller needs), drop dead code and return the
        IR."""
        eliminate_dead_code(self.fn)
        for buf in self.fn.buffers:
            if buf.role not in ("out", "inout"):
                continue
            lo, hi = self._buffer_hull(buf)
            cells = self.bounds.memory[buf]
            self.fn.output_bounds[buf.name] = Bound(
                tuple(c[0] for c in cells),  # type: ignore[index]
                tuple(c[1] for c in cells),  # type: ignore[index]
            )
            self.fn.contract.outputs[buf.name] = (lo, hi)
            if require and buf.name in require:
                rlo, rhi = require[buf.name]
                if lo < rlo or hi > rhi:
                    raise BoundsError(
                        f"{self.fn.name}: output {buf.name} lies in [{lo}, {hi}], which breaks "
                        f"its contract [{rlo}, {rhi}]"
                    )
        return self.fn
