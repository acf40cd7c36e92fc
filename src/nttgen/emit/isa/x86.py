"""What AVX2 and AVX-512 share: the same arithmetic in wider registers.

Both have separate low and high 16-bit products (``vpmullw``/``vpmulhw``, Seiler 2018), so
Montgomery multiplication by a twisted constant is 3 multiplications and a subtraction, and
Barrett reduction rounds by an addition and a shift (not a ``vpmulhrsw``: the multipliers are
the scarce port). Neither has a high 32-bit product, so 32-bit lanes form products with
``vpmuldq`` on the even lanes and on the odd lanes moved down (as the reference AVX2 ML-DSA
does) and join the high halves with a blend. A subclass names its register
width, its intrinsic prefix, how it blends and how it shuffles; the templates here only compose.
"""

from __future__ import annotations

from typing import ClassVar

from ...dsl.vocab import PAIR_SUMS
from ...lanes import LaneType
from ...plan.constants import ConstMul
from ...plan.layout import MoveCosts
from .. import c_ast as C
from .base import HelperCalls, Isa
from .x86_moves import X86Moves
from .x86_pairs import X86PairSums
from .x86_wide import X86Wide


def call(name: str, *args: C.Expr) -> C.Expr:
    """A call of an intrinsic or helper."""
    return C.Call(name, args)


class X86Simd(X86Wide, X86PairSums, X86Moves, HelperCalls, Isa):
    """Shared templates of the x86 SIMD backends; subclasses set ``width`` and the blend."""

    op_groups = frozenset({PAIR_SUMS})  # vpmaddwd: pair sums of adjacent 16-bit lanes
    schedule = "critical_path"
    twist_products = True  # the multiplier ports bound the products (see Isa.twist_products)
    # ML-DSA basemul_acc k = 5, AVX2 clang/gcc, 1 -> 2 -> 4 chunks: 254/284 -> 244/263 ->
    # 253/269 ticks (NewHope-512 292/333 -> 272/280 -> 292/290); ML-KEM's two-vector chunks
    # in pairs spill on AVX2 (gcc basemul_acc_cached k = 3: 82 -> 104 ticks; Zen 5)
    product_chunks = (2, 1)
    # gcc folds each twiddle read from a table into an immediate and builds its broadcast
    # (mov, vmovd, vpbroadcastw: 90 instructions in ML-KEM's AVX2 NTT) where clang loads it;
    # read through an opaque pointer it loads it too (gcc 12 on Zen 5, ticks: ML-KEM AVX2
    # ntt 89 -> 83, Kyber-r1 108 -> 101). clang got slower that way (86 -> 90, 101 -> 108)
    gcc_opaque_tables = True
    constants_in_memory = True
    # vpbroadcastw from memory is a load and a shuffle; a whole vector's load folds into the
    # instruction that reads it (gcc 12 on Intel Emerald Rapids, ML-KEM's AVX2 ntt: 579 ->
    # 522 instructions, 124 -> 121 ticks)
    vector_broadcasts = True
    # gcc keeps the capped loops of the inner products as loops, with a two-part exit test
    # per trip; clang unrolls them as these guarded lines (with the pins below, gcc 12 on Zen
    # 5, ticks: NewHope-512 basemul_acc_cached k = 5 271 -> 255, clang 242 -> 243). ML-DSA's
    # groups of 16 stay loops: 15 copies of the body moved its other kernels' code enough to
    # cost gcc's polymul 3-8 %
    guarded_trips = 4
    # gcc folds a load into each instruction that reads it and so reads memory twice for a
    # Montgomery product's multiplicand; pinned, it is loaded once (inner products, gcc 12 on
    # Zen 5, ticks: Kyber-r1 basemul_acc_cached k = 5 105 -> 97, ML-DSA k = 5 282 -> 261;
    # clang's code is unchanged, and so are gcc's transforms). montmul_var's operands stay
    # unpinned: pinned, NewHope-1024 basemul_acc k = 3 took 443 -> 462 ticks
    pinned_operands = (
        ("montmul", (0,)),
        ("montmul_twist", (0,)),
        ("mulw", (0, 1)),
    )
    width: int = 0  # bits per vector register
    arch = "x86_64"
    includes = ("immintrin.h",)

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """A register's width in lanes."""
        return cls.width // lane.bits

    @classmethod
    def const_mul_for(cls, lane: LaneType, q: int) -> ConstMul:
        """Shoup products in 32-bit lanes: with no high 32-bit product, a Montgomery product by
        a constant takes 5 multiplications (vpmulld for m, 4 vpmuldq), a Shoup product 4 (2
        vpmuldq for the quotient, 2 vpmulld) and fewer shifts (ML-DSA on the development
        machine: NTT 397 -> 326 ticks, inverse 416 -> 355). Its results lie in about [0, 1.25q)
        rather than within q/2 of 0, so it is used only where q < 2^27 leaves the sums four
        doublings of headroom; 16-bit lanes have vpmulhw, both products take 3 multiplications
        there, and they keep Montgomery's centred results."""
        return "shoup" if lane.bits == 32 and 16 * q < lane.beta // 2 else "montgomery"

    @classmethod
    def move_costs(cls, lane: LaneType, style: str = "default") -> MoveCosts | None:
        """Instructions per register pair (forward, inverse). Swaps: 16- and 32-bit blocks take
        a shift and a blend per output, 64-bit blocks ``vpunpck{l,h}qdq``, 128-bit blocks
        ``vperm2i128`` (AVX2) or two ``vshufi64x2`` per output (AVX-512), 256-bit halves one
        ``vshufi64x2``. Zips (interleaves inside 128-bit groups): ``vpunpck{l,h}{wd,dq,qdq}``
        forward; backwards ``vshufps`` for 32-bit elements, and for 16-bit elements a
        ``vpshufb`` per register before ``vpunpck{l,h}qdq``.

        Measured on the development machine (AVX2, same run, stack placements averaged):
        zips took the 16-bit transforms 1-2.5 % lower (ML-KEM NTT 101 -> 99 ticks, NewHope-512
        NTT 312 -> 304, inverse 330 -> 324) but ML-DSA's 32-bit NTT from 337 to 347, so
        32-bit lanes keep the swaps (None)."""
        if lane.bits != 16 or style == "permute":
            return None
        group = (128 // lane.bits).bit_length() - 1  # lane bits inside a 128-bit group
        lane_bits = (cls.width // lane.bits).bit_length() - 1
        swap = []
        for p in range(lane_bits):
            block = lane.bits << p
            two = block in (16, 32) or (block == 128 < cls.width // 2 and style != "blocks")
            swap.append((4, 4) if two else (2, 2))
        zips = [(2, 6) if lane.bits << w == 16 else (2, 2) for w in range(group)]
        return MoveCosts(swap=tuple(swap), zip_group=group, zip=tuple(zips))

    @property
    def vtype(self) -> str:
        """The C vector type."""
        return f"__m{self.width}i"

    def vec_type(self) -> str:
        """The vector type."""
        return self.vtype

    @property
    def _p(self) -> str:
        """The intrinsic prefix (``_mm256`` or ``_mm512``)."""
        return f"_mm{self.width}"

    @property
    def _si(self) -> str:
        return f"si{self.width}"

    @property
    def _e(self) -> str:
        return f"epi{self.lane.bits}"

    def _i(self, op: str, *args: C.Expr, e: str | None = None) -> C.Expr:
        """The intrinsic ``<prefix>_<op>_<e>`` (the lane's element type unless given)."""
        return call(f"{self._p}_{op}_{e or self._e}", *args)

    def _set1(self, v: int, bits: int | None = None) -> C.Expr:
        return self._i("set1", C.Int(v), e=f"epi{bits or self.lane.bits}")

    def _factor(self, v: int, bits: int | None = None) -> C.Expr:
        """The broadcast constant ``v`` as a multiplier that gcc keeps (see :meth:`_keep`)."""
        return call(self.helper("keep"), self._set1(v, bits))

    def pin(self, x: C.Expr) -> C.Expr:
        """x in a register gcc cannot replace by a reload (see :meth:`_keep`)."""
        return call(self.helper("keep"), x)

    def _keep(self) -> list[C.Top]:
        """``keep(a)``: a, hidden from gcc by an empty asm statement (gcc turns a product by a
        constant with few set bits, such as q = 12289 or 8380417, into 3-5 shifts and adds per
        vector: slower; a constant it cannot see stays a multiply, loaded once outside the
        loops; and it cannot reassociate a result it cannot see, see :meth:`_kept`); a no-op
        for clang, and where the vectors are not the ISA's own (SIMDe)."""
        a = C.Name("a")
        doc = ("The multiplier a, kept a multiply by gcc (no shifts and adds; see the source).",)
        # "v": any of the vector registers (all 32 with AVX-512; "x" would force the value into
        # the first 16 and cost gcc moves and spills: AVX-512 NewHope-1024 ntt 311 -> 662 ticks)
        asm = C.Asm("", (("+v", a),), (), volatile=False)
        kept = self._fn("keep", ("a",), [asm, C.Return(a)], doc)
        plain = self._fn("keep", ("a",), [C.Return(a)], ("The multiplier a (other compilers).",))
        native = self.compile_checks[-1][0]
        gcc = f"#if defined(__GNUC__) && !defined(__clang__) && defined({native})"
        return [C.Directive(gcc), kept, C.Directive("#else"), plain, C.Directive("#endif")]

    def blend_odd(self, a: C.Expr, b: C.Expr, width: int) -> C.Expr:
        """Odd ``width``-bit blocks from b, even ones from a (width 16 or 32)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- memory
    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """A vector load; tables are aligned, callers' arrays need not be."""
        addr = C.Cast(f"const {self.vtype} *", self.address(base, index))
        kind = "load" if aligned else "loadu"
        return call(f"{self._p}_{kind}_{self._si}", addr)

    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """One element into every lane (a broadcast from memory)."""
        return self._i("set1", C.Index(base, index))

    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """A vector store (unaligned: callers' arrays need not be aligned)."""
        del aligned
        addr = C.Cast(f"{self.vtype} *", self.address(base, index))
        return C.ExprStmt(call(f"{self._p}_storeu_{self._si}", addr, value))

    # ----------------------------------------------------------------- helpers
    def _fn(
        self, name: str, params: tuple[str, ...], body: list[C.Stmt], doc: tuple[str, ...]
    ) -> C.FuncDef:
        return C.FuncDef(
            self.vtype,
            self.helper(name),
            tuple(C.Param(self.vtype, p) for p in params),
            tuple(body),
            storage="static inline",
            doc=doc,
        )

    def _decl(self, name: str, value: C.Expr) -> C.Stmt:
        return C.Decl(self.vtype, name, value, const=True)

    def helpers(self) -> list[C.Top]:
        """Montgomery, Barrett, sign-mask correction, fine interleaves and (for 32-bit lanes)
        high-product helpers: every op the kernels call is then one short call."""
        moves = self._interleave_helpers() + self._unzip_helpers()
        keep = self._keep()
        wide = [*self._madd_helpers(), self._mredw_helper()]
        if self.lane.bits == 16:
            wide += self._pair_helpers()
            return [*keep, *self._helpers16(), *wide, *self._cond_add_helper(), *moves]
        arith = self._helpers32()
        coarse = [self._coarse32()] if self.arith.coarse_usable else []
        return keep + arith[:-1] + self._cond_add_helper() + moves + arith[-1:] + coarse + wide

    def _cond_add_helper(self) -> list[C.Top]:
        a, mask = C.Name("a"), C.Name("mask")
        q = self._set1(self.arith.q)
        masked = call(f"{self._p}_and_{self._si}", q, mask)
        return [
            self._fn(
                "cond_add_q",
                ("a",),
                [
                    self._decl("mask", self._i("srai", a, C.Int(self.lane.bits - 1))),
                    C.Return(self._i("add", a, masked)),
                ],
                ("Adds q to the lanes that are negative, from the sign mask (no branch).",),
            )
        ]

    def barrett_sum(self, a: C.Expr, b: C.Expr) -> C.Expr | None:
        """``barrett_add(a, b)`` for 16-bit lanes (see :meth:`_helpers16`)."""
        return call(self.helper("barrett_add"), a, b) if self.lane.bits == 16 else None

    def _kept(self, e: C.Expr) -> C.Expr:
        """A product's or reduction's result that gcc must take as it is (see :meth:`_keep`).
        Otherwise gcc merges the subtraction that ends it into the additions that use it,
        x + (a - b) as (x + a) - b and x - (a - b) as (x + b) - a (for 32-bit lanes through
        the blend of even and odd lanes too): one more instruction per butterfly and more
        live values. Measured with gcc 12 on Zen 5 (ticks, AVX2): ML-KEM ntt 105 -> 90,
        polymul 360 -> 316; NewHope-512 ntt 286 -> 249; ML-DSA ntt 313 -> 281, polymul
        1,094 -> 1,011; sntrup761 polymul 3,992 -> 3,603 (AVX-512 4,070 -> 3,556). clang's
        code is unchanged."""
        return call(self.helper("keep"), e)

    def _helpers16(self) -> list[C.Top]:
        q, qinv = self.arith.q, self.arith.qinv
        v, k = self.arith.barrett_v, self.arith.barrett_k
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        m, hi, lo, t = C.Name("m"), C.Name("hi"), C.Name("lo"), C.Name("t")
        mullo = lambda x, y: self._i("mullo", x, y)  # noqa: E731
        mulhi = lambda x, y: self._i("mulhi", x, y)  # noqa: E731
        sub = lambda x, y: self._i("sub", x, y)  # noqa: E731

        def rounded(x: C.Expr) -> C.Expr:
            # x / 2^k rounded half up by an addition and a shift: the same value as a rounding
            # high product (vpmulhrsw) without taking a multiplier slot
            return self._i("srai", self._i("add", x, self._set1(1 << (k - 1))), C.Int(k))

        lanes = self.lanes_for(self.lane)
        return [
            self._fn(
                "montmul",
                ("a", "z", "zq"),
                [
                    self._decl("qv", self._factor(q)),
                    self._decl("m", mullo(a, zq)),
                    self._decl("hi", mulhi(a, z)),
                    C.Return(self._kept(sub(hi, mulhi(m, C.Name("qv"))))),
                ],
                (
                    "Signed Montgomery multiplication by a twisted constant (Seiler 2018, Alg. 3):",
                    f"(a*z - m*q) / 2^16 with m = a*zq mod 2^16, {lanes} lanes at once.",
                ),
            ),
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    self._decl("lo", mullo(a, b)),
                    self._decl("hi", mulhi(a, b)),
                    self._decl("qiv", self._factor(qinv)),
                    self._decl("qv", self._factor(q)),
                    self._decl("m", mullo(lo, C.Name("qiv"))),
                    C.Return(self._kept(sub(hi, mulhi(m, C.Name("qv"))))),
                ],
                ("Signed Montgomery product (a*b - m*q) / 2^16, m = lo(a*b)*q^-1 mod 2^16.",),
            ),
            self._fn(
                "shoupmul",
                ("a", "z", "zs"),
                [
                    self._decl("qv", self._factor(q)),
                    self._decl("t", mulhi(a, C.Name("zs"))),
                    C.Return(self._kept(sub(mullo(a, z), mullo(t, C.Name("qv"))))),
                ],
                (
                    "Product by a constant with its quotient zs = round(z*2^16/q) (Shoup):",
                    "a*z - hi(a*zs)*q by low products that wrap, congruent to a*z mod q.",
                ),
            ),
            self._fn(
                "barrett",
                ("a",),
                [
                    self._decl("t", mulhi(a, self._set1(v))),
                    self._decl("r", rounded(t)),
                    self._decl("qv", self._factor(q)),
                    C.Return(self._kept(sub(a, mullo(C.Name("r"), C.Name("qv"))))),
                ],
                (
                    f"Signed Barrett reduction: t = round(hi(a*{v}) / 2^{k}) by adding",
                    f"2^{k - 1} and shifting, then a - t*q.",
                ),
            ),
            self._fn(
                "barrett_add",
                ("a", "b"),
                [
                    *(self._decl(f"r{x.text}", rounded(mulhi(x, self._set1(v)))) for x in (a, b)),
                    self._decl("qv", self._factor(q)),
                    self._decl(
                        "t", mullo(self._i("add", C.Name("ra"), C.Name("rb")), C.Name("qv"))
                    ),
                    # a + b may wrap: the lanes are exact mod 2^16, and the result, the sum of
                    # two reductions, fits
                    self._decl("s", self._i("add", a, b)),
                    C.Return(self._kept(sub(C.Name("s"), t))),
                ],
                (
                    "barrett(a) + barrett(b) as (a + b) - (ra + rb)*q, ra and rb the two",
                    "quotients: the same lanes, one multiplication and one subtraction fewer.",
                ),
            ),
            self._fn(
                "barrett_coarse",
                ("a",),
                [
                    self._decl("t", self._i("mulhrs", a, self._set1(self.arith.barrett_coarse_v))),
                    self._decl("qv", self._factor(q)),
                    C.Return(sub(a, mullo(t, C.Name("qv")))),
                ],
                (
                    f"Barrett reduction by one rounding high product: t = round(a*"
                    f"{self.arith.barrett_coarse_v} / 2^15)",
                    "(vpmulhrsw), then a - t*q: congruent to a, in a wider range than barrett.",
                ),
            ),
        ]

    def _helpers32(self) -> list[C.Top]:
        q, qinv = self.arith.q, self.arith.qinv
        bk, bv = self.arith.barrett_k, self.arith.barrett_v
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        n = C.Name
        mul = lambda x, y: self._i("mul", x, y, e="epi32")  # noqa: E731
        odd = self._odd
        sub = lambda x, y: self._i("sub", x, y)  # noqa: E731
        join = [
            self._decl("r", self.blend_odd(odd(n("r_e")), n("r_o"), 32)),
            C.Return(self._kept(n("r"))),
        ]
        lanes = self.lanes_for(self.lane)
        uniform = "{}, where {} holds one value in every lane: its odd lanes need no move."

        def mulhi(name: str, odd_b: C.Expr, doc: tuple[str, ...]) -> C.Top:
            body = [
                self._decl("p_e", mul(a, b)),
                self._decl("p_o", mul(odd(a), odd_b)),
                C.Return(self.blend_odd(odd(n("p_e")), n("p_o"), 32)),
            ]
            return self._fn(name, ("a", "b"), body, doc)

        def montmul(name: str, odd_z: C.Expr, doc: tuple[str, ...]) -> C.Top:
            body = [
                self._decl("a_o", odd(a)),
                self._decl("m_e", self._i("mullo", a, zq)),
                self._decl("m_o", odd(n("m_e"))),
                self._decl("p_e", mul(a, z)),
                self._decl("p_o", mul(n("a_o"), odd_z)),
                self._decl("qv", self._factor(q)),
                self._decl("r_e", sub(n("p_e"), mul(n("m_e"), n("qv")))),
                self._decl("r_o", sub(n("p_o"), mul(n("m_o"), n("qv")))),
                *join,
            ]
            return self._fn(name, ("a", "z", "zq"), body, doc)

        def shoupmul(name: str, odd_zs: C.Expr, doc: tuple[str, ...]) -> C.Top:
            body = [
                self._decl("a_o", odd(a)),
                self._decl("t_e", mul(a, n("zs"))),
                self._decl("t_o", mul(n("a_o"), odd_zs)),
                self._decl("t", self.blend_odd(odd(n("t_e")), n("t_o"), 32)),
                self._decl("qv", self._factor(q)),
                self._decl("tq", self._i("mullo", n("t"), n("qv"))),
                C.Return(self._kept(sub(self._i("mullo", a, z), n("tq")))),
            ]
            return self._fn(name, ("a", "z", "zs"), body, doc)

        return [
            mulhi(
                "mulhi",
                odd(b),
                ("High halves of the signed 32x32-bit products, even and odd lanes by vpmuldq.",),
            ),
            mulhi("mulhi_u", b, (uniform.format("The high halves of mulhi", "b"),)),
            montmul(
                "montmul",
                odd(z),
                (
                    f"Signed Montgomery multiplication by a twisted constant, {lanes} lanes:",
                    "m = lo(a*zq) for all lanes by one vpmulld (on Zen as cheap as a vpmuldq),",
                    "the high products by vpmuldq on even and odd lanes; the low halves of a*z",
                    "and m*q agree, so a",
                    "32-bit subtraction of the 64-bit products leaves (a*z - m*q) / 2^32 in the",
                    "high half.",
                ),
            ),
            montmul("montmul_u", z, (uniform.format("montmul", "z"),)),
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    self._decl("a_o", odd(a)),
                    self._decl("p_e", mul(a, b)),
                    self._decl("p_o", mul(n("a_o"), odd(b))),
                    self._decl("qiv", self._factor(qinv)),
                    self._decl("qv", self._factor(q)),
                    self._decl("m_e", mul(n("p_e"), n("qiv"))),
                    self._decl("m_o", mul(n("p_o"), n("qiv"))),
                    self._decl("r_e", sub(n("p_e"), mul(n("m_e"), n("qv")))),
                    self._decl("r_o", sub(n("p_o"), mul(n("m_o"), n("qv")))),
                    *join,
                ],
                (f"Signed Montgomery product of two variables, {lanes} lanes (m = lo(a*b)*q^-1).",),
            ),
            shoupmul(
                "shoupmul",
                odd(n("zs")),
                (
                    "Product by a constant with its quotient zs = round(z*2^32/q) (Shoup),",
                    f"{lanes} lanes: t = hi(a*zs) by vpmuldq on even and odd lanes, then",
                    "a*z - t*q by two vpmulld that wrap; congruent to a*z mod q. 4",
                    "multiplications where the Montgomery product needs 5.",
                ),
            ),
            shoupmul("shoupmul_u", n("zs"), (uniform.format("shoupmul", "zs"),)),
            self._fn(
                "barrett",
                ("a",),
                [
                    self._decl("bv", self._factor(bv)),
                    self._decl("hi", call(self.helper("mulhi_u"), a, n("bv"))),
                    self._decl("r", self._i("add", n("hi"), self._set1(1 << (bk - 1)))),
                    self._decl("t", self._i("srai", n("r"), C.Int(bk))),
                    self._decl("qv", self._factor(q)),
                    self._decl("tq", self._i("mullo", n("t"), n("qv"))),
                    C.Return(sub(a, n("tq"))),
                ],
                ("Signed Barrett reduction: t = (hi(a*v) + 2^(k-1)) >> k, then a - t*q.",),
            ),
        ]

    def _coarse32(self) -> C.FuncDef:
        """``barrett_coarse`` of 32-bit lanes: t = (a + 2^(c-1)) >> c, the rounding shift (x86
        has no rounding high product of 32-bit lanes), then a - t*q."""
        c, n = self.arith.barrett_coarse_shift, C.Name
        body = [
            self._decl(
                "t", self._i("srai", self._i("add", n("a"), self._set1(1 << (c - 1))), C.Int(c))
            ),
            self._decl("qv", self._factor(self.arith.q)),
            C.Return(self._i("sub", n("a"), self._i("mullo", n("t"), n("qv")))),
        ]
        return self._fn(
            "barrett_coarse",
            ("a",),
            body,
            (
                f"Barrett reduction by one rounding shift: t = (a + 2^{c - 1}) >> {c} (2^{c} near",
                "q), then a - t*q: congruent to a, in a wider range than barrett.",
            ),
        )

    # ----------------------------------------------------------------- vocabulary
    def const(self, *, value: int) -> C.Expr:
        """Broadcast; a nonzero one hidden from gcc (``keep``), which otherwise rebuilds each
        constant from an immediate next to every use. A function with more constants than
        registers reads them from memory where they are used instead (:mod:`..const_loads`):
        kept, gcc built them all on entry and spilled them."""
        return self._factor(value) if value else self._set1(value)

    def add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise add."""
        return self._i("add", a, b)

    def sub(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise subtract."""
        return self._i("sub", a, b)

    # the operand of each 32-bit-lane product helper whose odd lanes it moves down for the
    # second vpmuldq; one with one value in every lane (a broadcast twiddle, a constant) needs
    # no move, as vpmuldq reads only the low half of each 64-bit lane. clang drops those moves
    # itself, gcc kept them: 17 of the 43 instructions by which gcc's ML-DSA AVX2 NTT exceeded
    # clang's, 46 of 56 in the inverse (Emerald Rapids, gcc ticks: ntt 539 -> 526, intt 682 ->
    # 677, polymul 1,883 -> 1,858; clang-19 unchanged)
    _UNIFORM_OPERAND: ClassVar[dict[str, int]] = {"mulhi": 1, "montmul": 1, "shoupmul": 2}

    def uniform_form(
        self, op: str, args: tuple[C.Expr, ...], uniform: tuple[bool, ...]
    ) -> C.Expr | None:
        """The ``_u`` helper of a 32-bit product whose moved operand is uniform, else None."""
        k = self._UNIFORM_OPERAND.get(op)
        if self.lane.bits != 32 or k is None:
            return None
        if op == "mulhi" and uniform[0] and not uniform[1]:
            args, uniform = args[::-1], uniform[::-1]
        return call(self.helper(f"{op}_u"), *args) if uniform[k] else None

    def shoupmul(self, a: C.Expr, z: C.Expr, zs: C.Expr) -> C.Expr:
        """Product by a constant with its Shoup quotient (from an exact high product)."""
        if self.arith.shoup_shift:
            raise ValueError(f"{self.name} forms Shoup quotients with an exact high product")
        return call(self.helper("shoupmul"), a, z, zs)

    def mullo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Low halves of the products."""
        return self._i("mullo", a, b)

    def mulhi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """High halves of the products."""
        if self.lane.bits == 16:
            return self._i("mulhi", a, b)
        return call(self.helper("mulhi"), a, b)

    def sra(self, a: C.Expr, *, k: int) -> C.Expr:
        """Arithmetic shift right."""
        return self._i("srai", a, C.Int(k))
