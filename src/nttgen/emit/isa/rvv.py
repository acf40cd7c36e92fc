"""RISC-V Vector 1.0: register groups of VLEN x LMUL bits, read at run time or fixed.

RVV has what x86 has and AArch64 lacks: a signed high-half product (``vmulh``), so signed
Montgomery multiplication by a twisted constant is ``vmulh``, ``vmul``, ``vmulh``, ``vsub`` and
equals the vocabulary's hi(a*z) - hi(m*q) bit for bit. Barrett reduction is three instructions:
``vmulh`` by v, the rounding shift ``vssra`` with the fixed-point rounding mode
round-to-nearest-up (``__RISCV_VXRM_RNU``: (x + 2^(k-1)) >> k, the vocabulary's round_shift),
and ``vnmsac`` (a - t*q). The sign correction is an arithmetic shift, an AND and an add: no
comparison result is used, so nothing about timing can depend on which lanes are negative.

Every intrinsic takes the vector length ``vl``: a constant in the VLEN-specialised backends
(``rvv128``, ``rvv256``), the strip length chosen by ``vsetvl`` in the VLEN-agnostic one
(``rvv``, :mod:`nttgen.emit.strip_emit`). The helpers take it as their last parameter, so both
share them.

Backends (names; ``m1``/``m2``/``m4``/``m8`` appended choose LMUL, the register-group size, e.g.
``rvv128m1``; without, LMUL 2 for ``rvv<V>`` and 1 for ``rvv``: see
:data:`nttgen.emit.isa.rvv_backends.FIXED_DEFAULT_LMUL`):

* ``rvv<V>``: code for VLEN = V, ``V * LMUL / SEW`` lanes per value, ``32 / LMUL`` register
  groups, the layout planner's merged passes and in-register shuffles. It runs on every core
  with VLEN >= V (with VLEN > V it uses the low part of each register) and computes wrong
  results below it, so callers must check VLEN: the dispatching front end and the Python API
  do.
* ``rvv``: the VLEN-agnostic variant. The program is the portable C's (one lane per value) and
  the emitter strip-mines one loop of every loop nest with ``vsetvl``: whatever VLEN the core
  has, each strip takes as many iterations as one register group holds. Accesses that step
  through memory by more than one element become strided loads and stores (``vlse``/``vsse``);
  stride and vector length are public.

In-register shuffles (``shuffle`` of the vocabulary, fixed-VLEN backends only) come in two
styles, selected with ``shuffles=``: ``slide`` (default) merges a masked ``vslideup`` (first
output) and a masked ``vslidedown`` (second output) into the other operand, one instruction per
output; ``gather`` uses ``vrgather.vv`` with the index vectors ``vid -+ d`` under the same
masks. The masks depend only on lane numbers (``vid``), never on data. A third style,
``indexed`` (the presets' measured choice, :mod:`nttgen.tuning`), needs no in-register shuffle
at all: plans exchange lane bits with slot bits as chunks are loaded (``vluxei`` at constant
lane offsets computed from ``vid``), and the inverse scatters its stores (``vsuxei``); see
:class:`nttgen.plan.layout.PassPlan`.
"""

from __future__ import annotations

from ...lanes import LaneType
from .. import c_ast as C
from .base import HelperCalls, Isa

VL = C.Name("vl")


def call(name: str, *args: C.Expr) -> C.Expr:
    """A call of an intrinsic or helper."""
    return C.Call(name, args)


class RvvOps(HelperCalls, Isa):
    """The vocabulary in RVV 1.0 intrinsics for one LMUL; ``vl_expr`` is the vector length every
    op passes (a constant or the strip length)."""

    arch = "riscv64"
    cflags = ("-march=rv64gcv",)
    features = ("v",)
    compile_checks = (("__riscv_vector", "-march=rv64gcv"),)
    includes = ("riscv_vector.h",)
    # gcc 12 has no RVV intrinsics
    compilers = ("clang-19", "clang")
    lmul: int = 1
    # 4 / LMUL chunks of a complete NTT (set per class by rvv_class): instructions under QEMU
    # at VLEN 128, basemul_acc_cached k = 5 with 1, 2, 4 chunks at LMUL 1: ML-DSA 4,216,
    # 3,614, 3,488, NewHope-512 5,358, 4,852, 4,473; at LMUL 4, k = 3 with 1 and 2 chunks:
    # ML-DSA 788 and 1,680 (its 64-bit sums fill all 32 registers), NewHope-1024 1,898 and
    # 1,643. ML-KEM's chunks in pairs spill (LMUL 1, VLEN 256, k = 3: 903 -> 1,159)
    product_chunks = (4, 1)

    # ----------------------------------------------------------------- naming
    @property
    def vl_expr(self) -> C.Expr:
        """The vector length the ops pass."""
        return VL

    @property
    def _suffix(self) -> str:
        """The type suffix of the intrinsics, e.g. ``i16m1`` (``u16m1`` for lane numbers)."""
        return f"i{self.lane.bits}m{self.lmul}"

    @property
    def _usuffix(self) -> str:
        return "u" + self._suffix[1:]

    @property
    def _mask_type(self) -> str:
        return f"vbool{self.lane.bits // self.lmul}_t"

    def vec_type(self) -> str:
        """The C vector type, e.g. ``vint16m1_t``."""
        return f"vint{self.lane.bits}m{self.lmul}_t"

    @classmethod
    def has_wide_values(cls, lane: LaneType) -> bool:
        """Double-width register groups need twice the LMUL: at most 4 here."""
        del lane
        return cls.lmul <= 4

    @property
    def _wsuffix(self) -> str:
        """The intrinsics' suffix of the double-width register group, e.g. ``i32m2``."""
        if self.lmul > 4:
            raise ValueError(
                f"{self.name} has no double-width values at LMUL={self.lmul} (they need LMUL <= 4)"
            )
        return f"i{2 * self.lane.bits}m{2 * self.lmul}"

    def wide_type(self) -> str:
        """A double-width value is one register group of twice the LMUL (``vint32m2_t``)."""
        return f"vint{self._wsuffix[1:]}_t"  # the suffix refuses LMUL > 4

    def mulw(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """a*b widened: ``vwmul``."""
        return call(f"__riscv_vwmul_vv_{self._wsuffix}", a, b, self.vl_expr)

    def madd(self, a0: C.Expr, b0: C.Expr, a1: C.Expr, b1: C.Expr) -> C.Expr:
        """a0*b0 + a1*b1 widened: ``vwmul`` then ``vwmacc``."""
        w = self._wsuffix
        prod = call(f"__riscv_vwmul_vv_{w}", a0, b0, self.vl_expr)
        return call(f"__riscv_vwmacc_vv_{w}", prod, a1, b1, self.vl_expr)

    def addw(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Sum of double-width register groups."""
        return call(f"__riscv_vadd_vv_{self._wsuffix}", a, b, self.vl_expr)

    def mredw(self, a: C.Expr) -> C.Expr:
        """Montgomery reduction of a double-width register group."""
        return call(self.helper("mredw"), a, self.vl_expr)

    def _mredw_helper(self) -> C.FuncDef:
        """(a - m*q) / beta: the low halves by ``vncvt``, m by ``vmul``, a - m*q by one
        widening ``vwmacc`` by -q, and the exact narrowing shift ``vnsra``."""
        a, m = C.Name("a"), C.Name("m")
        bits = self.lane.bits
        w = self._wsuffix
        body = [
            self._decl(
                "m",
                self._h(
                    "vmul",
                    "vx",
                    call(f"__riscv_vncvt_x_x_w_{self._suffix}", a, VL),
                    C.Int(self.arith.qinv),
                ),
            ),
            C.Return(
                call(
                    f"__riscv_vnsra_wx_{self._suffix}",
                    call(f"__riscv_vwmacc_vx_{w}", a, C.Int(-self.arith.q), m, VL),
                    C.Int(self.lane.bits),
                    VL,
                )
            ),
        ]
        return C.FuncDef(
            self.vec_type(),
            self.helper("mredw"),
            (C.Param(self.wide_type(), "a"), C.Param("size_t", "vl")),
            tuple(body),
            storage="static inline",
            doc=(
                f"Signed Montgomery reduction of {2 * bits}-bit sums to {bits}-bit lanes:",
                f"(a - m*q) / 2^{bits} with m = lo(a)*q^-1 mod 2^{bits}.",
            ),
        )

    def _v(self, op: str, form: str, *args: C.Expr, vl: C.Expr | None = None) -> C.Expr:
        """``__riscv_<op>_<form>_<type>(args..., vl)``."""
        return call(f"__riscv_{op}_{form}_{self._suffix}", *args, vl or self.vl_expr)

    def _h(self, op: str, form: str, *args: C.Expr) -> C.Expr:
        """As :meth:`_v` inside a helper, whose last parameter is the vector length."""
        return self._v(op, form, *args, vl=VL)

    def splat(self, x: C.Expr, vl: C.Expr | None = None) -> C.Expr:
        """Every lane set to the scalar x (``vmv.v.x``)."""
        return self._v("vmv", "v_x", x, vl=vl)

    # ----------------------------------------------------------------- memory
    def _ptr(self, base: C.Expr, index: C.Expr) -> C.Expr:
        return self.address(base, index)

    def load(self, base: C.Expr, index: C.Expr, aligned: bool) -> C.Expr:
        """Unit-stride load (``vle``; RVV loads need only element alignment)."""
        del aligned
        return self._v(f"vle{self.lane.bits}", "v", self._ptr(base, index))

    def load_strided(self, base: C.Expr, index: C.Expr, stride: int) -> C.Expr:
        """Load lanes ``stride`` elements apart (``vlse``; the stride is in bytes)."""
        if stride == 1:
            return self.load(base, index, False)
        return self._v(
            f"vlse{self.lane.bits}",
            "v",
            self._ptr(base, index),
            C.Int(stride * self.lane.bits // 8),
        )

    def load_broadcast(self, base: C.Expr, index: C.Expr) -> C.Expr:
        """One element into every lane (a scalar load and ``vmv.v.x``)."""
        return self.splat(C.Index(base, index))

    def store(self, base: C.Expr, index: C.Expr, value: C.Expr, aligned: bool) -> C.Stmt:
        """Unit-stride store (``vse``)."""
        del aligned
        return self.store_strided(base, index, value, 1)

    def store_strided(self, base: C.Expr, index: C.Expr, value: C.Expr, stride: int) -> C.Stmt:
        """Store lanes ``stride`` elements apart (``vsse``; ``vse`` for stride 1)."""
        bits = self.lane.bits
        if stride == 1:
            return C.ExprStmt(self._v(f"vse{bits}", "v", self._ptr(base, index), value))
        stride_bytes = C.Int(stride * bits // 8)
        return C.ExprStmt(self._v(f"vsse{bits}", "v", self._ptr(base, index), stride_bytes, value))

    def lane_offsets(self, name: str, lanes_at: tuple[int, ...]) -> C.Stmt:
        """Byte offsets of the lanes of an indexed load or store, computed from the lane
        number (``vid``) when ``lanes_at`` is additive in its bits (lane j = the sum of the
        offsets of j's set bits, as for every bit permutation): per lane bit one ``vand``
        and one shift, no memory access and no data involved."""
        lanes = len(lanes_at)
        size = self.lane.bits // 8
        unit = [lanes_at[1 << k] for k in range(lanes.bit_length() - 1)]
        if lanes_at[0] != 0 or any(
            lanes_at[j] != sum(c for k, c in enumerate(unit) if j >> k & 1) for j in range(lanes)
        ):
            raise ValueError(f"{self.name}: lane offsets {lanes_at} are not additive in lane bits")
        if max(lanes_at) * size >= 1 << self.lane.bits:
            raise ValueError(f"{self.name}: lane offsets {lanes_at} do not fit the index lanes")
        # lane bits that move by the same distance share one AND and one shift
        moves: dict[int, int] = {}
        for k, c in enumerate(unit):
            shift = (c * size).bit_length() - 1
            if c * size != 1 << shift:
                raise ValueError(f"{self.name}: lane offset {c} is not a power of two")
            moves[shift - k] = moves.get(shift - k, 0) | 1 << k
        u = self._usuffix
        vid = call(f"__riscv_vid_v_{u}", self.vl_expr)
        total: C.Expr | None = None
        for by, mask in sorted(moves.items()):
            term = call(f"__riscv_vand_vx_{u}", vid, C.Int(mask), self.vl_expr)
            if by:
                op = "vsll" if by > 0 else "vsrl"
                term = call(f"__riscv_{op}_vx_{u}", term, C.Int(abs(by)), self.vl_expr)
            if total is not None:
                term = call(f"__riscv_vor_vv_{u}", total, term, self.vl_expr)
            total = term
        assert total is not None
        return C.Decl(f"vuint{self.lane.bits}m{self.lmul}_t", name, total, const=True)

    def load_gather(self, base: C.Expr, index: C.Expr, offsets: C.Expr) -> C.Expr:
        """Indexed load (``vluxei``: unordered, the lanes are independent elements)."""
        return self._v(f"vluxei{self.lane.bits}", "v", self._ptr(base, index), offsets)

    def store_scatter(self, base: C.Expr, index: C.Expr, value: C.Expr, offsets: C.Expr) -> C.Stmt:
        """Indexed store (``vsuxei``; no two lanes share an address, so order is moot)."""
        return C.ExprStmt(
            self._v(f"vsuxei{self.lane.bits}", "v", self._ptr(base, index), offsets, value)
        )

    # ----------------------------------------------------------------- helpers
    def _fn(
        self,
        name: str,
        params: tuple[str, ...],
        body: list[C.Stmt],
        doc: tuple[str, ...],
        scalars: tuple[str, ...] = (),
    ) -> C.FuncDef:
        """A helper taking vectors ``params`` (or lane scalars for the names in ``scalars``)
        and the vector length."""
        vec = self.vec_type()
        ps = tuple(C.Param(self.lane.c_type if p in scalars else vec, p) for p in params)
        return C.FuncDef(
            self.vec_type(),
            self.helper(name),
            (*ps, C.Param("size_t", "vl")),
            tuple(body),
            storage="static inline",
            doc=doc,
        )

    def _decl(self, name: str, value: C.Expr) -> C.Stmt:
        return C.Decl(self.vec_type(), name, value, const=True)

    def helpers(self) -> list[C.Top]:
        """Montgomery (by vectors and by scalars), Barrett, the sign correction and the
        interleaves as static inline functions of (operands..., vl)."""
        q, qinv = self.arith.q, self.arith.qinv
        v, k = self.arith.barrett_v, self.arith.barrett_k
        bits = self.lane.bits
        a, b, z, zq = C.Name("a"), C.Name("b"), C.Name("z"), C.Name("zq")
        n = C.Name
        sub, mul, mulh = "vsub", "vmul", "vmulh"
        fns: list[C.Top] = []
        for form, scalars in (("vv", ()), ("vx", ("z", "zq"))):
            fns.append(
                self._fn(
                    "montmul" if form == "vv" else "montmul_vx",
                    ("a", "z", "zq"),
                    [
                        self._decl("hi", self._h(mulh, form, a, z)),
                        self._decl("m", self._h(mul, form, a, zq)),
                        C.Return(
                            self._h(sub, "vv", n("hi"), self._h(mulh, "vx", n("m"), C.Int(q)))
                        ),
                    ],
                    (
                        "Signed Montgomery multiplication by a twisted constant"
                        + (" (scalar z, zq)" if scalars else "")
                        + f": (a*z - m*q) / 2^{bits},",
                        f"m = a*zq mod 2^{bits}, as hi(a*z) - hi(m*q) (vmulh, vmul, vmulh, vsub).",
                    ),
                    scalars,
                )
            )
        fns += [
            self._fn(
                "montmul_var",
                ("a", "b"),
                [
                    self._decl("hi", self._h(mulh, "vv", a, b)),
                    self._decl("m", self._h(mul, "vx", self._h(mul, "vv", a, b), C.Int(qinv))),
                    C.Return(self._h(sub, "vv", n("hi"), self._h(mulh, "vx", n("m"), C.Int(q)))),
                ],
                (
                    f"Signed Montgomery product (a*b - m*q) / 2^{bits}, m = lo(a*b)*q^-1 mod "
                    f"2^{bits}.",
                ),
            ),
            self._fn(
                "barrett",
                ("a",),
                [
                    self._decl(
                        "t",
                        self._h(
                            "vssra",
                            "vx",
                            self._h(mulh, "vx", a, C.Int(v)),
                            C.Int(k),
                            C.Name("__RISCV_VXRM_RNU"),
                        ),
                    ),
                    C.Return(self._h("vnmsac", "vx", a, C.Int(q), n("t"))),
                ],
                (
                    f"Signed Barrett reduction: t = round(hi(a*{v}) / 2^{k}) by vssra with "
                    "round-to-nearest-up,",
                    "then a - t*q by vnmsac.",
                ),
            ),
            self._coarse_helper(),
            self._fn(
                "cond_add_q",
                ("a",),
                [
                    self._decl("mask", self._h("vsra", "vx", a, C.Int(bits - 1))),
                    C.Return(self._h("vadd", "vv", a, self._h("vand", "vx", n("mask"), C.Int(q)))),
                ],
                ("Adds q to the lanes that are negative, from the sign mask (no branch).",),
            ),
        ]
        if self.lmul <= 4:
            fns.append(self._mredw_helper())
        return fns

    # ----------------------------------------------------------------- vocabulary
    def montmul(self, a: C.Expr, z: C.Expr, zq: C.Expr) -> C.Expr:
        """Montgomery product by a twisted constant."""
        return call(self.helper("montmul"), a, z, zq, self.vl_expr)

    def montmul_vx(self, a: C.Expr, z: C.Expr, zq: C.Expr) -> C.Expr:
        """Montgomery product by a twisted scalar constant (``.vx`` forms)."""
        return call(self.helper("montmul_vx"), a, z, zq, self.vl_expr)

    def montmul_var(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Montgomery product of two variables."""
        return call(self.helper("montmul_var"), a, b, self.vl_expr)

    def barrett(self, a: C.Expr) -> C.Expr:
        """Barrett reduction."""
        return call(self.helper("barrett"), a, self.vl_expr)

    def _coarse_helper(self) -> C.FuncDef:
        """``barrett_coarse``: t by one rounding step with round-to-nearest-up (16-bit lanes:
        vsmul by v; 32-bit lanes: vssra by the shift, exact for every lane value), then a -
        t*q by vnmsac."""
        ar, bits = self.arith, self.lane.bits
        a, v, c = C.Name("a"), ar.barrett_coarse_v, ar.barrett_coarse_shift
        rnu = C.Name("__RISCV_VXRM_RNU")
        if bits == 16:
            t = self._h("vsmul", "vx", a, C.Int(v), rnu)
            how = f"one rounding high product: t = round(a*{v} / 2^{c}) by vsmul"
        else:
            t = self._h("vssra", "vx", a, C.Int(c), rnu)
            how = f"one rounding shift: t = round(a / 2^{c}) by vssra (2^{c} near q)"
        return self._fn(
            "barrett_coarse",
            ("a",),
            [self._decl("t", t), C.Return(self._h("vnmsac", "vx", a, C.Int(ar.q), C.Name("t")))],
            (
                "Barrett reduction by " + how,
                "with round-to-nearest-up, then a - t*q by vnmsac: congruent to a, in a "
                "wider range than barrett.",
            ),
        )

    def barrett_coarse(self, a: C.Expr) -> C.Expr:
        """Barrett reduction by one rounding high product."""
        return call(self.helper("barrett_coarse"), a, self.vl_expr)

    def cond_add_q(self, a: C.Expr) -> C.Expr:
        """a + (q AND the sign mask of a)."""
        return call(self.helper("cond_add_q"), a, self.vl_expr)

    def const(self, *, value: int) -> C.Expr:
        """Broadcast (``vmv.v.x``)."""
        return self.splat(C.Int(value))

    def add(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise add."""
        return self._v("vadd", "vv", a, b)

    def sub(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Lane-wise subtract."""
        return self._v("vsub", "vv", a, b)

    def mullo(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """Low halves of the products (``vmul``)."""
        return self._v("vmul", "vv", a, b)

    def mulhi(self, a: C.Expr, b: C.Expr) -> C.Expr:
        """High halves of the signed products (``vmulh``)."""
        return self._v("vmulh", "vv", a, b)

    def sra(self, a: C.Expr, *, k: int) -> C.Expr:
        """Arithmetic shift right (``vsra.vx``)."""
        return self._v("vsra", "vx", a, C.Int(k)) if k else a

    def scalar_form(self, op: str, vec: C.Expr, scalar: C.Expr, scalar_first: bool) -> C.Expr:
        """``op`` (add, sub, mullo or mulhi) of a vector and a lane scalar in the ``.vx`` form
        (``vrsub`` when the scalar is the minuend)."""
        forms = {"add": "vadd", "mullo": "vmul", "mulhi": "vmulh"}
        if op == "sub":
            return self._v("vrsub" if scalar_first else "vsub", "vx", vec, scalar)
        return self._v(forms[op], "vx", vec, scalar)

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d (fixed-VLEN backends only)."""
        raise ValueError(f"{self.name} has no in-register shuffle")

    def zip(self, a: C.Expr, b: C.Expr, *, w: int, g: int, inverse: int) -> tuple[C.Expr, C.Expr]:
        """RVV has no grouped interleave instruction; the planner swaps lane bits instead (RVV
        declares no move costs), so programs never ask for one."""
        raise ValueError(f"{self.name} has no grouped interleave (zip)")
