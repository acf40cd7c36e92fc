"""The Module-LWE inner product: r = sum_{i<k} a_i o b_i * beta^-1 over k pairs of NTT-domain
polynomials (``basemul_acc``), and its cached form (``basemul_cache`` once per b, then
``basemul_acc_cached`` for every a it meets: ML-KEM's A^T s and t^T r, ML-DSA's A z).

The count k is a run-time value, so the loop over it cannot be unrolled, and the analysis of
a loop whose trip count it does not know must widen whatever the loop accumulates: without
help, every product's sum is reduced. Instead the products are summed in groups of G, G the
largest number of products whose exact sum the analysis proves fits (at most
:data:`GROUP_LIMIT`): each group is a loop of at most G trips, which the analysis runs
exactly (:class:`nttgen.dsl.ir.Count`'s ``cap``), and only the sum of groups is reduced as
the loop over groups requires. With 16-bit lanes and degree-2 factors the products are
exact double-width multiply-adds (``madd``), with 32-bit lanes and a complete NTT exact 64-bit
products (``mulw``), and each group costs one Montgomery reduction per coefficient
(``mredw``); otherwise each product is a Montgomery product and a group's sum is reduced
once.

The multiplication cache holds what every product by one b would otherwise recompute
(:meth:`nttgen.programs.pointwise.BaseMul.cache_values`): g * b1 for degree-2 factors, the
twisted b * q^-1 mod beta for a complete NTT (read where the ISA declares
``twist_products``: a Montgomery product by a twist from memory, ``montmul_twist``, analysed
for any twist a caller may pass); the cached sum also takes its a in (-q, q), as the schemes'
rows are, so its groups are larger.
"""

from __future__ import annotations

from collections.abc import Callable

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Count, LoopVar, ScalarParam, Value
from ..interp import transfer
from ..plan.layout import MemOrder
from ..plan.ntt import NttAlgebra
from .lazy import Reducer
from .pointwise import BaseMul, Chunk, base_product

GROUP_LIMIT = 16
"""The most products summed between reductions: the schemes sum at most 8, and the analysis
runs each group's loop once per trip."""

SCHEME_K = 4
"""ML-KEM's largest k. Where groups of at least this many products already land in the
result's range, groups stop there, so that ML-KEM's inner products need no final reduction;
otherwise they are as large as the lanes allow (and the result is reduced once at the end)."""

SCHEME_K_MAX = 8
"""The largest k the schemes use (ML-DSA's A of 8 rows by 7 columns). Where one group holds
this many products, the groups after the first leave the loop over chunks (see
:func:`_sum_in_registers`)."""

Terms = Callable[[Affine, Chunk], list[Value]]


def program_basemul_cache(
    S: Builder,
    alg: NttAlgebra,
    order: MemOrder,
    contract: tuple[int, int],
    target: tuple[int, int] | None = None,
) -> None:
    """basemul_cache(cache, b): the multiplication cache of one NTT-domain polynomial b in
    ``contract`` (see :meth:`~nttgen.programs.pointwise.BaseMul.cache_values`), n/2 entries
    for degree-2 factors and n for a complete NTT, in this ISA's order; each entry reduced
    into ``target`` where its range could leave it."""
    bm = BaseMul(S, alg, order)
    cache = S.output("cache", bm.cache_length, doc="multiplication cache of b")
    b = S.input("b", alg.ring.n, contract, doc="NTT domain")
    red = Reducer(S)

    def body(ch: Chunk) -> None:
        value = bm.cache_values(bm.load(b, ch.addr, ch.offsets, "b"), ch.gamma)
        if target is not None and alg.ring.base_degree == 2:
            value = red.fit_to(value, target)
        S.store(cache, ch.cache_at, value)

    bm.for_each_chunk(body)


def program_basemul_acc(
    S: Builder,
    alg: NttAlgebra,
    order: MemOrder,
    contract: tuple[int, int],
    *,
    products_outer: bool,
    target: tuple[int, int] | None = None,
    cache_contract: tuple[int, int] | None = None,
    a_contract: tuple[int, int] | None = None,
    wide: bool = True,
    twists: bool = True,
    chunks: int = 1,
) -> None:
    """basemul_acc(r, a, b, k), or with ``cache_contract`` basemul_acc_cached(r, a, b,
    cache, k): r = sum_i a_i o b_i * beta^-1 over k >= 1 pairs of NTT-domain polynomials in
    ``contract`` stored one after another (the a_i in ``a_contract`` where given; and the k
    caches of the b_i, in ``cache_contract``). Products are summed in groups (see the module
    docstring); the result is reduced at the end only if it could leave ``target`` (the range
    a single base product has, so that the inverse NTT sees one NTT-domain product contract).

    ``products_outer`` loops over the k products outside the loop over coefficients and keeps
    the sum in ``r`` (best for scalar code, which compilers vectorise); otherwise each chunk's
    sum stays in registers while the loop over k runs inside (best for explicit SIMD).
    ``wide`` sums exact double-width products where the ring allows it (degree-2 factors,
    16-bit lanes, products inside); the analysis refuses it (:class:`BoundsError`) where
    even one product's sum would not reduce into a lane, and the caller then builds the
    lane sums instead. ``twists``: a complete NTT's cached sum reads b's twist from the
    cache (else it multiplies a and b as two variables). ``chunks``: how many chunks one
    step of the loop over chunks sums at once (their loops over k shared)."""
    n = alg.ring.n
    r = S.output("r", n, doc="sum of products in the NTT domain (times beta^-1)")
    k = ScalarParam("k", 1, "number of products, at least 1")
    a = S.input("a", n, a_contract or contract, per=k, doc="k polynomials in the NTT domain")
    b = S.input("b", n, contract, per=k, doc="k polynomials in the NTT domain")
    bm = BaseMul(S, alg, order)
    cache = None
    if cache_contract is not None:
        cache = S.input(
            "cache", bm.cache_length, cache_contract, per=k, doc="k caches (basemul_cache)"
        )
    S.fn.params.append(k)
    red = Reducer(S)
    wide = wide and wide_sums_apply(alg, S, products_outer)
    terms = _terms(S, bm, red, a, b, cache if twists or bm.degree == 2 else None, wide)
    if products_outer:
        _sum_in_memory(S, bm, red, k, r, terms, target)
    else:
        _sum_in_registers(S, bm, red, k, r, terms, target, wide, chunks)


def wide_sums_apply(alg: NttAlgebra, S: Builder, products_outer: bool) -> bool:
    """Whether the products may be summed as exact double-width values, each chunk's sum in
    registers: degree-2 factors in 16-bit lanes (``madd``: two products per double-width
    lane), and complete NTTs in 32-bit lanes (``mulw``: a 64-bit product is one
    instruction per two lanes everywhere, where a Montgomery product of 32-bit lanes takes
    three multiplications or more). A complete NTT in 16-bit lanes keeps lane sums: its
    Montgomery product by a cached twist is as cheap as a widened product."""
    if products_outer:
        return False
    return (alg.ring.base_degree, S.lane.bits) in ((2, 16), (1, 32))


def _terms(
    S: Builder,
    bm: BaseMul,
    red: Reducer,
    a: Buffer,
    b: Buffer,
    cache: Buffer | None,
    wide: bool,
) -> Terms:
    """The summands of one row (polynomial pair) of one chunk, one per register of the
    chunk: exact double-width sums (``wide``: ``madd`` of degree-2 factors, ``mulw`` of
    complete NTTs), else Montgomery base products."""
    n = bm.alg.ring.n

    def terms(row: Affine, ch: Chunk) -> list[Value]:
        xa = bm.load(a, row * n + ch.addr, ch.offsets, "a")
        xb = bm.load(b, row * n + ch.addr, ch.offsets, "b")
        if bm.degree == 1:
            pairs = list(zip(xa, xb, strict=True))
            if wide:
                return [S.mulw(x, y) for x, y in pairs]
            if cache is None:
                return [S.montmul_var(x, y) for x, y in pairs]
            at = row * bm.cache_length + ch.cache_at
            twists = [S.load(cache, at + off, hint="cache") for off in ch.offsets]
            # montmul's instructions, analysed for any twist a caller may pass
            return [S.montmul_twist(x, y, c) for (x, y), c in zip(pairs, twists, strict=True)]
        c = None
        if cache is not None:
            c = S.load(cache, row * bm.cache_length + ch.cache_at, hint="cache")
        assert ch.gamma is not None
        if wide:
            if c is None:
                c = bm.cache_values(xb, ch.gamma)
            return [S.madd(xa[0], xb[0], xa[1], c), S.madd(xa[0], xb[1], xa[1], xb[0])]
        return base_product(S, red, xa, xb, ch.gamma, c)

    return terms


def group_size(
    S: Builder,
    first: list[Value],
    wide: bool,
    room: int,
    target: tuple[int, int] | None = None,
) -> int:
    """How many summands like ``first`` (one row's) may be summed exactly before a
    reduction: for double-width sums as long as the sum and its Montgomery reduction fit
    their lanes; for lane sums as long as the sum stays within ``room``. At least 1, at most
    :data:`GROUP_LIMIT`; no more than land in ``target`` where that is at least
    :data:`SCHEME_K`, with room for a reduced sum of the groups before (so that neither one
    group nor several need a final reduction)."""
    m = max(S.bound(x).magnitude for x in first)
    if m == 0:
        return GROUP_LIMIT

    def flushed(g: int) -> tuple[int, int]:
        total = (-g * m, g * m)
        return transfer.mredw(total, S.arith) if wide else total

    def fits(g: int) -> bool:
        if not wide:
            return g * m <= room
        total = (-g * m, g * m)
        return S.lane.wide.fits(*total) and S.lane.fits(*flushed(g))

    reduced = transfer.barrett((S.lane.min, S.lane.max), S.arith)

    def lands(g: int) -> bool:
        lo, hi = transfer.add(flushed(g), reduced)
        return target is not None and target[0] <= lo and hi <= target[1]

    g = 1
    while g < GROUP_LIMIT and fits(g + 1):
        g += 1
    landing = g
    while landing and not lands(landing):
        landing -= 1
    return landing if landing >= SCHEME_K else g


def _accumulate(S: Builder, red: Reducer, acc: Value, part: Value) -> Value:
    """acc + part, reduced first only where the sum could overflow (inside a group, never,
    unless even one product leaves no room: q close to the lane's limit)."""
    x, y = red.make_room(acc, part, need_diff=False)
    return S.add(x, y, hint="acc")


def _sum_in_registers(
    S: Builder,
    bm: BaseMul,
    red: Reducer,
    k: ScalarParam,
    r: Buffer,
    terms: Terms,
    target: tuple[int, int] | None,
    wide: bool,
    chunks: int,
) -> None:
    """Each chunk's sum in registers: rows 0..G-1 summed exactly (a loop of at most G - 1
    trips after the first row), reduced once (``mredw`` for double-width sums); then the
    groups after the first, their sums added as the analysis of that loop requires; the
    result reduced into ``target`` where it could leave it.

    Where G is at least :data:`SCHEME_K_MAX`, every k the schemes use is one group, and
    the later groups (k > G) make passes of their own over r after the loop over chunks,
    each adding one group's sum to r and bringing it back into ``target``: nested in the
    loop over chunks, their loop kept its counters and constants live across the loop over
    rows that every call runs, and compilers spilled for it (ML-DSA k = 5 on NEON: 58 more
    instructions; on AVX2 the cached sum k = 3 took 1.5 times as long). Smaller groups stay
    nested: there k > G is common, and a pass over r costs more than the registers."""
    size = 0

    def finish(x: Value) -> Value:
        return x if target is None else red.fit_to(x, target)

    def row_terms(row: Affine, group_of: list[Chunk]) -> list[Value]:
        return [x for ch in group_of for x in terms(row, ch)]

    def group(start: Affine, group_of: list[Chunk]) -> list[Value]:
        nonlocal size
        first = row_terms(start, group_of)
        if not size:
            size = group_size(S, first, wide, S.lane.max, target)
        if size > 1:
            regs = [S.var(x, hint="w" if wide else "acc") for x in first]
            plus = S.addw if wide else (lambda x, y: _accumulate(S, red, x, y))

            def more(j: LoopVar) -> None:
                for reg, x in zip(regs, row_terms(start + j + 1, group_of), strict=True):
                    S.set(reg, plus(S.get(reg), x))

            S.loop(Count(-1, k, offset=start, cap=size - 1), more, hint="i")
            first = [S.get(reg) for reg in regs]
        return [S.mredw(x) for x in first] if wide else first

    def later_groups() -> Count:
        return Count(-size, k, step=size)

    def store(group_of: list[Chunk], results: list[Value]) -> None:
        for ch in group_of:
            mine, results = results[: len(ch.offsets)], results[len(ch.offsets) :]
            bm.store(r, ch.addr, ch.offsets, mine)

    def body(group_of: list[Chunk]) -> None:
        sums = group(Affine(0), group_of)
        if size < SCHEME_K_MAX:
            regs = [S.var(x, hint="acc") for x in sums]

            def next_group(g: LoopVar) -> None:
                later = group(Affine.of(g) * size + size, group_of)
                for reg, x in zip(regs, later, strict=True):
                    S.set(reg, _accumulate(S, red, S.get(reg), x))

            S.loop(later_groups(), next_group, hint="g")
            sums = [S.get(reg) for reg in regs]
        store(group_of, [finish(x) for x in sums])

    bm.for_each_chunk_group(body, chunks)
    if size < SCHEME_K_MAX:
        return

    def pass_over_r(g: LoopVar) -> None:
        def add_group(group_of: list[Chunk]) -> None:
            sums = group(Affine.of(g) * size + size, group_of)
            before = [x for ch in group_of for x in bm.load(r, ch.addr, ch.offsets, "acc")]
            added = [_accumulate(S, red, x, y) for x, y in zip(before, sums, strict=True)]
            store(group_of, [finish(x) for x in added])

        bm.for_each_chunk_group(add_group, chunks)

    S.loop(later_groups(), pass_over_r, hint="g")


def _sum_in_memory(
    S: Builder,
    bm: BaseMul,
    red: Reducer,
    k: ScalarParam,
    r: Buffer,
    terms: Terms,
    target: tuple[int, int] | None,
) -> None:
    """The sum kept in r: row 0's products stored, then groups of G rows added coefficient
    by coefficient with no reduction (a loop of at most G trips), and before each group after
    the first the sums reduced where that group could overflow them."""
    sizes: list[int] = []
    widest: list[int] = []

    def first(ch: Chunk) -> None:
        prod = terms(Affine(0), ch)
        m = max(S.bound(x).magnitude for x in prod)
        widest.append(m)
        sizes.append(group_size(S, prod, False, S.lane.max - max(S.arith.q, m)))
        bm.store(r, ch.addr, ch.offsets, prod)

    bm.for_each_chunk(first)
    size = min(sizes)
    # what may stay unreduced between groups: the next group's sum must still fit
    room = S.lane.max - size * max(widest)

    def add_rows(start: Affine) -> None:
        def row(j: LoopVar) -> None:
            def step(ch: Chunk) -> None:
                prod = terms(start + j, ch)
                acc = bm.load(r, ch.addr, ch.offsets, "acc")
                sums = [_accumulate(S, red, x, p) for x, p in zip(acc, prod, strict=True)]
                bm.store(r, ch.addr, ch.offsets, sums)

            bm.for_each_chunk(step)

        S.loop(Count(0, k, offset=start, cap=size), row, hint="i")

    add_rows(Affine(1))

    def next_group(g: LoopVar) -> None:
        if max(map(abs, S.bounds.buffer_hull(r))) > room:
            _rewrite(S, bm, r, lambda x: red.within(x, room))
        add_rows(Affine.of(g) * size + size + 1)

    S.loop(Count(-size - 1, k, step=size), next_group, hint="g")
    hull = S.bounds.buffer_hull(r)
    if target is not None and not target[0] <= hull[0] <= hull[1] <= target[1]:
        S.comment("bring the sum into the range of one base product")
        _rewrite(S, bm, r, lambda x: red.fit_to(x, target))


def _rewrite(S: Builder, bm: BaseMul, r: Buffer, f: Callable[[Value], Value]) -> None:
    """r <- f(r), chunk by chunk."""

    def body(ch: Chunk) -> None:
        acc = bm.load(r, ch.addr, ch.offsets, "acc")
        bm.store(r, ch.addr, ch.offsets, [f(x) for x in acc])

    bm.for_each_chunk(body)
