"""Portable C99: one lane per value, scalar code for any C99 compiler.

Assumes what every mainstream compiler does: two's-complement conversion of out-of-range
integers to signed types (used only where the low half of a product is intended) and arithmetic
right shift of negative values. No branch, division or data-dependent index appears: reductions
use multiplications and sign masks only.
"""

from __future__ import annotations

from ...lanes import LaneType
from .. import c_ast as C
from .base import HelperCalls, Isa


class PortableC(HelperCalls, Isa):
    """The reference backend every SIMD backend is compared against."""

    name = "c"
    title = "portable C99 (1 lane per value)"
    compilers = ("gcc", "cc", "clang-19", "clang")

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """Scalar code: one lane."""
        del lane
        return 1

    def vec_type(self) -> str:
        """The lane's C type."""
        return self.lane.c_type

    def wide_type(self) -> str:
        """The double-width lane's C type."""
        return self._w

    # ----------------------------------------------------------------- types
    @property
    def _t(self) -> str:
        return self.lane.c_type

    @property
    def _w(self) -> str:
        return self.lane.c_wide_type

    @property
    def _u(self) -> str:
        return self.lane.c_unsigned_type

    def _wide(self, e: C.Expr) -> C.Expr:
        return C.Cast(self._w, e)

    def _coarse_helper(self) -> C.FuncDef:
        """``barrett_coarse`` in the wide type: t = round(a*v / 2^c), a - t*q (16-bit lanes:
        as vpmulhrsw; 32-bit lanes: v = 1, a rounding shift)."""
        a, q = C.Name("a"), self.arith.q
        cv, c = self.arith.barrett_coarse_v, self.arith.barrett_coarse_shift
        scaled = self._wide(a) if cv == 1 else C.Bin("*", self._wide(a), C.Int(cv))
        t = C.Bin(">>", C.Bin("+", scaled, C.Int(1 << (c - 1))), C.Int(c))
        if cv == 1:
            doc = (
                "Barrett reduction by one rounding shift:",
                f"t = round(a / 2^{c}) (2^{c} near q); returns a - t*q,",
            )
        else:
            doc = (
                "Barrett reduction by one rounding high product (as vpmulhrsw):",
                f"t = round(a*{cv} / 2^{c}), {cv} = round(2^{c}/q); returns a - t*q,",
            )
        return C.FuncDef(
            self._t,
            self.helper("barrett_coarse"),
            (C.Param(self._t, "a"),),
            (
                C.Decl(self._w, "t", t, const=True),
                C.Return(C.Cast(self._t, C.Bin("-", a, C.Bin("*", C.Name("t"), C.Int(q))))),
            ),
            storage="static inline",
            doc=(*doc, "congruent to a, in a wider range than barrett's."),
        )

    def _lo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """The low half of a*b as a signed lane value (wraps by intent)."""
        if self.lane.bits == 16:
            return C.Cast(self._t, C.Bin("*", self._wide(a), b))
        return C.Cast(self._t, C.Bin("*", C.Cast(self._u, a), C.Cast(self._u, b)))

    def _hi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """floor(a*b / beta) in the wide type."""
        return C.Bin(">>", C.Bin("*", self._wide(a), b), C.Int(self.lane.bits))

    # ----------------------------------------------------------------- memory
    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """base[index]."""
        del aligned
        return C.Index(base, index)

    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """base[index] (one lane)."""
        return C.Index(base, index)

    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """base[index] = value."""
        del aligned
        return C.Assign(C.Index(base, index), value)

    # ----------------------------------------------------------------- helpers
    def helpers(self) -> list[C.Top]:
        """montmul, montmul_var, barrett and cond_add_q as static inline functions."""
        t, w = self._t, self._w
        q, bits = self.arith.q, self.lane.bits
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        k = self.arith.barrett_k
        fns: list[C.Top] = []
        fns.append(
            C.FuncDef(
                t,
                self.helper("montmul"),
                (C.Param(t, "a"), C.Param(t, "z"), C.Param(t, "zq")),
                (
                    C.Decl(t, "m", self._lo(a, zq), const=True),
                    C.Return(
                        C.Cast(t, C.Bin("-", self._hi(a, z), self._hi(C.Name("m"), C.Int(q))))
                    ),
                ),
                storage="static inline",
                doc=(
                    "Signed Montgomery multiplication by a twisted constant (Seiler 2018, Alg. 3):",
                    f"returns (a*z - m*q) / 2^{bits} with m = a*zq mod 2^{bits}, where",
                    f"zq = z*q^-1 mod 2^{bits}; the result is congruent to a*z*2^-{bits} mod q.",
                ),
            )
        )
        fns.append(
            C.FuncDef(
                t,
                self.helper("montmul_var"),
                (C.Param(t, "a"), C.Param(t, "b")),
                (
                    C.Decl(w, "p", C.Bin("*", self._wide(a), b), const=True),
                    C.Decl(
                        t, "m", self._lo(C.Cast(t, C.Name("p")), C.Int(self.arith.qinv)), const=True
                    ),
                    C.Return(
                        C.Cast(
                            t,
                            C.Bin(
                                "-",
                                C.Bin(">>", C.Name("p"), C.Int(bits)),
                                self._hi(C.Name("m"), C.Int(q)),
                            ),
                        )
                    ),
                ),
                storage="static inline",
                doc=(
                    f"Signed Montgomery product: (a*b - m*q) / 2^{bits} with",
                    f"m = (a*b mod 2^{bits}) * q^-1 mod 2^{bits};",
                    f"congruent to a*b*2^-{bits} mod q.",
                ),
            )
        )
        shift = self.arith.shoup_shift
        t_of = C.Bin(
            ">>", C.Bin("*", self._wide(a), C.Name("zs")), C.Int(bits - shift)
        )  # floor(2^shift * a * zs / 2^bits)
        fns.append(
            C.FuncDef(
                t,
                self.helper("shoupmul"),
                (C.Param(t, "a"), C.Param(t, "z"), C.Param(t, "zs")),
                (
                    C.Decl(t, "t", C.Cast(t, t_of), const=True),
                    C.Return(
                        C.Cast(
                            t,
                            C.Bin(
                                "-",
                                C.Bin("*", self._wide(a), z),
                                C.Bin("*", self._wide(C.Name("t")), C.Int(q)),
                            ),
                        )
                    ),
                ),
                storage="static inline",
                doc=(
                    f"Product by a constant with its quotient zs = round(z*2^{bits - shift}/q) "
                    "(Shoup):",
                    f"a*z - t*q with t = floor(a*zs / 2^{bits - shift}), exact in the wide type;",
                    "congruent to a*z mod q.",
                ),
            )
        )
        hi = C.Bin(">>", C.Bin("*", self._wide(a), C.Int(self.arith.barrett_v)), C.Int(bits))
        rnd = C.Bin("<<", C.Cast(w, C.Int(1)), C.Int(k - 1)) if bits == 32 else C.Int(1 << (k - 1))
        fns.append(
            C.FuncDef(
                t,
                self.helper("barrett"),
                (C.Param(t, "a"),),
                (
                    C.Decl(w, "hi", hi, const=True),
                    C.Decl(
                        w, "t", C.Bin(">>", C.Bin("+", C.Name("hi"), rnd), C.Int(k)), const=True
                    ),
                    C.Return(C.Cast(t, C.Bin("-", a, C.Bin("*", C.Name("t"), C.Int(q))))),
                ),
                storage="static inline",
                doc=(
                    "Signed Barrett reduction (Seiler 2018, Alg. 5, rounding):",
                    f"t = round(a*v / 2^{bits + k}), v = {self.arith.barrett_v} = "
                    f"round(2^{bits + k}/q); returns a - t*q, congruent to a.",
                ),
            )
        )
        if self.arith.coarse_usable:
            fns.append(self._coarse_helper())
        fns.append(
            C.FuncDef(
                t,
                self.helper("mredw"),
                (C.Param(w, "a"),),
                (
                    C.Decl(t, "m", self._lo(C.Cast(t, a), C.Int(self.arith.qinv)), const=True),
                    C.Return(
                        C.Cast(
                            t,
                            C.Bin(
                                ">>",
                                C.Bin("-", a, C.Bin("*", self._wide(C.Name("m")), C.Int(q))),
                                C.Int(bits),
                            ),
                        )
                    ),
                ),
                storage="static inline",
                doc=(
                    f"Signed Montgomery reduction of a {2 * bits}-bit sum of products:",
                    f"(a - m*q) / 2^{bits} with m = (a mod 2^{bits}) * q^-1 mod 2^{bits};",
                    f"congruent to a*2^-{bits} mod q (a - m*q is exact: the result fits).",
                ),
            )
        )
        fns.append(
            C.FuncDef(
                t,
                self.helper("cond_add_q"),
                (C.Param(t, "a"),),
                (
                    C.Return(
                        C.Cast(
                            t, C.Bin("+", a, C.Bin("&", C.Int(q), C.Bin(">>", a, C.Int(bits - 1))))
                        )
                    ),
                ),
                storage="static inline",
                doc=("Adds q where a < 0, from the sign mask (no branch).",),
            )
        )
        return fns

    # ----------------------------------------------------------------- vocabulary
    def const(self, *, value: int) -> C.Expr:
        """A literal."""
        return C.Int(value)

    def add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a + b (proven not to overflow)."""
        return C.Cast(self._t, C.Bin("+", a, b)) if self.lane.bits == 16 else C.Bin("+", a, b)

    def sub(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a - b (proven not to overflow)."""
        return C.Cast(self._t, C.Bin("-", a, b)) if self.lane.bits == 16 else C.Bin("-", a, b)

    def madd(self, a0: C.Expr, b0: C.Expr, a1: C.Expr, b1: C.Expr) -> C.Expr:
        """a0*b0 + a1*b1 in the wide type."""
        return C.Bin("+", C.Bin("*", self._wide(a0), b0), C.Bin("*", self._wide(a1), b1))

    def mulw(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a*b in the wide type."""
        return C.Bin("*", self._wide(a), b)

    def addw(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a + b in the wide type (proven not to overflow)."""
        return C.Bin("+", a, b)

    def shoupmul(self, a: C.Expr, z: C.Expr, zs: C.Expr) -> C.Expr:
        """Product by a constant with its Shoup quotient (a helper, exact in the wide type)."""
        return C.Call(self.helper("shoupmul"), (a, z, zs))

    def mullo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Low half of a*b."""
        return self._lo(a, b)

    def mulhi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """High half of a*b."""
        return C.Cast(self._t, self._hi(a, b))

    def sra(self, a: C.Expr, *, k: int) -> C.Expr:
        """a >> k."""
        return C.Cast(self._t, C.Bin(">>", a, C.Int(k)))

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Scalar code has no lanes to interleave."""
        raise NotImplementedError("portable C has one lane per value: programs never shuffle it")

    def zip(self, a: C.Expr, b: C.Expr, *, w: int, g: int, inverse: int) -> tuple[C.Expr, C.Expr]:
        """Scalar code has no lanes to interleave."""
        raise NotImplementedError("portable C has one lane per value: programs never zip it")
