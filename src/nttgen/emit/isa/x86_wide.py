"""Double-width values on AVX2 and AVX-512 (``madd``, ``mulw``, ``addw``, ``mredw``).

A double-width value is two vectors. For 16-bit lanes they hold 32-bit sums, in the order the
interleaves ``vpunpck{l,h}wd`` take lanes (``vpmaddwd`` forms two products per 32-bit lane);
for 32-bit lanes they hold 64-bit sums of the even lanes, then of the odd lanes (``vpmuldq``
multiplies the low 32 bits of each 64-bit lane, as the reference AVX2 ML-DSA accumulates its
inner products). The Montgomery reduction brings them back into one vector of lanes in their
original order.
"""

from __future__ import annotations

from typing import Any

from .. import c_ast as C


class X86Wide:
    """Templates and helpers of double-width values, mixed into :class:`~.x86.X86Simd`
    (they compose its intrinsics ``_i``, ``_set1``, ``_factor``, ``_fn``, ``_decl`` and
    ``blend_odd``)."""

    def _x(self) -> Any:
        return self

    def wide_type(self) -> str:
        """Each of the two vectors of a double-width value has the vector type."""
        return self._x().vtype

    # How ``mredw`` forms m = lo(a)*q^-1 mod 2^32: "mul" by ``vpmuldq``, whose product has m in
    # the low half of each 64-bit lane (one uop on Intel cores, where ``vpmulld`` takes two:
    # ML-DSA AVX2, Emerald Rapids, gcc / clang-19 ticks, vpmulld -> vpmuldq: basemul_acc_cached
    # k = 3 238 / 240 -> 217 / 219, basemul_acc k = 5 459 / 459 -> 429 / 430; Zen 5 unchanged);
    # "mullo" by ``vpmulld`` (AVX-512, see Avx512)
    mredw_m = "mul"

    def _odd(self, a: C.Expr) -> C.Expr:
        """The odd 32-bit lanes copied into the low halves of their 64-bit lanes by
        ``vpshufd`` (elements 1, 1, 3, 3 of each 128 bits): ``vpmuldq`` and the blends that
        join two products read only those low halves. A shuffle rather than a 64-bit shift:
        Intel cores run vector shifts on the two ports of the multipliers and shuffles on a
        third (ML-DSA AVX2, Emerald Rapids, gcc / clang-19 ticks, shift -> shuffle: intt
        677 / 674 -> 657 / 655, polymul 1,858 / 1,869 -> 1,813 / 1,817, basemul_acc_cached
        k = 3 258 / 259 -> 238 / 240; AVX-512 clang-19 intt 477 -> 439, gcc within 1 %);
        Zen 4 and 5 run both on the same two pipes."""
        return self._x()._i("shuffle", a, C.Int(0xF5), e="epi32")

    def mulw(self, a: C.Expr, b: C.Expr) -> tuple[C.Expr, C.Expr]:
        """The exact products: for 16-bit lanes the low and high halves interleaved (as
        :meth:`madd` orders lanes), for 32-bit lanes ``vpmuldq`` of the even lanes and of
        the odd lanes."""
        x = self._x()
        if x.lane.bits == 16:
            lo, hi = x._i("mullo", a, b), x._i("mulhi", a, b)
            return x._i("unpacklo", lo, hi), x._i("unpackhi", lo, hi)
        mul = lambda u, v: x._i("mul", u, v, e="epi32")  # noqa: E731
        return mul(a, b), mul(self._odd(a), self._odd(b))

    def addw(self, a: tuple[C.Expr, C.Expr], b: tuple[C.Expr, C.Expr]) -> tuple[C.Expr, C.Expr]:
        """Sums of the double-width halves."""
        e = f"epi{2 * self._x().lane.bits}"
        return tuple(self._x()._i("add", u, v, e=e) for u, v in zip(a, b, strict=True))  # type: ignore[return-value]

    def _madd_helpers(self) -> list[C.Top]:
        """The two halves of :meth:`madd`: for 16-bit lanes interleave the pairs, then
        ``vpmaddwd``; for 32-bit lanes two ``vpmuldq`` and a 64-bit add per half."""
        x = self._x()
        a0, b0, a1, b1 = (C.Name(v) for v in ("a0", "b0", "a1", "b1"))
        params = ("a0", "b0", "a1", "b1")
        fns: list[C.Top] = []
        for half in ("lo", "hi"):
            if x.lane.bits == 16:
                ilv = lambda u, v, h=half: x._i(f"unpack{h}", u, v, e="epi16")  # noqa: E731
                body = [C.Return(x._i("madd", ilv(a0, a1), ilv(b0, b1), e="epi16"))]
                which = "vpunpcklwd" if half == "lo" else "vpunpckhwd"
                doc = (f"a0*b0 + a1*b1 in 32-bit lanes for the lanes {which} takes (vpmaddwd).",)
            else:
                ops = (a0, b0, a1, b1) if half == "lo" else tuple(map(self._odd, (a0, b0, a1, b1)))
                p0, p1 = (x._i("mul", ops[i], ops[i + 1], e="epi32") for i in (0, 2))
                body = [C.Return(x._i("add", p0, p1, e="epi64"))]
                which = "even" if half == "lo" else "odd"
                doc = (f"a0*b0 + a1*b1 in 64-bit lanes for the {which} lanes (vpmuldq).",)
            fns.append(x._fn(f"madd_{half}", params, body, doc))
        return fns

    def _mredw_helper(self) -> C.FuncDef:
        """The Montgomery reduction of a double-width value to one vector (see
        :meth:`_mredw16_helper` and :meth:`_mredw32_helper`)."""
        if self._x().lane.bits == 16:
            return self._mredw16_helper()
        return self._mredw32_helper()

    def _mredw32_helper(self) -> C.FuncDef:
        """(a - m*q) / 2^32 per 64-bit lane: m = lo(a)*q^-1 (see :attr:`mredw_m`), m*q by
        ``vpmuldq`` (which reads the low 32 bits of its lane), a 64-bit subtraction whose low
        half is zero, then the high halves of the even and odd lanes joined by a shuffle and a
        blend."""
        x = self._x()
        n = C.Name
        mul = lambda u, v: x._i("mul", u, v, e="epi32")  # noqa: E731
        m_by = "vpmuldq" if x.mredw_m == "mul" else "vpmulld"
        body: list[C.Stmt] = [
            x._decl("qinv", x._factor(x.arith.qinv)),
            x._decl("q", x._factor(x.arith.q)),
        ]
        for h in ("lo", "hi"):
            body += [
                x._decl(f"m_{h}", x._i(x.mredw_m, n(h), n("qinv"), e="epi32")),
                x._decl(f"d_{h}", x._i("sub", n(h), mul(n(f"m_{h}"), n("q")), e="epi64")),
            ]
        body.append(C.Return(x.blend_odd(self._odd(n("d_lo")), n("d_hi"), 32)))
        return x._fn(
            "mredw",
            ("lo", "hi"),
            body,
            (
                "Signed Montgomery reduction of 64-bit sums (the even lanes, then the odd ones)",
                "to 32-bit lanes in their order: (a - m*q) / 2^32 with m = lo(a)*q^-1 mod 2^32",
                f"({m_by}, vpmuldq, vpsubq, a shuffle and a blend).",
            ),
        )

    def _mredw16_helper(self) -> C.FuncDef:
        """(a - m*q) / 2^16 per 32-bit lane: m = lo(a)*q^-1 by ``vpmullw`` against q^-1 in the
        low words (zero in the high ones, so m arrives zero-extended), m*q by ``vpmaddwd``
        against (q, 0), an exact shift, and ``vpackssdw``, which puts the lanes back in the
        order the interleaves of :meth:`madd` took them from (its saturation never acts: the
        analysis proves every result fits)."""
        x = self._x()
        body = self._mont32_steps(("lo", "hi"))
        for h in ("lo", "hi"):
            body.append(x._decl(f"r_{h}", x._i("srai", C.Name(f"d_{h}"), C.Int(16), e="epi32")))
        body.append(C.Return(x._i("packs", C.Name("r_lo"), C.Name("r_hi"), e="epi32")))
        return x._fn(
            "mredw",
            ("lo", "hi"),
            body,
            (
                "Signed Montgomery reduction of 32-bit sums (two vectors, as vpunpck{l,h}wd",
                "ordered them) to 16-bit lanes in their order: (a - m*q) / 2^16 with",
                "m = lo(a)*q^-1 mod 2^16 (vpmullw, vpmaddwd, vpsubd, vpsrad, vpackssdw).",
            ),
        )

    def _mont32_steps(self, names: tuple[str, ...]) -> list[C.Stmt]:
        """The Montgomery steps both reductions of 32-bit sums (16-bit lanes) share, for each
        vector named in ``names``: d_x = x - m*q with m = lo(x)*q^-1 (``vpmullw`` against
        q^-1 in the low words, zero in the high ones, so m arrives zero-extended) and m*q by
        ``vpmaddwd`` against (q, 0); d_x / 2^16, the result, is then exact in its high word."""
        x = self._x()
        qinv = x._set1(x.arith.qinv & 0xFFFF, 32)
        q = x._set1(x.arith.q, 32)
        body: list[C.Stmt] = [x._decl("qinv", qinv), x._decl("q", q)]
        for v in names:
            m = x._i("mullo", C.Name(v), C.Name("qinv"), e="epi16")
            mq = x._i("madd", C.Name(f"m_{v}"), C.Name("q"), e="epi16")
            body += [
                x._decl(f"m_{v}", m),
                x._decl(f"d_{v}", x._i("sub", C.Name(v), mq, e="epi32")),
            ]
        return body
