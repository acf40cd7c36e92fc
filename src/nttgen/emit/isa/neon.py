"""Arm NEON (AArch64 Advanced SIMD): 128-bit vectors, 8 lanes of 16 bits or 4 of 32, 32 registers.

AArch64 has no instruction for the high half of a product, but it has the *doubling* high
product ``sqdmulh`` (``vqdmulhq_s16``: floor(2*a*b / beta), saturating only for a = b = -beta/2,
which the bounds analysis excludes) and the halving subtraction ``shsub`` (``vhsubq_s16``:
floor((x - y) / 2) without overflow). Signed Montgomery multiplication by a twisted constant is
then

    hi = sqdmulh(a, z); m = mul(a, zq); t = sqdmulh(m, q); r = shsub(hi, t)

Since a*z and m*q agree modulo beta, 2*a*z and 2*m*q agree modulo 2*beta, so hi - t is even and
r = (a*z - m*q) / beta exactly: the same value as the vocabulary's hi(a*z) - hi(m*q), in four
instructions like x86's ``vpmullw``/``vpmulhw``/``vpmulhw``/``vpsubw``.

Barrett reduction uses floor(x / 2) nested in a rounding shift: round_shift(floor(2*a*v/beta),
k + 1) equals round_shift(floor(a*v/beta), k), so t = ``srshr``(``sqdmulh``(a, v), k + 1) and
r = ``mls``(a, t, q), three instructions. The exact high product (the ``mulhi`` op) takes the two
widening products ``smull``/``smull2`` and keeps their high halves with ``uzp2``. Shuffles are
``trn1``/``trn2`` at the block width (16, 32 or 64 bits), reinterpreting the lanes; the sign
correction is a shift, an AND and an add (no comparison result feeds a branch).
"""

from __future__ import annotations

from ...lanes import LaneType
from ...plan.constants import ConstMul
from .. import c_ast as C
from .base import HelperCalls, Isa


def call(name: str, *args: C.Expr) -> C.Expr:
    """A call of an intrinsic or helper."""
    return C.Call(name, args)


class Neon(HelperCalls, Isa):
    """The AArch64 NEON backend."""

    name = "neon"
    title = "Arm NEON (AArch64, 128-bit vectors, 32 registers)"
    arch = "aarch64"
    cflags = ()  # Advanced SIMD is part of every AArch64 core: no flag needed
    features = ("asimd",)
    compile_checks = (("__ARM_NEON", "an AArch64 compiler"),)
    registers = 32
    includes = ("arm_neon.h",)
    # table pointers are made opaque to the compiler, so that the lanes of a loaded table
    # vector feed multiplications by a lane instead of being folded into immediates
    opaque_tables = True
    compilers = ("clang-19", "clang", "aarch64-linux-gnu-gcc")
    # instructions under QEMU, ML-DSA basemul_acc k = 5 with 1, 2, 4, 8 chunks: 4,062,
    # 2,913, 2,439, 2,401 (k = 3: 3,038, 2,273, 1,927, 1,953; NewHope-512 k = 5 4,820,
    # 4,209, 3,777, 3,903); ML-KEM, 1 -> 2 chunks: basemul_acc_cached k = 3 1,466 -> 1,133,
    # basemul_acc 1,623 -> 1,369
    product_chunks = (4, 2)

    @classmethod
    def chunks_for(cls, base_degree: int, lane: LaneType) -> int:
        """8 chunks for complete NTTs in 32-bit lanes, whose products are summed exactly
        (``smlal``; loaded by ``ld1`` of four registers, 16 accumulators fit): ML-DSA
        basemul_acc k = 5 1,980 -> 1,781 instructions, k = 3 1,532 -> 1,365. Complete NTTs in
        16-bit lanes sum Montgomery products and spill with 8 (NewHope-512 k = 3 1,781 ->
        1,905); RVV and x86 measured slower with more chunks too (RVV at VLEN 128, ML-DSA
        k = 5, 4 -> 8: 3,244 -> 3,686; AVX2 clang, 2 -> 4: 248 -> 263 ticks)."""
        if base_degree == 1 and lane.bits == 32:
            return 8
        return super().chunks_for(base_degree, lane)

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """128 bits of lanes."""
        return 128 // lane.bits

    @classmethod
    def const_mul_for(cls, lane: LaneType, q: int) -> ConstMul:
        """Shoup products for the doubling high product (``shoup2``: ``sqdmulh``, ``mul``,
        ``mls``, three instructions) where they fit, else Montgomery's four."""
        return "shoup2" if cls.shoup_fits(lane, q) else "montgomery"

    @staticmethod
    def shoup_fits(lane: LaneType, q: int) -> bool:
        """Whether shoup2 products of full-range lanes stay inside the lane, with room for a
        sum: their range, about [-q/2, 1.5q), must leave two doublings of headroom."""
        return 8 * q < lane.beta // 2

    @property
    def _s(self) -> str:
        return f"s{self.lane.bits}"

    @property
    def vtype(self) -> str:
        """The C vector type (``int16x8_t`` or ``int32x4_t``)."""
        return f"int{self.lane.bits}x{self.lanes_for(self.lane)}_t"

    def vec_type(self) -> str:
        """The vector type."""
        return self.vtype

    def wide_type(self) -> str:
        """A double-width value is two vectors of twice-as-wide lanes: the low half of the
        lanes (``int32x4_t`` for 16-bit lanes, ``int64x2_t`` for 32-bit), then the high half."""
        return f"int{2 * self.lane.bits}x{self.lanes_for(self.lane) // 2}_t"

    @property
    def _ws(self) -> str:
        """The intrinsics' suffix of the double-width lanes (``s32`` or ``s64``)."""
        return f"s{2 * self.lane.bits}"

    def _halves(
        self, op: str, a: C.Expr, b: C.Expr, acc: tuple[C.Expr, C.Expr] | None = None
    ) -> list[C.Expr]:
        """The widening ``op`` (``mull`` or ``mlal``) of the low lanes of a and b, then of
        the high lanes (``smull``/``smull2``, ``smlal``/``smlal2``), accumulated onto the
        two halves ``acc`` where given."""
        low = lambda x: call(f"vget_low_{self._s}", x)  # noqa: E731
        pre: tuple[tuple[C.Expr, ...], tuple[C.Expr, ...]] = (
            ((), ())
            if acc is None
            else (
                (acc[0],),
                (acc[1],),
            )
        )
        return [
            call(f"v{op}_{self._s}", *pre[0], low(a), low(b)),
            call(f"v{op}_high_{self._s}", *pre[1], a, b),
        ]

    def mulw(self, a: C.Expr, b: C.Expr) -> tuple[C.Expr, C.Expr]:  # type: ignore[override]
        """The exact products, low lanes then high lanes (``smull``/``smull2``)."""
        lo, hi = self._halves("mull", a, b)
        return lo, hi

    def _madd_helpers(self) -> list[C.Top]:
        """The two halves of :meth:`madd`."""
        a0, b0, a1, b1 = (C.Name(x) for x in ("a0", "b0", "a1", "b1"))
        p = C.Name("p")
        lanes = self.lanes_for(self.lane)
        fns: list[C.Top] = []
        for k, h in enumerate(("lo", "hi")):
            first = self._halves("mull", a0, b0)[k]
            op = "mlal" if h == "lo" else "mlal_high"
            ops = (a1, b1) if h == "hi" else tuple(call(f"vget_low_{self._s}", x) for x in (a1, b1))
            second = call(f"v{op}_{self._s}", p, *ops)
            lanes_doc = f"{k * lanes // 2}-{(k + 1) * lanes // 2 - 1}"
            fns.append(
                C.FuncDef(
                    self.wide_type(),
                    self.helper(f"madd_{h}"),
                    tuple(C.Param(self.vtype, x) for x in ("a0", "b0", "a1", "b1")),
                    (C.Decl(self.wide_type(), "p", first, const=True), C.Return(second)),
                    storage="static inline",
                    doc=(f"a0*b0 + a1*b1 in {2 * self.lane.bits}-bit lanes, lanes {lanes_doc}.",),
                )
            )
        return fns

    def addw(self, a: tuple[C.Expr, C.Expr], b: tuple[C.Expr, C.Expr]) -> tuple[C.Expr, C.Expr]:  # type: ignore[override]
        """Sums of the double-width halves."""
        return tuple(call(f"vaddq_{self._ws}", x, y) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]

    def _mredw_helper(self) -> C.FuncDef:
        """(a - m*q) / beta: the low halves of the sums by ``uzp1``, m by one ``mul``, a - m*q
        by ``smlal``/``smlal2`` by -q (exact: the low halves become zero), and the high
        halves by ``uzp2``."""
        lo, hi = C.Name("lo"), C.Name("hi")
        bits = self.lane.bits
        narrow = lambda x: call(f"vreinterpretq_{self._s}_{self._ws}", x)  # noqa: E731
        d_lo, d_hi = self._halves("mlal", C.Name("m"), self._dup(-self.arith.q), (lo, hi))
        body = [
            self._decl("low", call(f"vuzp1q_{self._s}", narrow(lo), narrow(hi))),
            self._decl("m", self._q("mul", C.Name("low"), self._dup(self.arith.qinv))),
            C.Decl(self.wide_type(), "d_lo", d_lo, const=True),
            C.Decl(self.wide_type(), "d_hi", d_hi, const=True),
            C.Return(call(f"vuzp2q_{self._s}", narrow(C.Name("d_lo")), narrow(C.Name("d_hi")))),
        ]
        return C.FuncDef(
            self.vtype,
            self.helper("mredw"),
            (C.Param(self.wide_type(), "lo"), C.Param(self.wide_type(), "hi")),
            tuple(body),
            storage="static inline",
            doc=(
                f"Signed Montgomery reduction of {2 * bits}-bit sums (the low lanes, then the "
                "high ones)",
                f"to {bits}-bit lanes: (a - m*q) / 2^{bits} with m = lo(a)*q^-1 mod 2^{bits}.",
            ),
        )

    def _q(self, op: str, *args: C.Expr) -> C.Expr:
        """The 128-bit intrinsic of ``op`` on the lane type: ``add`` -> ``vaddq_s16``,
        ``dup_n`` -> ``vdupq_n_s16`` (the q follows the operation's first word)."""
        head, _, tail = op.partition("_")
        return call(f"v{head}q{'_' + tail if tail else ''}_{self._s}", *args)

    def _dup(self, v: int) -> C.Expr:
        return self._q("dup_n", C.Int(v))

    # ----------------------------------------------------------------- memory
    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """``ld1`` (NEON loads have no alignment requirement)."""
        del aligned
        return self._q("ld1", self.address(base, index))

    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """``ld1r``: one element into every lane."""
        return self._q("ld1_dup", self.address(base, index))

    def load_lane_broadcast(self, base: C.Expr, index: C.Expr, lane: int) -> C.Expr:
        """Lane ``lane`` of the table vector at ``index`` (a whole-vector offset), in every
        lane. Compilers fold the duplication into the multiplications by a lane
        (``sqdmulh``/``mul``/``mls`` by element), so one ``ldr q`` serves L broadcasts where
        ``ld1r`` of a constant table becomes a move of an immediate and a ``dup`` each."""
        vec = self._q("ld1", self.address(base, index))
        return call(f"vdupq_laneq_{self._s}", vec, C.Int(lane))

    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """``st1``."""
        del aligned
        return C.ExprStmt(self._q("st1", self.address(base, index), value))

    # ``ld1`` of four registers: one instruction where compilers pair single loads into
    # ``ldp`` at best. A group's registers must be consecutive, which costs moves and spills
    # wherever loaded values stay live through many operations (instructions under QEMU:
    # ML-DSA ntt 1,781 -> 1,949, intt 2,079 -> 2,256), so only the base multiplications,
    # whose loaded values each feed one product, load groups (ML-DSA basemul 522 -> 424,
    # basemul_acc k = 5 2,140 -> 1,984; ML-KEM basemul 475 -> 430, basemul_acc k = 3
    # 1,137 -> 1,074, cached 985 -> 943)
    memory_groups = (4,)
    grouped_kernels = frozenset({"basemul", "basemul_acc", "basemul_cache", "basemul_acc_cached"})

    def group_type(self, g: int) -> str:
        """``int16x8x4_t`` or ``int32x4x4_t``."""
        return f"{self.vtype[:-2]}x{g}_t"

    def load_group(self, base: C.Expr, index: C.Expr, g: int) -> C.Expr:
        """``ld1`` of ``g`` registers (``vld1q_s16_x4``)."""
        return call(f"vld1q_{self._s}_x{g}", self.address(base, index))

    def group_part(self, group: C.Expr, i: int, g: int) -> C.Expr:
        """``group.val[i]``."""
        del g
        return C.Index(C.Member(group, "val"), C.Int(i))

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

    def _coarse_helper(self) -> C.FuncDef:
        """``barrett_coarse``: t by one rounding step (16-bit lanes: sqrdmulh by v; 32-bit
        lanes: srshr by the shift, exact for every lane value), then a - t*q by mls."""
        ar, bits = self.arith, self.lane.bits
        a, v, c = C.Name("a"), ar.barrett_coarse_v, ar.barrett_coarse_shift
        if bits == 16:
            t = self._q("qrdmulh", a, self._dup(v))
            how = f"one rounding high product: t = round(a*{v} / 2^{c}) by sqrdmulh,"
        else:
            t = self._q("rshr_n", a, C.Int(c))
            how = f"one rounding shift: t = round(a / 2^{c}) by srshr (2^{c} near q),"
        return self._fn(
            "barrett_coarse",
            ("a",),
            [self._decl("t", t), C.Return(self._q("mls", a, C.Name("t"), self._dup(ar.q)))],
            (
                "Barrett reduction by " + how,
                "then a - t*q by mls: congruent to a, in a wider range than barrett.",
            ),
        )

    def montmul_twist(self, a: C.Expr, b: C.Expr, bq: C.Expr) -> C.Expr:  # type: ignore[override]
        """Its own helper: montmul's halving subtraction is exact only for a true twist."""
        return C.Call(self.helper("montmul_twist"), (a, b, bq))

    def helpers(self) -> list[C.Top]:
        """Montgomery, Barrett, the exact high product, the sign correction and the
        interleaves as static inline functions."""
        q, qinv = self.arith.q, self.arith.qinv
        v, k = self.arith.barrett_v, self.arith.barrett_k
        bits = self.lane.bits
        lanes = self.lanes_for(self.lane)
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        n = C.Name
        dmulh = lambda x, y: self._q("qdmulh", x, y)  # noqa: E731
        mul = lambda x, y: self._q("mul", x, y)  # noqa: E731
        hsub = lambda x, y: self._q("hsub", x, y)  # noqa: E731
        wide = f"int{2 * bits}x{lanes // 2}_t"
        fns: list[C.Top] = [
            self._fn(
                "montmul",
                ("a", "z", "zq"),
                [
                    self._decl("hi", dmulh(a, z)),
                    self._decl("m", mul(a, zq)),
                    C.Return(hsub(n("hi"), dmulh(n("m"), self._dup(q)))),
                ],
                (
                    "Signed Montgomery multiplication by a twisted constant, "
                    f"{lanes} lanes: (a*z - m*q) / 2^{bits}",
                    f"with m = a*zq mod 2^{bits}, as floor((2az/2^{bits} - 2mq/2^{bits}) / 2) "
                    "by sqdmulh and shsub (exact: the",
                    "difference of the doubled high halves is even).",
                ),
            ),
            self._fn(
                "montmul_twist",
                ("a", "b", "bq"),
                [
                    self._decl("hi", self._q("shr_n", dmulh(a, b), C.Int(1))),
                    self._decl("m", mul(a, n("bq"))),
                    self._decl("mq", self._q("shr_n", dmulh(n("m"), self._dup(q)), C.Int(1))),
                    C.Return(self._q("sub", n("hi"), n("mq"))),
                ],
                (
                    f"hi(a*b) - hi(m*q) with m = a*bq mod 2^{bits}, each high half as the doubled "
                    "one (sqdmulh)",
                    "halved: exact for any bq, where montmul's shsub of the doubled halves is "
                    "exact only for bq = b*q^-1.",
                ),
            ),
            self._fn(
                "shoupmul",
                ("a", "z", "zs"),
                [
                    self._decl("t", dmulh(a, n("zs"))),
                    C.Return(self._q("mls", mul(a, z), n("t"), self._dup(q))),
                ],
                (
                    f"Product by a constant with its quotient zs = round(z*2^{bits - 1}/q) "
                    "(Shoup, for the doubling",
                    "high product): t = sqdmulh(a, zs) = floor(2*a*zs/2^"
                    f"{bits}), then a*z - t*q by mul and mls:",
                    "three instructions where the Montgomery product takes four.",
                ),
            ),
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    self._decl("lo", mul(a, b)),
                    self._decl("hi", dmulh(a, b)),
                    self._decl("m", mul(n("lo"), self._dup(qinv))),
                    C.Return(hsub(n("hi"), dmulh(n("m"), self._dup(q)))),
                ],
                (
                    f"Signed Montgomery product (a*b - m*q) / 2^{bits}, m = lo(a*b)*q^-1 mod "
                    f"2^{bits} (as montmul).",
                ),
            ),
            self._fn(
                "barrett",
                ("a",),
                [
                    self._decl("t", self._q("rshr_n", dmulh(a, self._dup(v)), C.Int(k + 1))),
                    C.Return(self._q("mls", a, n("t"), self._dup(q))),
                ],
                (
                    f"Signed Barrett reduction: t = round(hi(a*{v}) / 2^{k}), formed as a "
                    f"rounding shift by {k + 1}",
                    "of the doubled high product (the same integer), then a - t*q by mls.",
                ),
            ),
            self._coarse_helper(),
            self._fn(
                "mulhi",
                ("a", "b"),
                [
                    C.Decl(
                        wide,
                        "lo",
                        call(
                            f"vmull_{self._s}",
                            call(f"vget_low_{self._s}", a),
                            call(f"vget_low_{self._s}", b),
                        ),
                        const=True,
                    ),
                    C.Decl(wide, "hi", call(f"vmull_high_{self._s}", a, b), const=True),
                    C.Return(
                        self._q(
                            "uzp2",
                            self._reinterpret(n("lo"), 2 * bits),
                            self._reinterpret(n("hi"), 2 * bits),
                        )
                    ),
                ],
                (
                    f"High halves of the signed products: the {2 * bits}-bit products of both "
                    "halves (smull, smull2),",
                    "then their odd lanes (uzp2).",
                ),
            ),
            self._fn(
                "cond_add_q",
                ("a",),
                [
                    self._decl("mask", self._q("shr_n", a, C.Int(bits - 1))),
                    C.Return(self._q("add", a, self._q("and", n("mask"), self._dup(q)))),
                ],
                ("Adds q to the lanes that are negative, from the sign mask (no branch).",),
            ),
        ]
        for width in (16, 32, 64):
            if width < bits:
                continue
            for half_name, op in (("lo", "trn1"), ("hi", "trn2")):
                body = self._reinterpret(
                    call(
                        f"v{op}q_s{width}",
                        self._reinterpret(a, width, to_lane=False),
                        self._reinterpret(b, width, to_lane=False),
                    ),
                    width,
                )
                which = "Even" if half_name == "lo" else "Odd"
                fns.append(
                    self._fn(
                        f"ilv{width}_{half_name}",
                        ("a", "b"),
                        [C.Return(body)],
                        (f"{which} {width}-bit blocks of a and b, interleaved ({op}).",),
                    )
                )
        return [*fns, *self._madd_helpers(), self._mredw_helper()]

    def _reinterpret(self, x: C.Expr, width: int, to_lane: bool = True) -> C.Expr:
        """``x`` seen as lanes of the lane type (``to_lane``) or as ``width``-bit lanes."""
        if width == self.lane.bits:
            return x
        if to_lane:
            return call(f"vreinterpretq_{self._s}_s{width}", x)
        return call(f"vreinterpretq_s{width}_{self._s}", x)

    # ----------------------------------------------------------------- vocabulary
    def const(self, *, value: int) -> C.Expr:
        """Broadcast (``dup``/``movi``)."""
        return self._dup(value)

    def add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise add."""
        return self._q("add", a, b)

    def sub(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise subtract."""
        return self._q("sub", a, b)

    def mullo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Low halves of the products (``mul``)."""
        return self._q("mul", a, b)

    def mulhi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """High halves of the products (widening products, then ``uzp2``)."""
        return call(self.helper("mulhi"), a, b)

    def sra(self, a: C.Expr, *, k: int) -> C.Expr:
        """Arithmetic shift right (``sshr``)."""
        return self._q("shr_n", a, C.Int(k)) if k else a

    def zip(self, a: C.Expr, b: C.Expr, *, w: int, g: int, inverse: int) -> tuple[C.Expr, C.Expr]:
        """Interleave (``zip1``/``zip2``) or de-interleave (``uzp1``/``uzp2``) elements of 2^w
        lanes; the group is the whole register. (The planner keeps to ``trn`` swaps here, which
        cost as little: NEON declares no move costs.)"""
        elem = self.lane.bits << w
        if (1 << g) * self.lane.bits != 128 or elem not in (16, 32, 64):
            raise ValueError(f"no NEON zip of {elem}-bit elements in groups of {1 << g} lanes")
        ops = ("uzp1", "uzp2") if inverse else ("zip1", "zip2")
        x, y = (self._reinterpret(v, elem, to_lane=False) for v in (a, b))
        return tuple(  # type: ignore[return-value]
            self._reinterpret(call(f"v{op}q_s{elem}", x, y), elem) for op in ops
        )

    def shoupmul(self, a: C.Expr, z: C.Expr, zs: C.Expr) -> C.Expr:
        """Product by a constant with its quotient for the doubling high product."""
        if self.arith.shoup_shift != 1:
            raise ValueError("NEON forms Shoup quotients with sqdmulh: const_mul must be shoup2")
        return call(self.helper("shoupmul"), a, z, zs)

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d: ``trn1``/``trn2`` at the block width."""
        width = d * self.lane.bits
        if width not in (16, 32, 64) or width < self.lane.bits:
            raise ValueError(f"no NEON shuffle for {d} lanes of {self.lane.bits} bits")
        return self._helper_pair(f"ilv{width}", a, b)
