"""How the C emitter reads its tables: the local pointer to each (plain, opaque to every
compiler, or to gcc alone), the copies of ``in_frame`` tables in the function's frame, and the
pointers through which loop bodies read their broadcast constants (:mod:`.const_loads`)."""

from __future__ import annotations

from collections.abc import Callable

from ..dsl.ir import Function, Load, Memory, Table, walk
from . import c_ast as C
from .isa.base import Isa

# the file's macros that hide a table pointer (prefixed with the file's macro root)
OPAQUE_MACRO = "OPAQUE"
GCC_OPAQUE_MACRO = "GCC_OPAQUE"


def broadcast_tables(fn: Function) -> set[Table]:
    """The static tables (not copied into the frame) that ``fn`` reads by broadcasting one
    element into every lane, or that hold its broadcast constants: where a compiler may fold
    the element into an immediate."""
    return {
        s.src
        for s in walk(fn.body)
        if isinstance(s, Load)
        and isinstance(s.src, Table)
        and (s.broadcast or s.src.constants)
        and not s.src.in_frame
    }


class TableReads:
    """The table-reading part of :class:`~.c_emit.CEmitter` (which sets these attributes)."""

    fn: Function
    isa: Isa
    table_name: Callable[[Function, Table], str]
    blocks: list[list[C.Stmt]]
    tables: dict[Table, str]
    _broadcast: set[Table]
    # (loop body, constants table) -> that body and its pointer to the table
    _loop_constants: dict[tuple[int, Table], tuple[list[C.Stmt], C.Name]]

    def _align(self, n: int) -> str:
        raise NotImplementedError

    def _fresh(self, hint: str) -> str:
        raise NotImplementedError

    def _memory(self, src: Memory) -> C.Expr:
        if isinstance(src, Table) and src.constants and len(self.blocks) > 1:
            return self._constants_in_loop(src)
        if isinstance(src, Table):
            # a short local alias of the file-scope table keeps every statement on one line
            if src not in self.tables:
                self.tables[src] = self._fresh(src.name)
            return C.Name(self.tables[src])
        return C.Name(src.name)

    def _constants_in_loop(self, t: Table) -> C.Expr:
        """The pointer through which the loop body being emitted reads the constants table
        ``t``, declared at the top of that body and opaque to gcc there (where the ISA hides
        such tables from gcc): gcc would otherwise hoist every load of the table out of the
        loop and spill what it loaded, which is what reading the constants where they are
        used avoids (see :mod:`.const_loads`)."""
        block = self.blocks[-1]
        key = (id(block), t)
        # the entry holds its block alive, so no later block can take that id
        if key not in self._loop_constants:
            name = self._fresh(t.name)
            table = C.Name(self.table_name(self.fn, t))
            decl: list[C.Stmt] = [C.Decl(f"const {t.lane.c_type} *const", name, table)]
            if self.isa.gcc_opaque_tables:
                decl = [
                    C.Decl(f"const {t.lane.c_type}", f"*{name}", table),
                    C.ExprStmt(C.Call(self.isa.ctx.macro(GCC_OPAQUE_MACRO), (C.Name(name),))),
                ]
            block[0:0] = decl
            self._loop_constants[key] = (block, C.Name(name))
        return self._loop_constants[key][1]

    def _table_alias(self, t: Table, name: str) -> list[C.Stmt]:
        """The local pointer ``name`` through which the body reads table ``t``: the file-scope
        table itself, or for an ``in_frame`` table a copy in this function's frame (made
        here, a vector at a time where the table is whole vectors). The pointer is opaque
        (NTTGEN_OPAQUE) where the ISA wants its tables so, and always for a copy: otherwise
        compilers read the static table again instead of the copy, since they know both
        hold the same values; opaque to gcc alone (NTTGEN_GCC_OPAQUE) for a table read by
        broadcasts, or of broadcast constants, where the ISA asks for that."""
        table: C.Expr = C.Name(self.table_name(self.fn, t))
        out: list[C.Stmt] = []
        if t.in_frame:
            frame = self._fresh(f"{t.name}_frame")
            n, L = len(t.values), self.fn.lanes
            out.append(C.Decl(t.lane.c_type, frame, None, array=n, align=self._align(64)))
            if L > 1 and n % L == 0:
                # vector by vector: a copy loop becomes memcpy or, with gcc, `rep movsq`,
                # whose start-up cost as much as the rest of the function's gap to clang
                # (sntrup761 AVX2 base, gcc 12 on Zen 5: 1,180 -> 1,080 ticks)
                src = self._fresh(f"{t.name}_src")
                out.append(C.Decl(f"const {t.lane.c_type} *const", src, table))
                for k in range(0, n, L):
                    vec = self._fresh(f"{t.name}_row")
                    load = self.isa.load(C.Name(src), C.Int(k), aligned=True)
                    out.append(C.Decl(self.isa.vec_type(), vec, load, const=True))
                    out.append(self.isa.store(C.Name(frame), C.Int(k), C.Name(vec), aligned=True))
            else:
                i = self._fresh("i")
                copy = C.Assign(C.Index(C.Name(frame), C.Name(i)), C.Index(table, C.Name(i)))
                out.append(C.For(i, C.Bin("<", C.Name(i), C.Int(n)), (copy,)))
            table = C.Name(frame)
        hide = t.in_frame or self.isa.opaque_tables
        if hide or (self.isa.gcc_opaque_tables and t in self._broadcast):
            # a pointer the asm may change: `const T *name`
            out.append(C.Decl(f"const {t.lane.c_type}", f"*{name}", table))
            macro = self.isa.ctx.macro(OPAQUE_MACRO if hide else GCC_OPAQUE_MACRO)
            out.append(C.ExprStmt(C.Call(macro, (C.Name(name),))))
        else:
            out.append(C.Decl(f"const {t.lane.c_type} *const", name, table))
        return out
