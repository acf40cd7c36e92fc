"""The C emitter: an interpreter of the IR that builds C AST for one ISA backend.

Every SSA value becomes a ``const`` local named from its hint and a per-function counter
(``t_3``, ``zeta_0``), so the output is readable and identical on every run. Loop counters are
``size_t``; memory indices are affine in them, folded at emission.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..dsl.ir import (
    Affine,
    Buffer,
    Call,
    CallEach,
    Count,
    Function,
    Load,
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
    VarSet,
    walk,
)
from ..dsl.replay import replay
from ..dsl.vocab import VOCABULARY
from . import c_ast as C
from .isa.base import Isa
from .memory_groups import Access, AccessLog, group_loads
from .table_reads import TableReads, broadcast_tables

# the file's macros (each prefixed with the file's macro root, see EmitContext.macro)
ALIGN_MACRO = "ALIGN"
NOINLINE_MACRO = "NOINLINE"
DEBUG_MACRO = "DEBUG"


def value_uses(fn: Function) -> Counter[Value]:
    """How many statements of ``fn`` read each SSA value."""
    uses: Counter[Value] = Counter()
    for s in walk(fn.body):
        if isinstance(s, Op):
            uses.update(s.args)
        elif isinstance(s, Store | VarSet):
            uses[s.value] += 1
        elif isinstance(s, VarDef):
            uses[s.init] += 1
    return uses


# vocabulary ops with a ``.vx`` form: a vector and a lane scalar (RVV)
SCALAR_FORMS = ("add", "sub", "mullo", "mulhi")


def scalar_operand_op(
    isa: Isa, op: str, args: tuple[C.Expr, ...], vec: list[bool], attrs: dict[str, int]
) -> C.Expr | tuple[C.Expr, ...]:
    """Op ``op`` of ``args``, of which those not marked in ``vec`` are lane scalars, by the
    ISA's ``.vx`` forms where it has one (a Montgomery product by a scalar twiddle pair; add,
    sub, mullo or mulhi of one vector and one scalar), else by its template with every scalar
    splat to a vector."""
    if op == "montmul" and vec == [True, False, False]:
        return isa.montmul_vx(*args)
    if op in SCALAR_FORMS and vec.count(True) == 1:
        v, x = (args[0], args[1]) if vec[0] else (args[1], args[0])
        return isa.scalar_form(op, v, x, scalar_first=not vec[0])
    full = tuple(a if is_vec else isa.splat(a) for a, is_vec in zip(args, vec, strict=True))
    return isa.template(op)(*full, **attrs)  # type: ignore[no-any-return]


class NameSupply:
    """Deterministic fresh names: hint_0, hint_1, ... per hint."""

    def __init__(self, reserved: set[str] | None = None) -> None:
        self.counts: dict[str, int] = {}
        self.reserved = set(reserved or ())

    def fresh(self, hint: str) -> str:
        """A new name starting with ``hint``."""
        while True:
            k = self.counts.get(hint, 0)
            self.counts[hint] = k + 1
            name = f"{hint}_{k}"
            if name not in self.reserved:
                return name


class CEmitter(TableReads):
    """Emit one IR function as a C function definition."""

    def __init__(
        self,
        fn: Function,
        isa: Isa,
        c_name: Callable[[Function], str],
        table_name: Callable[[Function, Table], str],
        doc: tuple[str, ...] = (),
    ) -> None:
        self.fn = fn
        self.isa = isa
        self.c_name = c_name
        self.table_name = table_name
        self.doc = doc
        reserved = {p.name for p in fn.params} | {b.name for b in fn.locals}
        self.names = NameSupply(reserved)
        self.blocks: list[list[C.Stmt]] = [[]]
        self.loopvars: dict[LoopVar, C.Expr] = {}
        self.vars: dict[Var, C.Name | tuple[C.Name, ...]] = {}
        self.stmt: Stmt | None = None
        self.tag = ""
        self.tables: dict[Table, str] = {}
        self.offsets: dict[Table, str] = {}  # offsets tables read by indices, and their alias
        self.lane_offsets: dict[tuple[int, ...], C.Expr] = {}
        self.accesses = AccessLog()
        self.scalars: set[str] = set()  # C names holding lane scalars (ISA scalar_operands)
        self.uniform: set[str] = set()  # C names of vectors with one value in every lane
        self._broadcast = broadcast_tables(fn)
        self._uses = value_uses(fn)
        # the C name of each Barrett reduction's result -> its argument and its declaration
        self._reductions: dict[str, tuple[C.Expr, C.Stmt]] = {}
        # (loop body, constants table) -> the body's pointer to the table
        self._loop_constants: dict[tuple[int, Table], tuple[list[C.Stmt], C.Name]] = {}

    def _fresh(self, hint: str) -> str:
        return self.names.fresh(hint)

    def _align(self, n: int) -> str:
        """The file's alignment attribute macro for ``n`` bytes."""
        return f"{self.isa.ctx.macro(ALIGN_MACRO)}({n})"

    # ----------------------------------------------------------------- helpers
    def _out(self, s: C.Stmt) -> None:
        self.blocks[-1].append(s)

    def _bind(self, expr: C.Expr, hint: str, wide: bool = False) -> C.Expr:
        if isinstance(expr, C.Int):
            return expr
        name = self.names.fresh(hint)
        ctype = self.isa.wide_type() if wide else self.isa.vec_type()
        self._out(C.Decl(ctype, name, expr, const=True))
        return C.Name(name)

    def _bind_wide(self, parts: tuple[C.Expr, ...], hint: str) -> tuple[C.Expr, ...]:
        """A double-width value held in several registers (x86, NEON): one local per part,
        passed on as the tuple of their names."""
        return tuple(self._bind(e, hint, wide=True) for e in parts)

    def _hint(self, k: int = 0) -> str:
        s = self.stmt
        results = getattr(s, "results", None)
        if results is not None:
            return results[k].hint
        result = getattr(s, "result", None)
        return result.hint if result is not None else "v"

    def _index(self, index: Affine) -> C.Expr:
        e: C.Expr = C.Int(index.const)
        terms = C.Int(0)
        for v, c in index.terms:
            terms = C.add(terms, C.mul(self.loopvars[v], c))
        if index.lookup is not None:
            t, i = index.lookup.table, self.loopvars[index.lookup.var]
            if isinstance(i, C.Int):  # an unrolled loop: the offset itself
                terms = C.add(terms, C.Int(t.values[i.value]))
            else:
                if t not in self.offsets:
                    self.offsets[t] = self.names.fresh(t.name)
                terms = C.add(terms, C.Index(C.Name(self.offsets[t]), i))
        return C.add(terms, e)

    def _access(self, src: Memory, base: C.Expr, index: Affine) -> Access:
        """A plain access as :mod:`.memory_groups` groups them: its variable index part and
        its constant."""
        variable, const = self._index(index + (-index.const)), index.const
        # unrolled loop counters fold into constants: keep those with the constant part
        added = variable.right if isinstance(variable, C.Bin) and variable.op == "+" else None
        if isinstance(variable, C.Int):
            variable, const = C.Int(0), const + variable.value
        elif isinstance(variable, C.Bin) and isinstance(added, C.Int):
            variable, const = variable.left, const + added.value
        return Access(base, variable, const, table=isinstance(src, Table))

    # ----------------------------------------------------------------- structure
    def _lane_offsets(self, lanes_at: tuple[int, ...]) -> C.Expr:
        """The ISA's vector of a gather's lane offsets, computed once at the top of the
        function (offsets are public constants; each distinct set gets one local)."""
        if lanes_at not in self.lane_offsets:
            name = self.names.fresh("lanes_at")
            decl = self.isa.lane_offsets(name, lanes_at)
            self.blocks[0].insert(len(self.lane_offsets), decl)
            self.lane_offsets[lanes_at] = C.Name(name)
        return self.lane_offsets[lanes_at]

    def load(
        self,
        src: Memory,
        index: Affine,
        *,
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> C.Expr:
        """A vector load: aligned from tables and local arrays at whole-vector offsets,
        possibly unaligned from the caller's arrays; or a broadcast of one element; or a
        gather by constant lane offsets."""
        if lanes_at is not None:
            offsets = self._lane_offsets(lanes_at)
            expr = self.isa.load_gather(self._memory(src), self._index(index), offsets)
            return self._bind(expr, self._hint())
        if broadcast:
            L = self.fn.lanes
            lane_of = getattr(self.isa, "load_lane_broadcast", None)
            if (
                lane_of
                and isinstance(src, Table)
                and index.lookup is None
                and all(c % L == 0 for _, c in index.terms)
            ):
                # the vector of L table entries around it, and one lane of it: ISAs with
                # multiplications by a lane (NEON) then need no broadcast at all
                r = index.const % L
                expr = lane_of(self._memory(src), self._index(index + (-r)), r)
            elif self.isa.scalar_operands:
                # one lane scalar: the ops that use it take it as it is (``.vx`` forms)
                name = self.names.fresh(self._hint())
                value = C.Index(self._memory(src), self._index(index))
                self._out(C.Decl(self.fn.lane.c_type, name, value, const=True))
                self.scalars.add(name)
                return C.Name(name)
            else:
                expr = self.isa.load_broadcast(self._memory(src), self._index(index))
                bound = self._bind(expr, self._hint())
                if isinstance(bound, C.Name):
                    self.uniform.add(bound.text)
                return bound
            return self._bind(expr, self._hint())
        aligned = (isinstance(src, Table) or src in self.fn.locals) and self._aligned(index)
        base = self._memory(src)
        bound = self._bind(self.isa.load(base, self._index(index), aligned), self._hint())
        if isinstance(bound, C.Name):
            self.accesses.loads[bound.text] = self._access(src, base, index)
        return bound

    def _aligned(self, index: Affine) -> bool:
        L = self.fn.lanes
        looked_up = index.lookup.table.values if index.lookup is not None else ()
        return (
            index.const % L == 0
            and all(c % L == 0 for _, c in index.terms)
            and all(v % L == 0 for v in looked_up)
        )

    def store(
        self, dst: Buffer, index: Affine, value: C.Expr, *, lanes_at: tuple[int, ...] | None = None
    ) -> None:
        """A vector store (or a scatter by constant lane offsets)."""
        if lanes_at is not None:
            offsets = self._lane_offsets(lanes_at)
            self._out(self.isa.store_scatter(C.Name(dst.name), self._index(index), value, offsets))
            return
        aligned = dst in self.fn.locals and self._aligned(index)
        value = self._as_vector(value)
        stmt = self.isa.store(C.Name(dst.name), self._index(index), value, aligned)
        self.accesses.stores[id(stmt)] = self._access(dst, C.Name(dst.name), index)
        self._out(stmt)

    def loop(
        self, var: LoopVar, count: Count, run_body: Callable[[], None], *, unroll: bool = False
    ) -> None:
        """A for loop, or the body repeated with constant counters when unrolled."""
        if count.static and unroll:
            for i in range(count.const):
                self.loopvars[var] = C.Int(i)
                run_body()
            return
        if count.cap is not None and not count.static and count.cap <= self.isa.guarded_trips:
            self._guarded(var, count, run_body)
            return
        name = self.names.fresh(var.hint)
        self.loopvars[var] = C.Name(name)
        self.blocks.append([])
        run_body()
        body = self.blocks.pop()
        if count.static:
            cond = C.Bin("<", C.Name(name), C.Int(count.const))
        else:
            cond = self._runtime_condition(C.Name(name), count)
        self._out(C.For(name, cond, tuple(body)))

    def _guarded(self, var: LoopVar, count: Count, run_body: Callable[[], None]) -> None:
        """A capped runtime loop as its ``cap`` trips in straight lines, trip i nested in an
        ``if`` on the runtime part of its condition (the counter below the cap is known):
        one compare per trip and no loop counter (see :attr:`Isa.guarded_trips`)."""
        assert count.cap is not None
        trips: list[tuple[C.Expr, list[C.Stmt]]] = []
        for i in range(count.cap):
            self.loopvars[var] = C.Int(i)
            self.blocks.append([])
            run_body()
            cond = self._runtime_condition(C.Int(i), count, capped=False)
            trips.append((cond, self.blocks.pop()))
        inner: tuple[C.Stmt, ...] = ()
        for cond, body in reversed(trips):
            inner = (C.If(cond, (*body, *inner)),)
        for stmt in inner:
            self._out(stmt)

    def _runtime_condition(self, var: C.Expr, count: Count, capped: bool = True) -> C.Expr:
        """The loop condition of a runtime count (see :class:`nttgen.dsl.ir.Count`):
        step*var + offset - const < param, and var < cap where the count is capped and
        ``capped`` (a caller that writes out the trips knows the counter is below the cap),
        joined by a bitwise ``&`` (no short-circuit branch; every term is a public count,
        never a coefficient)."""
        assert count.param is not None
        lhs = var if count.step == 1 else C.Bin("*", C.Int(count.step), var)
        shift = count.offset + (-count.const)
        if shift.terms or shift.const:
            lhs = C.add(lhs, self._index(shift))
        cond: C.Expr = C.Bin("<", lhs, C.Name(count.param.name))
        if count.cap is not None and capped:
            cond = C.Bin("&", C.Bin("<", var, C.Int(count.cap)), cond)
        return cond

    def _is_scalar(self, e: object) -> bool:
        return isinstance(e, C.Name) and e.text in self.scalars

    def _as_vector(self, e: C.Expr) -> C.Expr:
        """e, a lane scalar splat to a vector."""
        return self.isa.splat(e) if self._is_scalar(e) else e

    def var_def(self, var: Var, init: C.Expr | tuple[C.Expr, ...]) -> None:
        """A mutable local; a double-width one is one local per register of its value."""
        if var.lane == self.fn.lane:
            assert not isinstance(init, tuple)
            name = self.names.fresh(var.hint)
            self.vars[var] = C.Name(name)
            self._out(C.Decl(self.isa.vec_type(), name, self._as_vector(init)))
            return
        parts = init if isinstance(init, tuple) else (init,)
        names = tuple(C.Name(self.names.fresh(var.hint)) for _ in parts)
        for name, part in zip(names, parts, strict=True):
            self._out(C.Decl(self.isa.wide_type(), name.text, part))
        self.vars[var] = names if isinstance(init, tuple) else names[0]

    def var_set(self, var: Var, value: C.Expr | tuple[C.Expr, ...]) -> None:
        """Assignment to a mutable local (each register of a double-width one)."""
        target = self.vars[var]
        if isinstance(target, tuple):
            assert isinstance(value, tuple)
            for t, v in zip(target, value, strict=True):
                self._out(C.Assign(t, v))
            return
        assert not isinstance(value, tuple)
        self._out(C.Assign(target, self._as_vector(value)))

    def var_get(self, var: Var) -> C.Expr:
        """A mutable local's current value."""
        return self.vars[var]

    def call(self, stmt: Call) -> None:
        """A call to another kernel of the same file."""
        args: list[C.Expr] = []
        for p in stmt.callee.params:
            arg = dict(stmt.args)[p.name]
            if isinstance(arg, Buffer | ScalarParam):
                args.append(C.Name(arg.name))
            else:
                args.append(C.Int(arg))
        self._out(C.ExprStmt(C.Call(self.c_name(stmt.callee), tuple(args))))

    def call_each(self, stmt: CallEach) -> None:
        """Calls on groups of polynomials (:class:`CallEach`): a loop over the groups of the
        widest callee, then, where one polynomial is left over, the single call (widths 2 and
        1: the ``k & 1`` test reads the public count only)."""
        k = C.Name(stmt.count.name)
        n = C.Int(stmt.array.length)

        def call(callee: Function, first: C.Expr) -> C.Stmt:
            args = [
                C.Unary(
                    "&", C.Index(C.Name(stmt.array.name), C.Bin("*", n, C.add(first, C.Int(m))))
                )
                for m in range(len(callee.params))
            ]
            return C.ExprStmt(C.Call(self.c_name(callee), tuple(args)))

        counter = C.Name(self.names.fresh("i"))
        widest, width = stmt.calls[0]
        if width == 1:
            self._out(C.For(counter.text, C.Bin("<", counter, k), (call(widest, counter),)))
            return
        first = C.Bin("*", C.Int(2), counter)
        cond = C.Bin("<", C.Bin("+", first, C.Int(1)), k)
        self._out(C.For(counter.text, cond, (call(widest, first),)))
        last = C.Bin("-", k, C.Int(1))
        self._out(C.If(C.Bin("&", k, C.Int(1)), (call(stmt.calls[1][0], last),)))

    def comment(self, text: str) -> None:
        """A comment line."""
        self._out(C.Comment(text))

    def __getattr__(self, op: str) -> Callable[..., object]:
        # Vocabulary ops: the backend builds the expression, the emitter binds it to a name.
        if op not in VOCABULARY:
            raise AttributeError(op)
        template = self.isa.template(op)

        def emit(*args: C.Expr, **attrs: int) -> object:
            if op == "add" and (fused := self._fused_sum(args)) is not None:
                return self._bind(fused, self._hint())
            if any(self._is_scalar(a) for a in args):
                vec = [not self._is_scalar(a) for a in args]
                out = scalar_operand_op(self.isa, op, args, vec, attrs)
            else:
                args = self._pinned(op, args)
                uniform = tuple(isinstance(a, C.Name) and a.text in self.uniform for a in args)
                out = self.isa.uniform_form(op, args, uniform) if any(uniform) else None
                if out is None:
                    out = template(*args, **attrs)
            if VOCABULARY[op].result_wide:
                if isinstance(out, tuple):
                    return self._bind_wide(out, self._hint())
                return self._bind(out, self._hint(), wide=True)
            if isinstance(out, tuple):
                # a result nothing reads is not declared (an unused variable is an error
                # under -Werror); its expression is never built into the code
                assert isinstance(self.stmt, Op)
                return tuple(
                    self._bind(e, self._hint(k)) if self._uses[r] else e
                    for k, (e, r) in enumerate(zip(out, self.stmt.results, strict=True))
                )
            bound = self._bind(out, self._hint())
            if op == "const" and isinstance(bound, C.Name):
                self.uniform.add(bound.text)
            if op == "barrett" and isinstance(bound, C.Name):
                self._reductions[bound.text] = (args[0], self.blocks[-1][-1])
            return bound

        return emit

    def _fused_sum(self, args: tuple[C.Expr, ...]) -> C.Expr | None:
        """The ISA's form of barrett(x) + barrett(y) (:meth:`Isa.barrett_sum`) where the
        addition's operands are two reductions declared just before it that nothing else
        reads; the two declarations are then dropped. Their arguments are read where the sum
        is, so nothing may come between (a variable the reductions read may change later)."""
        block = self.blocks[-1]
        found = [self._reductions.get(a.text) for a in args if isinstance(a, C.Name)]
        if len(found) != 2 or None in found or len(block) < 2:
            return None
        (x, dx), (y, dy) = found  # type: ignore[misc]
        assert isinstance(self.stmt, Op)
        if any(self._uses[v] != 1 for v in self.stmt.args):
            return None
        if {id(dx), id(dy)} != {id(block[-1]), id(block[-2])}:
            return None
        fused = self.isa.barrett_sum(x, y)
        if fused is not None:
            del block[-2:]
        return fused

    def _pinned(self, op: str, args: tuple[C.Expr, ...]) -> tuple[C.Expr, ...]:
        """``args`` with each loaded value that ``op`` reads more than once passed through the
        ISA's pin first (see :attr:`Isa.pinned_operands`)."""
        which = dict(self.isa.pinned_operands).get(op, ())
        return tuple(
            self._bind(self.isa.pin(a), "pin")
            if k in which and isinstance(a, C.Name) and a.text in self.accesses.loads
            else a
            for k, a in enumerate(args)
        )

    # ----------------------------------------------------------------- whole function
    def params(self) -> tuple[C.Param, ...]:
        """The C parameter list."""
        out: list[C.Param] = []
        elem = self.fn.lane.c_type
        for p in self.fn.params:
            if isinstance(p, ScalarParam):
                out.append(C.Param("size_t", p.name))
            elif p.per_param is not None:
                const = "const " if p.readonly else ""
                out.append(C.Param(f"{const}{elem}", f"*{p.name}"))
            else:
                const = "const " if p.readonly else ""
                size = f"restrict {p.length}" if self.fn.distinct_buffers else str(p.length)
                out.append(C.Param(f"{const}{elem}", p.name, size))
        return tuple(out)

    def _contract_checks(self, which: str) -> list[C.Stmt]:
        """Debug builds only: assert the input ("in") or output ("out") contract."""
        ranges = self.fn.contract.inputs if which == "in" else self.fn.contract.outputs
        checks: list[C.Stmt] = []
        for p in self.fn.buffers:
            if p.name not in ranges:
                continue
            lo, hi = ranges[p.name]
            length: C.Expr = C.Int(p.length)
            if p.per_param is not None:
                length = C.Bin("*", C.Name(p.per_param.name), C.Int(p.length))
            args = (C.Name(p.name), length, C.Int(lo), C.Int(hi))
            checks.append(C.ExprStmt(C.Call(self.isa.ctx.range_check, args)))
        if not checks:
            return []
        return [C.PP(f"#ifdef {self.isa.ctx.macro(DEBUG_MACRO)}"), *checks, C.PP("#endif")]

    def _unused_params(self) -> list[C.Stmt]:
        """``(void)p;`` for each array parameter the body never reads or writes (an argument
        an entry point takes for every ISA, which this one's program does not need)."""
        used: set[str] = set()
        for s in walk(self.fn.body):
            if isinstance(s, Load) and isinstance(s.src, Buffer):
                used.add(s.src.name)
            elif isinstance(s, Store):
                used.add(s.dst.name)
            elif isinstance(s, Call | CallEach):
                used |= {a.name for _, a in s.args if isinstance(a, Buffer)}
        return [
            C.ExprStmt(C.Cast("void", C.Name(p.name)))
            for p in self.fn.buffers
            if p.name not in used
        ]

    def emit(self) -> C.FuncDef:
        """The function definition (with contract assertions under NTTGEN_DEBUG)."""
        for buf in self.fn.locals:
            self._out(
                C.Decl(
                    self.fn.lane.c_type,
                    buf.name,
                    None,
                    array=buf.length,
                    align=self._align(64),
                )
            )
        for s in self._contract_checks("in"):
            self._out(s)
        replay(self.fn, self)
        self.blocks[0] = group_loads(
            self.blocks[0], self.accesses, self.isa, self.fn.name, self.fn.lanes, self.names.fresh
        )
        for s in self._contract_checks("out"):
            self._out(s)
        aliases: list[C.Stmt] = []
        for t, name in self.tables.items():
            aliases += self._table_alias(t, name)
        for t, name in self.offsets.items():
            # never opaque (unlike a table of values may be): a constant pointer to read-only
            # data, so the constant-time check sees the offsets it reads as public
            table = C.Name(self.table_name(self.fn, t))
            aliases.append(C.Decl(f"const {t.lane.c_type} *const", name, table))
        n_locals = len(self.lane_offsets) + len(self.fn.locals)
        self.blocks[0][n_locals:n_locals] = aliases + self._unused_params()
        return C.FuncDef(
            "void",
            self.c_name(self.fn),
            self.params(),
            C.split_long_runs(self.blocks[0]),
            # Internal transforms (polymul's out-of-place NTT and reducing inverse) stay calls:
            # inlined into polymul, their register spills share one large frame with the
            # scratch arrays, which measured up to 1.35x slower (AVX2, NewHope-1024).
            storage=f"static {self.isa.ctx.macro(NOINLINE_MACRO)}" if self.fn.internal else "",
            doc=self.doc,
        )
