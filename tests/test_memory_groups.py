"""Grouped loads (:mod:`nttgen.emit.memory_groups`) and the aliasing rule they rely on: the
base multiplications compute the same result when their output array is one of their input
arrays (docs/c-guide.md)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import require_isa
from nttgen.build import cache_dir
from nttgen.cross import build_static, isa_target
from nttgen.emit import c_ast as C
from nttgen.emit.isa import isa_class
from nttgen.emit.memory_groups import Access, AccessLog, group_loads

GENERATED = Path(__file__).resolve().parent.parent / "generated"
LANES = 4


class FourLoads:
    """The ISA hooks the grouping uses: groups of 4, ``registers`` registers."""

    memory_groups = (4,)

    def __init__(self, registers: int = 32) -> None:
        self.registers = registers

    def memory_groups_in(self, kernel: str) -> tuple[int, ...]:
        del kernel
        return self.memory_groups

    def group_type(self, g: int) -> str:
        return f"group{g}_t"

    def load_group(self, base: C.Expr, index: C.Expr, g: int) -> C.Expr:
        return C.Call(f"load{g}", (C.Unary("&", C.Index(base, index)),))

    def group_part(self, group: C.Expr, i: int, g: int) -> C.Expr:
        del g
        return C.Index(C.Member(group, "val"), C.Int(i))


class Block:
    """A block of statements under construction, with its access log."""

    def __init__(self) -> None:
        self.stmts: list[C.Stmt] = []
        self.log = AccessLog()
        self.names = 0

    def load(self, name: str, base: str, const: int, variable: str = "i", table: bool = False):  # type: ignore[no-untyped-def]
        index = C.add(C.Name(variable), C.Int(const))
        self.stmts.append(C.Decl("v", name, C.Call("load", (C.Name(base), index)), const=True))
        self.log.loads[name] = Access(C.Name(base), C.Name(variable), const, table=table)

    def store(self, base: str, const: int, value: str, variable: str = "i") -> None:
        stmt = C.ExprStmt(C.Call("store", (C.Name(base), C.Name(variable), C.Name(value))))
        self.stmts.append(stmt)
        self.log.stores[id(stmt)] = Access(C.Name(base), C.Name(variable), const)

    def compute(self, name: str) -> None:
        self.stmts.append(C.Decl("v", name, C.Call("op", (C.Name(name + "_in"),)), const=True))

    def grouped(self, registers: int = 32) -> list[C.Stmt]:
        def fresh(hint: str) -> str:
            self.names += 1
            return f"{hint}_{self.names}"

        isa = FourLoads(registers)
        return group_loads(self.stmts, self.log, isa, "k", LANES, fresh)  # type: ignore[arg-type]


def group_loads_in(stmts: list[C.Stmt]) -> list[str]:
    """The group loads of a rewritten block, as ``load4(&a[i + c])``."""
    return [
        C.format_expr(s.init)
        for s in stmts
        if isinstance(s, C.Decl) and s.init is not None and s.ctype.startswith("group")
    ]


def interleaved(between: Callable[[Block, int], object]) -> Block:
    """Four loads of a (a[i], a[i+4], ...), each followed by what ``between(block, j)`` adds."""
    b = Block()
    for j in range(4):
        b.load(f"a_{j}", "a", 4 * j)
        between(b, j)
    return b


def test_consecutive_loads_become_one_group_load_and_the_parts_stay_in_place() -> None:
    b = interleaved(lambda b, j: b.compute(f"t_{j}"))
    out = b.grouped()
    assert group_loads_in(out) == ["load4(&a[i])"]
    assert isinstance(out[0], C.Decl) and out[0].ctype == "group4_t"  # before the first load
    parts = [s for s in out if isinstance(s, C.Decl) and s.name.startswith("a_")]
    assert [C.format_expr(s.init) for s in parts] == [f"g_1.val[{j}]" for j in range(4)]
    assert len(out) == len(b.stmts) + 1


def test_a_gap_or_another_index_makes_no_group() -> None:
    b = Block()
    for j, c in enumerate((0, 4, 12, 16)):  # a[i + 8] missing
        b.load(f"a_{j}", "a", c)
    b.load("x_0", "a", 20, variable="j")
    assert group_loads_in(b.grouped()) == []


def test_a_store_that_may_overlap_a_moved_load_stops_the_group() -> None:
    # r[i + 4] is written before a[i + 4] is read: r may be a (an in-place call)
    b = interleaved(lambda b, j: b.store("r", 4, "t") if j == 0 else None)
    assert group_loads_in(b.grouped()) == []
    # a store at another variable index may touch anything
    b = interleaved(lambda b, j: b.store("r", 64, "t", variable="k") if j == 1 else None)
    assert group_loads_in(b.grouped()) == []


def test_stores_to_elements_already_read_let_the_group_form() -> None:
    # the in-place pattern: r[i + 4j] written right after a[i + 4j] was read
    b = interleaved(lambda b, j: b.store("r", 4 * j, "t"))
    assert group_loads_in(b.grouped()) == ["load4(&a[i])"]


def test_tables_are_never_written() -> None:
    b = Block()
    for j in range(4):
        b.load(f"z_{j}", "zetas", 4 * j, table=True)
        b.store("r", 4 * j + 4, "t")
    assert group_loads_in(b.grouped()) == ["load4(&zetas[i])"]


def test_registers_held_by_moved_loads_stay_within_half_the_registers() -> None:
    """Grouped, three loads move above the first computation (two above the second, one above
    the third): the group needs a budget of 3, half of 6 registers, and is refused with 4."""
    assert group_loads_in(interleaved(lambda b, j: b.compute(f"t_{j}")).grouped(6)) == [
        "load4(&a[i])"
    ]
    assert group_loads_in(interleaved(lambda b, j: b.compute(f"t_{j}")).grouped(4)) == []


def test_loops_are_grouped_inside_and_never_across() -> None:
    inner = Block()
    for j in range(4):
        inner.load(f"a_{j}", "a", 4 * j)
    loop = C.For("i", C.Bin("<", C.Name("i"), C.Int(4)), tuple(inner.stmts))
    outer = Block()
    outer.log = inner.log
    outer.load("b_0", "b", 0)
    outer.load("b_1", "b", 4)
    outer.stmts.append(loop)
    outer.load("b_2", "b", 8)
    outer.load("b_3", "b", 12)
    out = outer.grouped()
    assert group_loads_in(out) == []  # the loop may write b
    body = next(s for s in out if isinstance(s, C.For)).body
    assert group_loads_in(list(body)) == ["load4(&a[i])"]


def test_neon_groups_the_loads_of_its_base_multiplications_only() -> None:
    """The checked-in NEON files load groups (ld1 of four registers) in the inner products and
    nowhere in the transforms, where the group's consecutive registers cost moves."""
    text = (GENERATED / "mldsa" / "nttgen_mldsa_neon.c").read_text()
    bodies = text.split("\nvoid nttgen_mldsa_neon_")
    grouped = {b.split("(", 1)[0] for b in bodies[1:] if "vld1q_s32_x4(" in b}
    assert {"basemul_acc", "basemul_acc_cached"} <= grouped
    assert not grouped & {"ntt", "intt", "polymul"}
    assert "vld1q_s32_x4(" not in text.split("nttgen_mldsa_neon_ntt_from(", 1)[1].split("\n}\n")[0]


# ------------------------------------------------------------------------- in-place calls
INPLACE_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "{header}"

#define K 3
typedef {elem} elem;
static uint32_t seed = 12345u;
static elem draw(int64_t bound) {{
    seed = seed * 1664525u + 1013904223u;
    return (elem)((int64_t)(seed >> 8) % (2 * bound + 1) - bound);
}}
static void fill(elem *x, size_t n, int64_t bound) {{
    for (size_t i = 0; i < n; ++i) x[i] = draw(bound);
}}
static int same(const char *what, const elem *x, const elem *y, size_t n) {{
    if (memcmp(x, y, n * sizeof(elem)) == 0) return 0;
    printf("%s: in place differs\n", what);
    return 1;
}}
int main(void) {{
    static elem a[K * {n}], b[K * {n}], c[K * {cache}], r[{n}], x[K * {n}], y[K * {n}];
    int bad = 0;
    fill(a, K * {n}, {bound_a});
    fill(b, K * {n}, {bound_b});
{body}
    if (!bad) printf("ok\n");
    return bad;
}}
"""

CASES = r"""
    {prefix}basemul(r, a, b);
    memcpy(x, a, sizeof a); {prefix}basemul(x, x, b); bad |= same("basemul r = a", r, x, {n});
    memcpy(y, b, sizeof b); {prefix}basemul(y, a, y); bad |= same("basemul r = b", r, y, {n});
    {prefix}basemul_acc(r, a, b, K);
    memcpy(x, a, sizeof a); {prefix}basemul_acc(x, x, b, K);
    bad |= same("basemul_acc r = a", r, x, {n});
    memcpy(y, b, sizeof b); {prefix}basemul_acc(y, a, y, K);
    bad |= same("basemul_acc r = b", r, y, {n});
    for (int i = 0; i < K; ++i) {prefix}basemul_cache(&c[i * {cache}], &b[i * {n}]);
    {prefix}basemul_acc_cached(r, a, b, c, K);
    memcpy(x, a, sizeof a); {prefix}basemul_acc_cached(x, x, b, c, K);
    bad |= same("basemul_acc_cached r = a", r, x, {n});
    memcpy(y, b, sizeof b); {prefix}basemul_acc_cached(y, a, y, c, K);
    bad |= same("basemul_acc_cached r = b", r, y, {n});
"""


@pytest.mark.parametrize("isa", ["c", "avx2", "avx512", "neon", "rvv128"])
@pytest.mark.parametrize("ring", ["mlkem", "mldsa", "newhope512"])
def test_base_multiplications_in_place_equal_out_of_place(ring: str, isa: str) -> None:
    """basemul, basemul_acc and basemul_acc_cached of the checked-in files, called with the
    output array passed as an input array too, write what they write into a separate array."""
    require_isa(isa)
    stem = f"nttgen_{ring}_{isa}"
    manifest = json.loads((GENERATED / ring / f"{stem}.json").read_text())
    params = {p["name"]: p for p in manifest["functions"]["basemul_acc_cached"]["params"]}
    n, cache = params["r"]["length"], params["cache"]["length"]
    main = INPLACE_MAIN.format(
        header=f"{stem}.h",
        elem=params["r"]["elem"],
        n=n,
        cache=cache,
        bound_a=params["a"]["in_range"][1],
        bound_b=params["b"]["in_range"][1],
        body=CASES.format(prefix=f"{stem}_", n=n, cache=cache),
    )
    cls = isa_class(isa)
    target = isa_target(cls)
    sources = {f"{stem}.{ext}": (GENERATED / ring / f"{stem}.{ext}").read_text() for ext in "ch"}
    sources["inplace.c"] = main
    compile_cmd = [*target.pick_compiler(cls.compilers), "-O3", "-std=c99", *cls.cflags]
    exe = build_static(
        target, sources, [(f"{stem}.c", compile_cmd)], "inplace.c", f"inplace-{stem}", cache_dir()
    )
    run = subprocess.run(
        [*target.emulator(), str(exe)], capture_output=True, text=True, check=False, timeout=300
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
