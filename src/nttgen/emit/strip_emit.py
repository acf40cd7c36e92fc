"""The strip-mining C emitter: one-lane programs as VLEN-agnostic RISC-V Vector code.

The program is the portable C's (every value one lane, loops over coefficients). In each loop
nest one static loop becomes a *vector loop*: its iterations are run ``vl`` at a time, with
``vl = vsetvl(remaining)`` chosen by the core, so the code uses whole register groups whatever
VLEN is. Inside a vector loop a value is a vector when it depends on the loop's counter, else a
lane scalar (a twiddle loaded once for all iterations, a constant); ops mixing the two use the
``.vx`` forms. A memory index ``base + c*i`` becomes a unit-stride access when c = 1 and a
strided one (``vlse``/``vsse``, stride c elements) otherwise: the strided-load strategy of
RVV NTTs, which needs no shuffle at any layer.

Which loop: the outermost static loop of a nest, unless its body is one deeper loop (plus loads
of loop-invariant scalars) with a larger trip count, which is then taken instead: in the
butterfly layers of small distance the loop over blocks is longer than the loop within a
block. Iterations of every static loop the programs write are independent (they touch disjoint
coefficients); a loop whose body updates a register declared outside it is never chosen.
"""

from __future__ import annotations

from collections.abc import Callable

from ..dsl.ir import (
    Affine,
    Buffer,
    Count,
    Function,
    Loop,
    LoopVar,
    Memory,
    Op,
    Stmt,
    Table,
    Var,
    VarDef,
    VarSet,
    walk,
)
from ..dsl.vocab import VOCABULARY
from . import c_ast as C
from .c_emit import CEmitter, scalar_operand_op
from .isa.rvv import VL
from .isa.rvv_backends import RvvAgnostic


def _best_count(loop: Loop) -> int:
    """The longest trip count reachable by descending single nested loops."""
    inner = _single_inner(loop)
    best = loop.count.const
    return max(best, _best_count(inner)) if inner is not None else best


def _single_inner(loop: Loop) -> Loop | None:
    """The loop's only nested loop when the rest of its body is loads (loop-invariant scalars
    for the nested loop) or comments; else None."""
    loops = [s for s in loop.body if isinstance(s, Loop)]
    if len(loops) != 1 or not loops[0].count.static:
        return None
    if any(isinstance(s, Op | VarDef | VarSet) for s in loop.body):
        return None
    return loops[0]


def _carries(loop: Loop) -> bool:
    """Whether the loop's body assigns a register declared outside it (a dependence between
    iterations)."""
    inside = {s.var for s in walk(loop.body) if isinstance(s, VarDef)}
    return any(isinstance(s, VarSet) and s.var not in inside for s in walk(loop.body))


def vector_loops(body: list[Stmt]) -> set[LoopVar]:
    """The counters of the loops to strip-mine, one per nest (see the module docstring)."""
    chosen: set[LoopVar] = set()

    def pick(loop: Loop) -> None:
        inner = _single_inner(loop)
        if inner is not None and _best_count(inner) > loop.count.const:
            pick(inner)
        elif _carries(loop):
            visit(loop.body)
        else:
            chosen.add(loop.var)

    def visit(stmts: list[Stmt]) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                if s.count.static:
                    pick(s)
                else:
                    visit(s.body)

    visit(body)
    return chosen


class StripEmitter(CEmitter):
    """Emit a one-lane IR function as strip-mined RVV code (``isa`` an :class:`RvvAgnostic`)."""

    isa: RvvAgnostic

    def __init__(
        self,
        fn: Function,
        isa: RvvAgnostic,
        c_name: Callable[[Function], str],
        table_name: Callable[[Function, Table], str],
        doc: tuple[str, ...] = (),
    ) -> None:
        if fn.lanes != 1:
            raise ValueError(f"strip-mining needs a one-lane program, {fn.name} has {fn.lanes}")
        super().__init__(fn, isa, c_name, table_name, doc)
        self.vector_vars = vector_loops(fn.body)
        self.active: LoopVar | None = None  # the vector loop being emitted
        self.vectors: set[str] = set()  # C names holding vectors
        self.var_is_vector: dict[Var, bool] = {}

    # ----------------------------------------------------------------- values
    def _is_vec(self, e: C.Expr) -> bool:
        return isinstance(e, C.Name) and e.text in self.vectors

    def _bind_as(self, expr: C.Expr, hint: str, vector: bool, wide: bool = False) -> C.Expr:
        if isinstance(expr, C.Int):
            return expr
        name = self.names.fresh(hint)
        ctype = self.fn.lane.c_type
        if vector:
            ctype = self.isa.wide_type() if wide else self.isa.vec_type()
        self._out(C.Decl(ctype, name, expr, const=True))
        if vector:
            self.vectors.add(name)
        return C.Name(name)

    def _vector(self, e: C.Expr) -> C.Expr:
        """e as a vector (a scalar is splat)."""
        return e if self._is_vec(e) else self.isa.splat(e)

    def _stride(self, index: Affine) -> int:
        """The element stride of ``index`` along the active vector loop (0: invariant)."""
        if self.active is None:
            return 0
        if index.lookup is not None and index.lookup.var is self.active:
            # an offsets table gives no stride: such a loop must stay scalar
            raise ValueError(f"{self.fn.name}: a table lookup along the vector loop")
        return dict(index.terms).get(self.active, 0)

    # ----------------------------------------------------------------- structure
    def load(
        self,
        src: Memory,
        index: Affine,
        *,
        broadcast: bool = False,
        lanes_at: tuple[int, ...] | None = None,
    ) -> C.Expr:
        """A scalar load, or a unit-stride or strided vector load along the vector loop."""
        del broadcast, lanes_at  # one lane: a broadcast is a load, a gather too
        stride = self._stride(index)
        mem, idx = self._memory(src), self._index(index)
        if stride == 0:
            return self._bind_as(C.Index(mem, idx), self._hint(), False)
        return self._bind_as(self.isa.load_strided(mem, idx, stride), self._hint(), True)

    def store(
        self, dst: Buffer, index: Affine, value: C.Expr, *, lanes_at: tuple[int, ...] | None = None
    ) -> None:
        """A vector store along the vector loop (or a scalar store outside vector loops)."""
        del lanes_at  # one lane: a scatter is a store
        stride = self._stride(index)
        if stride == 0:
            if self.active is not None:
                raise ValueError(
                    f"{self.fn.name}: a store inside the vector loop must move with its counter"
                )
            self._out(C.Assign(C.Index(C.Name(dst.name), self._index(index)), value))
            return
        self._out(
            self.isa.store_strided(
                C.Name(dst.name), self._index(index), self._vector(value), stride
            )
        )

    def loop(
        self, var: LoopVar, count: Count, run_body: Callable[[], None], *, unroll: bool = False
    ) -> None:
        """The vector loop strip-mined with ``vsetvl``; other loops as in :class:`CEmitter`."""
        if var not in self.vector_vars:
            super().loop(var, count, run_body, unroll=unroll)
            return
        name = self.names.fresh(var.hint)
        self.loopvars[var] = C.Name(name)
        self.blocks.append([])
        total = C.Int(count.const)
        remaining = C.Bin("-", total, C.Name(name))
        self._out(C.Decl("size_t", VL.text, self.isa.setvl(remaining), const=True))
        self.active = var
        run_body()
        self.active = None
        self._out(C.Assign(C.Name(name), C.Bin("+", C.Name(name), VL)))
        body = self.blocks.pop()
        self._out(C.For(name, C.Bin("<", C.Name(name), total), tuple(body), increment=False))

    def var_def(self, var: Var, init: C.Expr) -> None:
        """A mutable local: a vector when its initial value is one."""
        name = self.names.fresh(var.hint)
        self.vars[var] = C.Name(name)
        vector = self._is_vec(init) or self.active is not None
        self.var_is_vector[var] = vector
        if vector:
            self.vectors.add(name)
            init = self._vector(init)
        self._out(C.Decl(self.isa.vec_type() if vector else self.fn.lane.c_type, name, init))

    def var_set(self, var: Var, value: C.Expr) -> None:
        """Assignment to a mutable local."""
        if self.var_is_vector[var]:
            value = self._vector(value)
        self._out(C.Assign(self.vars[var], value))

    # ----------------------------------------------------------------- ops
    def __getattr__(self, op: str) -> Callable[..., object]:
        if op not in VOCABULARY:
            raise AttributeError(op)

        def emit(*args: C.Expr, **attrs: int) -> object:
            return self._op(op, args, attrs)

        return emit

    def _op(self, op: str, args: tuple[C.Expr, ...], attrs: dict[str, int]) -> C.Expr:
        if op == "const":
            return C.Int(attrs["value"])
        if op in ("shuffle", "zip"):
            raise ValueError(f"{self.fn.name}: a one-lane program has no shuffles")
        if self.active is None:
            raise ValueError(
                f"{self.fn.name}: {op} outside every vector loop (strip-mining vectorises loops)"
            )
        out = scalar_operand_op(self.isa, op, args, [self._is_vec(a) for a in args], attrs)
        assert not isinstance(out, tuple)  # one-lane programs have no shuffles
        return self._bind_as(out, self._hint(), True, VOCABULARY[op].result_wide)


def is_strip_mined(fn: Function, isa: object) -> bool:
    """Whether ``fn`` is emitted by :class:`StripEmitter` for ``isa``."""
    return isa.strip_mined and fn.lanes == 1


__all__ = ["StripEmitter", "is_strip_mined", "vector_loops"]
