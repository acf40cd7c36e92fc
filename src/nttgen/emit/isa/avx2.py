"""AVX2: 256-bit vectors, 16 lanes of 16 bits or 8 lanes of 32 bits.

16-bit lanes use the separate low and high products of Seiler 2018 (``vpmullw``/``vpmulhw``):
Montgomery multiplication by a twisted constant is 3 multiplications and a subtraction; Barrett
reduction rounds with ``vpmulhrsw``. 32-bit lanes have no high product, so products are formed
with ``vpmuldq`` on the even lanes and on the odd lanes shifted down, as the reference AVX2
ML-DSA does, and the high halves are blended back together.

Shuffles (one per lane distance d, see :func:`nttgen.dsl.semantics.shuffle`): d = L/2 swaps
128-bit halves (``vperm2i128``); 64-bit granularity uses ``vpunpck{l,h}qdq``; 32-bit granularity
a 64-bit shift and ``vpblendd``; 16-bit granularity a 32-bit shift and ``vpblendw``.
"""

from __future__ import annotations

from ...lanes import LaneType
from .. import c_ast as C
from .base import Isa

V = "__m256i"


def _call(name: str, *args: C.Expr) -> C.Expr:
    return C.Call(name, args)


class Avx2(Isa):
    """The AVX2 backend."""

    name = "avx2"
    title = "AVX2 (256-bit vectors)"
    cflags = ("-mavx2",)
    features = ("avx2",)
    includes = ("immintrin.h",)

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """256 bits of lanes."""
        return 256 // lane.bits

    def vec_type(self) -> str:
        """The vector type."""
        return V

    # ----------------------------------------------------------------- naming
    @property
    def _e(self) -> str:
        return f"epi{self.lane.bits}"

    def _op(self, op: str, *args: C.Expr) -> C.Expr:
        return _call(f"_mm256_{op}_{self._e}", *args)

    def _set1(self, v: int) -> C.Expr:
        return _call(f"_mm256_set1_{self._e}", C.Int(v))

    # ----------------------------------------------------------------- memory
    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """A vector load; tables are aligned, callers' arrays need not be."""
        addr = C.Cast(f"const {V} *", C.Unary("&", C.Index(base, index)))
        return _call("_mm256_load_si256" if aligned else "_mm256_loadu_si256", addr)

    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """One element into every lane (vpbroadcastw/d from memory)."""
        return self._set1_expr(C.Index(base, index))

    def _set1_expr(self, e: C.Expr) -> C.Expr:
        return _call(f"_mm256_set1_{self._e}", e)

    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """A vector store (unaligned: callers' arrays need not be aligned)."""
        del aligned
        addr = C.Cast(f"{V} *", C.Unary("&", C.Index(base, index)))
        return C.ExprStmt(_call("_mm256_storeu_si256", addr, value))

    # ----------------------------------------------------------------- helpers
    def helpers(self) -> list[C.Top]:
        """Montgomery, Barrett, sign-mask correction, fine interleaves and (for 32-bit lanes)
        high-product helpers: every op the kernels call is then one short call."""
        arith = self._helpers16() if self.lane.bits == 16 else self._helpers32()
        return arith + self._common_helpers()

    def _common_helpers(self) -> list[C.Top]:
        a, b = C.Name("a"), C.Name("b")
        bits = self.lane.bits
        fns: list[C.Top] = [
            self._fn(
                "cond_add_q",
                ("a",),
                [
                    C.Decl(V, "mask", _call(f"_mm256_srai_{self._e}", a, C.Int(bits - 1)), True),
                    C.Decl(V, "q", self._set1(self.arith.q), const=True),
                    C.Return(
                        self._op("add", a, _call("_mm256_and_si256", C.Name("q"), C.Name("mask")))
                    ),
                ],
                ("Adds q to the lanes that are negative, from the sign mask (no branch).",),
            )
        ]
        # interleaves at 16- and 32-bit granularity: a shift and a blend per output
        for width, blend, shift, imm in ((16, "_mm256_blend_epi16", "epi32", 0xAA),
                                         (32, "_mm256_blend_epi32", "epi64", 0xAA)):  # fmt: skip
            if width < bits:
                continue
            lo = _call(blend, a, _call(f"_mm256_slli_{shift}", b, C.Int(width)), C.Int(imm))
            hi = _call(blend, _call(f"_mm256_srli_{shift}", a, C.Int(width)), b, C.Int(imm))
            doc = f"blocks of a and b, interleaved at {width}-bit granularity."
            fns.append(self._fn(f"ilv{width}_lo", ("a", "b"), [C.Return(lo)], ("Even " + doc,)))
            fns.append(self._fn(f"ilv{width}_hi", ("a", "b"), [C.Return(hi)], ("Odd " + doc,)))
        if bits == 32:
            k = self.arith.barrett_k
            n = C.Name
            fns.append(
                self._fn(
                    "barrett",
                    ("a",),
                    [
                        C.Decl(V, "v", self._set1(self.arith.barrett_v), const=True),
                        C.Decl(V, "hi", _call(self.helper("mulhi"), a, n("v")), const=True),
                        C.Decl(V, "r", self._op("add", n("hi"), self._set1(1 << (k - 1))), True),
                        C.Decl(V, "t", _call("_mm256_srai_epi32", n("r"), C.Int(k)), const=True),
                        C.Decl(V, "tq", self._op("mullo", n("t"), self._set1(self.arith.q)), True),
                        C.Return(self._op("sub", a, n("tq"))),
                    ],
                    ("Signed Barrett reduction: t = (hi(a*v) + 2^(k-1)) >> k, then a - t*q.",),
                )
            )
        return fns

    def _fn(
        self, name: str, params: tuple[str, ...], body: list[C.Stmt], doc: tuple[str, ...]
    ) -> C.FuncDef:
        return C.FuncDef(
            V,
            self.helper(name),
            tuple(C.Param(V, p) for p in params),
            tuple(body),
            storage="static inline",
            doc=doc,
        )

    def _helpers16(self) -> list[C.Top]:
        q, qinv = self.arith.q, self.arith.qinv
        v, k = self.arith.barrett_v, self.arith.barrett_k
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        m, hi, lo, t = C.Name("m"), C.Name("hi"), C.Name("lo"), C.Name("t")
        mullo = lambda x, y: _call("_mm256_mullo_epi16", x, y)  # noqa: E731
        mulhi = lambda x, y: _call("_mm256_mulhi_epi16", x, y)  # noqa: E731
        set1 = lambda x: _call("_mm256_set1_epi16", C.Int(x))  # noqa: E731
        return [
            self._fn(
                "montmul",
                ("a", "z", "zq"),
                [
                    C.Decl(V, "m", mullo(a, zq), const=True),
                    C.Decl(V, "hi", mulhi(a, z), const=True),
                    C.Return(_call("_mm256_sub_epi16", hi, mulhi(m, set1(q)))),
                ],
                (
                    "Signed Montgomery multiplication by a twisted constant (Seiler 2018, Alg. 3):",
                    "(a*z - m*q) / 2^16 with m = a*zq mod 2^16, 16 lanes at once.",
                ),
            ),
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    C.Decl(V, "lo", mullo(a, b), const=True),
                    C.Decl(V, "hi", mulhi(a, b), const=True),
                    C.Decl(V, "m", mullo(lo, set1(qinv)), const=True),
                    C.Return(_call("_mm256_sub_epi16", hi, mulhi(m, set1(q)))),
                ],
                ("Signed Montgomery product (a*b - m*q) / 2^16, m = lo(a*b)*q^-1 mod 2^16.",),
            ),
            self._fn(
                "barrett",
                ("a",),
                [
                    C.Decl(V, "t", mulhi(a, set1(v)), const=True),
                    C.Decl(
                        V, "r", _call("_mm256_mulhrs_epi16", t, set1(1 << (15 - k))), const=True
                    ),
                    C.Return(_call("_mm256_sub_epi16", a, mullo(C.Name("r"), set1(q)))),
                ],
                (
                    f"Signed Barrett reduction: t = round(hi(a*{v}) / 2^{k}) by a rounding",
                    "high product (vpmulhrsw), then a - t*q.",
                ),
            ),
        ]

    def _helpers32(self) -> list[C.Top]:
        q, qinv = self.arith.q, self.arith.qinv
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        mul = lambda x, y: _call("_mm256_mul_epi32", x, y)  # noqa: E731
        odd = lambda x: _call("_mm256_srli_epi64", x, C.Int(32))  # noqa: E731
        sub = lambda x, y: _call("_mm256_sub_epi32", x, y)  # noqa: E731
        set1 = lambda x: _call("_mm256_set1_epi32", C.Int(x))  # noqa: E731
        n = C.Name
        join = C.Return(_call("_mm256_blend_epi32", odd(n("r_e")), n("r_o"), C.Int(0xAA)))
        return [
            self._fn(
                "mulhi",
                ("a", "b"),
                [
                    C.Decl(V, "p_e", mul(a, b), const=True),
                    C.Decl(V, "p_o", mul(odd(a), odd(b)), const=True),
                    C.Return(_call("_mm256_blend_epi32", odd(n("p_e")), n("p_o"), C.Int(0xAA))),
                ],
                ("High halves of the signed 32x32-bit products, even and odd lanes by vpmuldq.",),
            ),
            self._fn(
                "montmul",
                ("a", "z", "zq"),
                [
                    C.Decl(V, "a_o", odd(a), const=True),
                    C.Decl(V, "m_e", mul(a, zq), const=True),
                    C.Decl(V, "m_o", mul(n("a_o"), odd(zq)), const=True),
                    C.Decl(V, "p_e", mul(a, z), const=True),
                    C.Decl(V, "p_o", mul(n("a_o"), odd(z)), const=True),
                    C.Decl(V, "r_e", sub(n("p_e"), mul(n("m_e"), set1(q))), const=True),
                    C.Decl(V, "r_o", sub(n("p_o"), mul(n("m_o"), set1(q))), const=True),
                    join,
                ],
                (
                    "Signed Montgomery multiplication by a twisted constant, 8 lanes: vpmuldq on",
                    "even and odd lanes; the low halves of a*z and m*q agree, so a 32-bit",
                    "subtraction of the 64-bit products leaves (a*z - m*q) / 2^32 in the high",
                    "half.",
                ),
            ),
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    C.Decl(V, "a_o", odd(a), const=True),
                    C.Decl(V, "p_e", mul(a, b), const=True),
                    C.Decl(V, "p_o", mul(n("a_o"), odd(b)), const=True),
                    C.Decl(V, "m_e", mul(n("p_e"), set1(qinv)), const=True),
                    C.Decl(V, "m_o", mul(n("p_o"), set1(qinv)), const=True),
                    C.Decl(V, "r_e", sub(n("p_e"), mul(n("m_e"), set1(q))), const=True),
                    C.Decl(V, "r_o", sub(n("p_o"), mul(n("m_o"), set1(q))), const=True),
                    join,
                ],
                ("Signed Montgomery product of two variables, 8 lanes (m = lo(a*b)*q^-1).",),
            ),
        ]

    # ----------------------------------------------------------------- vocabulary
    def const(self, *, value: int) -> C.Expr:
        """Broadcast."""
        return self._set1(value)

    def add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise add."""
        return self._op("add", a, b)

    def sub(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise subtract."""
        return self._op("sub", a, b)

    def mullo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Low halves of the products."""
        return self._op("mullo", a, b)

    def mulhi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """High halves of the products."""
        if self.lane.bits == 16:
            return self._op("mulhi", a, b)
        return _call(self.helper("mulhi"), a, b)

    def sra(self, a: C.Expr, *, k: int) -> C.Expr:
        """Arithmetic shift right."""
        return _call(f"_mm256_srai_{self._e}", a, C.Int(k))

    def montmul(self, a: C.Expr, z: C.Expr, zq: C.Expr) -> C.Expr:
        """Montgomery product by a twisted constant."""
        return _call(self.helper("montmul"), a, z, zq)

    def montmul_var(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Montgomery product of two variables."""
        return _call(self.helper("montmul_var"), a, b)

    def barrett(self, a: C.Expr) -> C.Expr:
        """Barrett reduction."""
        return _call(self.helper("barrett"), a)

    def cond_add_q(self, a: C.Expr) -> C.Expr:
        """a + (q AND the sign mask of a)."""
        return _call(self.helper("cond_add_q"), a)

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d."""
        width = d * self.lane.bits  # bits per interleaved block
        if width == 128:
            return (
                _call("_mm256_permute2x128_si256", a, b, C.Int(0x20)),
                _call("_mm256_permute2x128_si256", a, b, C.Int(0x31)),
            )
        if width == 64:
            return _call("_mm256_unpacklo_epi64", a, b), _call("_mm256_unpackhi_epi64", a, b)
        if width in (16, 32):
            return (
                _call(self.helper(f"ilv{width}_lo"), a, b),
                _call(self.helper(f"ilv{width}_hi"), a, b),
            )
        raise ValueError(f"no AVX2 shuffle for {d} lanes of {self.lane.bits} bits")
