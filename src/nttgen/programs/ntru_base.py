"""The base stage of the Good–Rader pipeline: products of the pieces modulo x^m - t_k.

Each pair of pieces is multiplied modulo x^m - t_k, pieces in lanes (an L x L transpose,
:mod:`.ntru_transpose`, turns the forward's rows into vectors of one coefficient of L pieces
and back), by one of the products ``NtruConfig.base_products`` names: "wide"
(:func:`twisted_product`: exact sums in double-width lanes, one Montgomery reduction per
coefficient), "karatsuba" (:func:`karatsuba_product`: Karatsuba over Montgomery products by
precomputed pairs, :class:`Products`, which the Schönhage pipelines' leaves use too) or
"pairs" (:func:`program_base_pairs`: coefficient pairs in adjacent lanes for ``pair_madd``).
Where every t_k is a square the pieces first split into two halves of degree m/2
(Cooley–Tukey), and "pairs" multiplies the halves by :class:`LoopedPairProduct`. See
:mod:`.ntru` for the stage in the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, LoopVar, Value
from ..dsl.semantics import zip_lanes
from .lazy import Reducer
from .ntru_config import BASE_PRODUCTS, BaseProducts
from .ntru_lowering import negate, twisted_tables
from .ntru_shape import GoodRaderShape
from .ntru_transpose import load_rows, transpose

KARATSUBA_LEAF = 2
"""Base products of at most this many coefficients are schoolbook; larger ones Karatsuba.
On AVX2 (sntrup761 polymul, one harness): schoolbook 16 x 16 7,770 ticks, Karatsuba down to
8: 7,400, to 4: 7,010, to 2: 6,950 (the Montgomery products dominate; the extra additions
and reductions of the deeper levels cost less than the products they save)."""


class Products:
    """Full products of coefficient vectors (lane-wise polynomials), times beta^-1: Karatsuba
    halving down to ``KARATSUBA_LEAF`` coefficients, schoolbook below, with the reductions the
    interval analysis needs. Shared by the base stages of every NTRU Prime program."""

    def __init__(self, S: Builder, red: Reducer) -> None:
        self.S, self.red = S, red
        self.qinv = S.const(S.arith.qinv, hint="qinv")

    def times_qinv(self, y: list[Value]) -> list[Value]:
        """y_j * q^-1 mod beta once per coefficient: each product by y_j is then a Montgomery
        product by a precomputed pair (three multiplications instead of four)."""
        return [self.S.mullo(v, self.qinv, hint="bq") for v in y]

    def accumulate(self, acc: list[Value | None], k: int, x: Value, sub: bool = False) -> None:
        """acc[k] += x (or -= x), reducing first where the sum could overflow."""
        S, red = self.S, self.red
        prev = acc[k]
        if prev is None:
            acc[k] = negate(S, red, (x, -1)) if sub else x
            return
        u, w = red.make_room(prev, x, need_sum=not sub, need_diff=sub)
        acc[k] = S.sub(u, w, hint="acc") if sub else S.add(u, w, hint="acc")

    def product(self, x: list[Value], y: list[Value], yq: list[Value]) -> list[Value]:
        """The full product (2n - 1 coefficients, times beta^-1) of two n-coefficient
        polynomials x and y (``yq``: :meth:`times_qinv` of y): Karatsuba halving down to
        ``KARATSUBA_LEAF`` coefficients, then schoolbook."""
        S, red, accumulate = self.S, self.red, self.accumulate
        n = len(x)
        out: list[Value | None] = [None] * (2 * n - 1)
        if n <= KARATSUBA_LEAF or n % 2:
            for i in range(n):
                for j in range(n):
                    accumulate(out, i + j, S.montmul(x[i], y[j], yq[j], hint="p"))
            return out  # type: ignore[return-value]
        h = n // 2

        def halves_sum(v: list[Value]) -> list[Value]:
            res = []
            for lo, hi in zip(v[:h], v[h:], strict=True):
                lo, hi = red.make_room(lo, hi, need_diff=False)
                res.append(S.add(lo, hi, hint="ks"))
            return res

        z0 = self.product(x[:h], y[:h], yq[:h])
        z2 = self.product(x[h:], y[h:], yq[h:])
        ys = halves_sum(y)
        z1 = self.product(halves_sum(x), ys, self.times_qinv(ys))
        for k, val in enumerate(z0):
            accumulate(out, k, val)
        for k, val in enumerate(z2):
            accumulate(out, k + 2 * h, val)
        for k, val in enumerate(z1):
            accumulate(out, k + h, val)
        for k, val in enumerate(z0):
            accumulate(out, k + h, val, sub=True)
        for k, val in enumerate(z2):
            accumulate(out, k + h, val, sub=True)
        return out  # type: ignore[return-value]


def _extension(
    S: Builder, red: Reducer, y: list[Value], t: tuple[Value, Value]
) -> dict[int, Value]:
    """y' for the product modulo x^n - t: y'_j = y_j for 0 <= j < n and t * y_(j+n) for
    -n < j < 0 (x^n = t), y within q first."""
    n = len(y)
    y = [red.within(v, S.arith.q) for v in y]
    ext = {j: y[j] for j in range(n)}
    for j in range(1, n):
        ext[j - n] = S.mulconst(y[j], t[0], t[1], hint="yt")
    return ext


def _coefficient(S: Builder, x: list[Value], ext_at: Callable[[int], Value]) -> Value:
    """sum_i x_i * ext_at(i) times beta^-1 (``ext_at(i)`` = y'_(k-i) for coefficient k): one
    exact sum in double-width lanes (``madd`` of two products at a time, ``addw``) and one
    Montgomery reduction (``mredw``)."""
    n = len(x)
    acc: Value | None = None
    for i in range(0, n, 2):
        if i + 1 < n:
            w = S.madd(x[i], ext_at(i), x[i + 1], ext_at(i + 1), hint="w")
        else:  # an odd n: the last product alone
            zero = S.const(0, hint="zero")
            w = S.madd(x[i], ext_at(i), zero, zero, hint="w")
        acc = w if acc is None else S.addw(acc, w, hint="acc")
    assert acc is not None
    return S.mredw(acc, hint="c")


def twisted_product(
    S: Builder, red: Reducer
) -> Callable[[list[Value], list[Value], tuple[Value, Value]], list[Value]]:
    """The product of pieces modulo x^n - t with per-lane t (the pair that multiplies by t):
    c_k = sum_i x_i y'_(k-i) times beta^-1, where y'_j = y_j for j >= 0 and t * y_(j+n) below
    (x^n = t), so each coefficient is one exact sum of n products in double-width lanes
    (``madd`` of two products at a time, ``addw``) and one Montgomery reduction (``mredw``):
    n^2 products but n reductions and no reduction between the additions; against
    Karatsuba's 3 multiplications per product and a reduction every few additions it needs
    about half the multiplications (x86 ``vpmaddwd`` forms 2 products per lane). Returns the
    function (x, y, t) -> the n coefficient vectors."""

    def product(x: list[Value], y: list[Value], t: tuple[Value, Value]) -> list[Value]:
        ext = _extension(S, red, y, t)
        x = red.for_sums(x, len(x), max(S.bound(v).magnitude for v in ext.values()))
        return [_coefficient(S, x, lambda i, k=k: ext[k - i]) for k in range(len(x))]

    return product


class LoopedTwistedProduct:
    """:func:`twisted_product` of ``count`` products of n coefficients, each as a loop over
    its coefficients: :meth:`wrap` (in one loop) stores y' of product v to a scratch array,
    2n - 1 vectors, y'_(1-n) first; :meth:`product` (in a later loop: the interval analysis
    commits a loop's stores when it ends) runs trip k of its loop on the n values of y' that
    coefficient k sums, read back from there. The same operations per coefficient in about
    1/n of the code (AVX-512's unrolled products of 16 coefficients took 18 KB)."""

    def __init__(self, S: Builder, red: Reducer, n: int, count: int) -> None:
        self.S, self.red, self.n = S, red, n
        self.stride = (2 * n - 1) * S.fn.lanes
        self.scratch = S.local("ye", count * self.stride)
        self.worst = 0

    def wrap(self, v: Affine, y: list[Value], t: tuple[Value, Value]) -> None:
        """Store y' of product v (y: its n coefficient vectors, t: x^n = t)."""
        S, n, L = self.S, self.n, self.S.fn.lanes
        ext = _extension(S, self.red, y, t)
        for j in range(1 - n, n):
            self.worst = max(self.worst, S.bound(ext[j]).magnitude)
            S.store(self.scratch, v * self.stride + (j + n - 1) * L, ext[j])

    def product(self, v: Affine, x: list[Value], store: Callable[[Affine, Value], None]) -> None:
        """Coefficient k of product v (x: its n coefficient vectors) to ``store(k, c_k)``."""
        S, n, L = self.S, self.n, self.S.fn.lanes
        x = self.red.for_sums(x, n, self.worst)

        def coefficient(k: LoopVar) -> None:
            at = v * self.stride + (Affine.of(k) + (n - 1)) * L  # y'_k
            store(Affine.of(k), _coefficient(S, x, lambda i: S.load(self.scratch, at + -i * L)))

        S.loop(n, coefficient, hint="k", unroll=False)


def pair_lane_order(lanes: int, zip_group: int) -> list[int]:
    """The lanes of :class:`LoopedPairProduct`'s results: lane w holds input lane [w]. An
    interleave of two coefficient vectors pairs lane i of both in one 32-bit element, the
    first half of each 2^zip_group group in the first output; the reduction puts the two
    outputs' elements back side by side."""
    tags = np.arange(lanes, dtype=np.int64)
    lo, hi = zip_lanes(0, zip_group, 0, tags, tags)
    return [int(t) for e in range(lanes // 2) for t in (lo[2 * e], hi[2 * e])]


class LoopedPairProduct:
    """:class:`LoopedTwistedProduct` with the pairs interleaved once: ``count`` products of
    n coefficients (n even), each a loop over its coefficients. :meth:`wrap` stores, for each
    j, y'_j and y'_(j-1) interleaved (``zip``: two vectors whose 32-bit elements are the
    pairs (y'_j, y'_(j-1)) of half the lanes each), :meth:`product` interleaves x's pairs
    (x_2u, x_2u+1) once and runs trip k of its loop as n ``pair_madd`` of them with the stored
    pairs j = k - 2u, two exact sums (one per half of the lanes) and one ``pair_mred``.
    The twisted product needs every interleave n times over (4 per two products); this one
    forms 2n - 2 + n/2 of them per product. The reduction puts the two halves' lanes back
    side by side, so the results come out with their lanes permuted: lane w holds the lane
    :func:`pair_lane_order` [w] of the inputs."""

    def __init__(self, S: Builder, red: Reducer, n: int, count: int, zip_group: int) -> None:
        if n % 2:
            raise ValueError(f"interleaved pair products need an even length, not {n}")
        self.S, self.red, self.n, self.g = S, red, n, zip_group
        L = S.fn.lanes
        self.stride = 2 * (2 * n - 2) * L
        self.scratch = S.local("yz", count * self.stride)
        self.worst = 0

    def _zip(self, a: Value, b: Value, hint: str) -> tuple[Value, Value]:
        return self.S.zip(a, b, w=0, g=self.g, inverse=0, hints=(hint, hint))

    def wrap(self, v: Affine, y: list[Value], t: tuple[Value, Value]) -> None:
        """Store the interleaved pairs of y' of product v (y: its n coefficient vectors,
        t: x^n = t): (y'_j, y'_(j-1)) for 2 - n <= j < n, two vectors each."""
        S, n, L = self.S, self.n, self.S.fn.lanes
        ext = _extension(S, self.red, y, t)
        self.worst = max(self.worst, *(S.bound(e).magnitude for e in ext.values()))
        for j in range(2 - n, n):
            at = v * self.stride + (j + n - 2) * 2 * L
            lo, hi = self._zip(ext[j], ext[j - 1], "yz")
            S.store(self.scratch, at, lo)
            S.store(self.scratch, at + L, hi)

    def product(self, v: Affine, x: list[Value], store: Callable[[Affine, Value], None]) -> None:
        """Coefficient k of product v (x: its n coefficient vectors), lanes in
        :func:`pair_lane_order`, to ``store(k, c_k)``."""
        S, n, L = self.S, self.n, self.S.fn.lanes
        x = self.red.for_sums(x, n, self.worst)
        xz = [self._zip(x[2 * u], x[2 * u + 1], "xz") for u in range(n // 2)]

        def coefficient(k: LoopVar) -> None:
            sums: list[Value | None] = [None, None]
            for u, pair in enumerate(xz):
                at = v * self.stride + (Affine.of(k) + (n - 2 - 2 * u)) * (2 * L)  # j = k - 2u
                for half in (0, 1):
                    w = S.pair_madd(pair[half], S.load(self.scratch, at + half * L), hint="w")
                    acc = sums[half]
                    sums[half] = w if acc is None else S.pair_add(acc, w, hint="acc")
            lo, hi = sums
            assert lo is not None and hi is not None
            store(Affine.of(k), S.pair_mred(lo, hi, hint="c"))

        S.loop(n, coefficient, hint="k", unroll=False)


def karatsuba_product(
    S: Builder, red: Reducer
) -> Callable[[list[Value], list[Value], tuple[Value, Value]], list[Value]]:
    """The product of pieces modulo x^n - t with per-lane t, as :func:`twisted_product`
    computes it, from lane arithmetic only: the full product by :class:`Products`
    (Karatsuba, Montgomery products by b's coefficients pre-multiplied by q^-1), then the
    upper half wrapped onto the lower times t."""
    prod = Products(S, red)

    def product(x: list[Value], y: list[Value], t: tuple[Value, Value]) -> list[Value]:
        full = prod.product(x, y, prod.times_qinv(y))
        n = len(x)
        res: list[Value] = []
        for k in range(n):
            if k + n >= len(full):
                res.append(full[k])
                continue
            wrapped = S.mulconst(full[k + n], t[0], t[1], hint="tw")
            u, w = red.make_room(full[k], wrapped, need_diff=False)
            res.append(S.add(u, w, hint="c"))
        return res

    return product


def program_base(
    S: Builder,
    shape: GoodRaderShape,
    contract_a: tuple[int, int],
    contract_b: tuple[int, int],
    zip_group: int | None = None,
    products: BaseProducts = "karatsuba",
    looped: bool = False,
) -> None:
    """base(r, a, b): row k of r = (row k of a) * (row k of b) * beta^-1 mod (x^m - t_k), for
    every row (the padding rows have t = 0 and zero inputs, and come out zero; split pieces
    multiply no padding where :func:`packs_last_group`). ``zip_group``: the ISA's
    interleave group in lane bits, for the transposes (None: ``shuffle`` only);
    ``products``: "wide", by :func:`twisted_product` (double-width sums); "karatsuba", by
    :func:`karatsuba_product`; "pairs", by :func:`program_base_pairs` where its shape allows
    (:func:`pairs_fit`), by :class:`LoopedPairProduct` for split pieces where the ISA
    interleaves (a ``zip_group``), else as "karatsuba". ``looped``: the "wide" products of split
    pieces as loops over their coefficients (:class:`LoopedTwistedProduct`)."""
    if products not in BASE_PRODUCTS:
        raise ValueError(f"base products {products!r}: choose one of {', '.join(BASE_PRODUCTS)}")
    if products == "pairs" and pairs_fit(shape):
        program_base_pairs(S, shape, contract_a, contract_b, zip_group)
        return
    m, L, rows = shape.m, shape.lanes, shape.rows
    r = S.output("r", rows * m, doc="piecewise products (times beta^-1)")
    a = S.input("a", rows * m, contract_a, doc="pieces")
    b = S.input("b", rows * m, contract_b, doc="pieces")
    red = Reducer(S)
    q = S.arith.q

    if shape.split_roots is None:
        piece_t = twisted_tables(
            S, "t", shape.points + [0] * (rows - len(shape.points)), "t_k of x^m - t_k, per piece"
        )

    def load_piece(src: Buffer, k0: Affine) -> list[Value]:
        """Coefficient i of pieces k0 .. k0+L-1, for i < m, within q."""
        return load_rows(S, src, k0, m, m, zip_group, red)

    product = twisted_product(S, red) if products == "wide" else karatsuba_product(S, red)
    looped = looped and products == "wide"

    roots = shape.split_roots
    groups = rows // L
    packed = roots is not None and packs_last_group(shape)
    # split pieces as pair sums: the products' lanes come out permuted (pair_lane_order);
    # the join's constants follow them, and its rows go back to where their pieces belong
    paired = products == "pairs" and roots is not None and zip_group is not None and L > 1
    order = pair_lane_order(L, zip_group) if paired and zip_group is not None else list(range(L))
    if roots is not None:
        pad = [0] * (rows - len(roots))
        half = m // 2
        root = twisted_tables(
            S, "s", roots + pad, f"s_k, s_k^2 = t_k: x^{m} - t_k = (x^{half} - s_k)(x^{half} + s_k)"
        )
        inverses = [pow(x, -1, q) for x in roots] + pad
        inverses = [inverses[g + i] for g in range(0, rows, L) for i in order]
        root_inv = twisted_tables(
            S, "si", inverses, "1 / s_k" + (", in the products' lane order" if paired else "")
        )
        # the wrap constants of each half-group (see half_groups): s_k (x^h = s_k), then -s_k
        signed = [
            u * sign
            for g in range(0, rows, L)
            for sign in (1, -1)
            for u in (roots + pad)[g : g + L]
        ]
        if packed:  # the last group's pieces in use, +s_k in the low lanes, -s_k in the high
            used = (roots + pad)[(groups - 1) * L : (groups - 1) * L + L // 2]
            signed = signed[: 2 * (groups - 1) * L] + used + [-u for u in used]
        half_root = twisted_tables(S, "sw", signed, "s_k, then -s_k, for each group of pieces")

    def split(v: list[Value], s: tuple[Value, Value]) -> tuple[list[Value], list[Value]]:
        """v mod (x^h - s) and v mod (x^h + s), h = len(v) / 2: lo + s*hi and lo - s*hi."""
        h = len(v) // 2
        plus, minus = [], []
        for lo, hi in zip(v[:h], v[h:], strict=True):
            lo, t = red.make_room(lo, S.mulconst(hi, s[0], s[1], hint="sh"))
            plus.append(S.add(lo, t, hint="sp"))
            minus.append(S.sub(lo, t, hint="sm"))
        return plus, minus

    def store_rows(k0: Affine, res: list[Value]) -> None:
        """Coefficient vectors of pieces k0 .. k0+L-1 back to rows."""
        for h in range(0, m, L):
            tile = res[h : h + L]
            back = transpose(S, tile, zip_group) if L > 1 else tile
            for rr, val in enumerate(back):
                S.store(r, k0 * m + order[rr] * m + h, val)

    if roots is None:

        def group(v: LoopVar) -> None:
            k0 = Affine.of(v) * L
            x, y = load_piece(a, k0), load_piece(b, k0)
            t = piece_t(k0)
            store_rows(k0, product(x, y, t))

        # a loop, not unrolled: the body is some 2,500 instructions on AVX2, and the 7 copies
        # overflowed the instruction cache (sntrup761 polymul 8,832 unrolled, 7,943 looped)
        S.loop(groups, group, hint="grp", unroll=False)
        return

    # Cooley–Tukey, in three loops that pass the halves through memory: split each group's
    # pieces, multiply the halves in one loop, then 2c = (c+ + c-) + x^h (c+ - c-)/s.
    # With both halves' products inline, their values spilled (AVX-512, sntrup761: the base
    # took 3,400 of 6,500 ticks). Half-group 2g holds group g's halves mod x^h - s_k, 2g + 1
    # those mod x^h + s_k, each h vectors of L pieces; where the last group's pieces in use
    # fill at most half its lanes, its two halves share one half-group (packs_last_group).
    half = m // 2
    half_groups = 2 * groups - 1 if packed else 2 * groups
    block = half * L  # one half-group
    xs, ys, cs = (S.local(name, 2 * groups * block) for name in ("xs", "ys", "cs"))

    def split_group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        s = root(k0)
        for src, dst in ((a, xs), (b, ys)):
            plus, minus = split(load_piece(src, k0), s)
            for i, val in enumerate(plus + minus):
                S.store(dst, k0 * m + i * L, val)

    def pack(dst: Buffer) -> None:
        """The last group's two halves into its first half-group: the low lanes (its pieces
        in use) of the half mod x^h - s_k, then those of the half mod x^h + s_k, one
        interleave at lane distance L/2 per vector."""
        at = (2 * groups - 2) * block
        for i in range(half):
            plus = S.load(dst, at + i * L, hint="hp")
            minus = S.load(dst, at + block + i * L, hint="hm")
            both, _ = S.shuffle(plus, minus, L // 2, hints=("hb", "hx"))
            S.store(dst, at + i * L, both)

    def unpack() -> None:
        """Inverse of :func:`pack` on the products: each half back to its own half-group, its
        lanes out of use zero (the rows of padding pieces stay zero)."""
        at = (2 * groups - 2) * block
        zero = S.const(0, hint="zero")
        for i in range(half):
            plus, minus = S.shuffle(S.load(cs, at + i * L, hint="cb"), zero, L // 2)
            S.store(cs, at + i * L, plus)
            S.store(cs, at + block + i * L, minus)

    looped_products: LoopedTwistedProduct | LoopedPairProduct | None = None
    if paired and zip_group is not None:
        looped_products = LoopedPairProduct(S, red, half, half_groups, zip_group)
    elif looped:
        looped_products = LoopedTwistedProduct(S, red, half, half_groups)

    def wrap_half(v: LoopVar) -> None:
        at = Affine.of(v) * block
        yh = [S.load(ys, at + i * L, hint="y") for i in range(half)]
        assert looped_products is not None
        looped_products.wrap(Affine.of(v), yh, half_root(Affine.of(v) * L))

    def half_product(v: LoopVar) -> None:
        at = Affine.of(v) * block
        xh = [S.load(xs, at + i * L, hint="x") for i in range(half)]
        if looped_products is not None:
            looped_products.product(Affine.of(v), xh, lambda k, val: S.store(cs, at + k * L, val))
            return
        yh = [S.load(ys, at + i * L, hint="y") for i in range(half)]
        t = half_root(Affine.of(v) * L)
        for i, val in enumerate(product(xh, yh, t)):
            S.store(cs, at + i * L, val)

    def join_group(v: LoopVar) -> None:
        k0 = Affine.of(v) * L
        si = root_inv(k0)
        lo, hi = [], []
        for i in range(half):
            u = S.load(cs, k0 * m + i * L, hint="cp")
            w = S.load(cs, k0 * m + (half + i) * L, hint="cm")
            u, w = red.make_room(u, w)
            lo.append(S.add(u, w, hint="c"))
            hi.append(S.mulconst(S.sub(u, w, hint="d"), si[0], si[1], hint="c"))
        store_rows(k0, lo + hi)

    S.loop(groups, split_group, hint="grp", unroll=False)
    if packed:
        pack(xs)
        pack(ys)
    if looped_products is not None:
        S.loop(half_groups, wrap_half, hint="half", unroll=False)
    S.loop(half_groups, half_product, hint="half", unroll=False)
    if packed:
        unpack()
    S.loop(groups, join_group, hint="grp", unroll=False)


def packs_last_group(shape: GoodRaderShape) -> bool:
    """Whether :func:`program_base` multiplies the last group's two halves as one half-group:
    where the pieces are split and those in use in the last group of L fill at most half its
    lanes (sntrup761 on 32 lanes: 48 pieces in 64 rows). That saves a quarter of the products
    (those of padding) for three interleaves at lane distance L/2 per coefficient of the
    halves: one for each operand, one for the products."""
    L = shape.lanes
    in_last = len(shape.pieces) - (shape.rows // L - 1) * L
    return shape.split_roots is not None and L > 1 and in_last <= L // 2


def pairs_fit(shape: GoodRaderShape) -> bool:
    """Whether :func:`program_base_pairs` applies: a piece fills one register (m = L, even)
    and the pieces are not split."""
    return shape.m == shape.lanes and shape.m % 2 == 0 and shape.split_roots is None


def program_base_pairs(
    S: Builder,
    shape: GoodRaderShape,
    contract_a: tuple[int, int],
    contract_b: tuple[int, int],
    zip_group: int | None = None,
) -> None:
    """:func:`program_base` with the coefficients of each piece kept in pairs: lanes 2i and
    2i+1 of a vector hold coefficients 2j and 2j+1 of piece i, so a vector holds one pair of
    each of L/2 pieces, and the L/2 rows of a group turn into that form by a transpose of
    2-lane elements (one fewer interleave step than lanes of one coefficient).

    With x^m = t and y'_j = y_j (j >= 0), t*y_(j+m) (j < 0), coefficient k of the product is
    sum_u x_2u y'_(k-2u) + x_(2u+1) y'_(k-2u-1): for k = 2s a pair sum of x's pair u with
    (y'_2(s-u), y'_2(s-u)-1), one blend of y's pairs s-u and s-u-1; for k = 2s+1 with
    (y'_2(s-u)+1, y'_2(s-u)), y's pair s-u swapped. So each coefficient is m/2 pair sums,
    added exactly in double-width lanes and reduced once, and the m/2 pair-layout vectors of
    the results transpose back to rows. Needs m = L (a row is one vector) and an even m."""
    m, L, rows = shape.m, shape.lanes, shape.rows
    if not pairs_fit(shape):
        raise ValueError(
            f"pair sums need one piece per register and unsplit pieces (m = {m}, L = {L})"
        )
    half = m // 2  # pairs per piece, and pieces per vector
    r = S.output("r", rows * m, doc="piecewise products (times beta^-1)")
    a = S.input("a", rows * m, contract_a, doc="pieces")
    b = S.input("b", rows * m, contract_b, doc="pieces")
    red = Reducer(S)
    q = S.arith.q
    # t_k in both lanes of piece k's pair: a vector of the group's half pieces. The tables are
    # read from a copy in the frame: read from static data, between the loop's many stack
    # stores, they made this stage 1.0-1.6x slower depending on where the caller's stack lay
    # (likely 4K aliasing, by the 4 KiB period; no counter here confirms it. AVX2, Zen 3:
    # 1,652-2,701 ticks over 8 KiB of placements, 1,534-1,552 with the copy; docs/design.md).
    pad = shape.points + [0] * (rows - len(shape.points))
    t_of = twisted_tables(S, "t", pad, "t_k of x^m - t_k, twice per piece", repeat=2, in_frame=True)

    def pairs_of(src: Buffer, k0: Affine) -> list[Value]:
        """Vector u: coefficients 2u, 2u+1 of pieces k0 .. k0 + L/2 - 1."""
        tile = [S.load(src, (k0 + i) * m, hint=src.name) for i in range(half)]
        return transpose(S, tile, zip_group, elem_bits=1)

    def group(v: LoopVar) -> None:
        k0 = Affine.of(v) * half
        y = [red.within(w, q) for w in pairs_of(b, k0)]
        t = t_of(k0 * 2)
        wrapped = [S.mulconst(w, t[0], t[1], hint="yt") for w in y]

        def ext(j: int) -> Value:
            """y's pair j (pairs -half .. -1 wrapped: times t)."""
            return y[j] if j >= 0 else wrapped[j + half]

        even = {j: S.pair_blend(ext(j), ext(j - 1), hint="ye") for j in range(1 - half, half)}
        odd = {j: S.pair_swap(ext(j), hint="yo") for j in range(1 - half, half)}
        worst = max(S.bound(w).magnitude for w in (*even.values(), *odd.values()))
        x = red.for_sums(pairs_of(a, k0), m, worst)
        sums: list[Value] = []
        for k in range(m):
            s, other = divmod(k, 2)
            acc: Value | None = None
            for u in range(half):
                w = S.pair_madd(x[u], (odd if other else even)[s - u], hint="w")
                acc = w if acc is None else S.pair_add(acc, w, hint="acc")
            assert acc is not None
            sums.append(acc)
        res = [S.pair_mred(sums[2 * j], sums[2 * j + 1], hint="c") for j in range(half)]
        for i, row in enumerate(transpose(S, res, zip_group, elem_bits=1)):
            S.store(r, (k0 + i) * m, row)

    # a loop, not unrolled, as in program_base
    S.loop(rows // half, group, hint="grp", unroll=False)
