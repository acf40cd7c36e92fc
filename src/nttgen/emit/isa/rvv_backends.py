"""The RISC-V Vector backends over :class:`~nttgen.emit.isa.rvv.RvvOps`: ``rvv<VLEN>`` for one
VLEN (:class:`RvvFixed`, with its in-register shuffles) and the VLEN-agnostic ``rvv``
(:class:`RvvAgnostic`, strip-mined by :mod:`nttgen.emit.strip_emit`), made by name with
:func:`rvv_class`. The templates they share, and why they are built as they are, are in
:mod:`nttgen.emit.isa.rvv`.
"""

from __future__ import annotations

import re

from ...errors import UnknownNameError
from ...lanes import LaneType
from ...plan.layout import MoveCosts
from .. import c_ast as C
from .rvv import VL, RvvOps, call


class RvvFixed(RvvOps):
    """RVV code for one VLEN: ``vlen * lmul / SEW`` lanes per value, constant vector lengths."""

    vlen: int = 128
    # twiddles every lane shares stay lane scalars, used by the ``.vx`` forms
    scalar_operands = True
    shuffle_styles = ("slide", "gather", "compress", "indexed")
    gathers = True

    @classmethod
    def move_costs(cls, lane: LaneType, style: str = "default") -> MoveCosts | None:
        """Instructions per register pair (forward, inverse), as executed under QEMU. A swap is
        a masked slide (or gather) per output into a copy of the other operand: 4 both ways. A
        zip of the whole register group (:func:`nttgen.dsl.semantics.zip_lanes` with 2^g = the
        lane count) interleaves by one widening add and one widening multiply-add (a +
        (2^E - 1)*b + b in 2E-bit elements is a, b side by side), forward; backwards the two
        narrowing shifts by 0 and by E bits (``vnsrl``) take the halves apart again, or, in
        the ``compress`` style, ``vcompress`` of the even and odd elements of each input and a
        slide join them (3 per output). Widening needs elements of at most 32 bits and
        LMUL <= 4, and the double-width ops switch the vector type (``vsetvli``) twice.

        Measured (instructions per call, plans forced to zips against swaps alone): the
        widening zip costs more than the slides forward (ML-KEM NTT at VLEN 256: 746 -> 886,
        NewHope-512 at 128: 4,271 -> 4,938) and the narrowing unzip less backwards (ML-KEM
        inverse at 128: 1,878 -> 1,696, NewHope-512: 4,494 -> 4,275); the compress style loses
        both ways (4,649). The inverse runs the forward's moves backwards, so a zip pays both;
        the table states about 6 forward and 2 backwards, which ties with the slides' 8, and the
        planner keeps the slides (fewer zips win ties)."""
        lane_bits = cls.lanes_for(lane).bit_length() - 1
        swap = ((4, 4),) * lane_bits
        widths = [w for w in range(lane_bits) if lane.bits << w <= 32]
        if cls.lmul > 4 or not widths or lane_bits < 1:
            return MoveCosts(swap=swap)
        back = 6 if style == "compress" else 2
        return MoveCosts(swap=swap, zip_group=lane_bits, zip=tuple((6, back) for _ in widths))

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """A register group's lanes at this VLEN and LMUL."""
        return cls.vlen * cls.lmul // lane.bits

    @classmethod
    def small_ring_isas(cls) -> str:
        """The VLEN-agnostic code runs any ring; smaller register groups hold fewer lanes."""
        smaller = f" or isa='rvv{cls.vlen}m1'" if cls.lmul > 1 else ""
        return f"isa='rvv'{smaller}"

    @property
    def vl_expr(self) -> C.Expr:
        """The constant vector length: every lane of the group."""
        return C.Int(self.lanes_for(self.lane))

    def helpers(self) -> list[C.Top]:
        """The arithmetic helpers and the interleaves of every distance below the lane count."""
        fns = super().helpers()
        lanes = self.lanes_for(self.lane)
        d = 1
        while d < lanes:
            fns += self._interleave(d)
            d *= 2
        return fns + self._zip_helpers()

    def _lane_mask(self, d: int, odd: bool) -> C.Stmt:
        """mask = whether bit log2(d) of the lane number is set (``odd``) or clear."""
        u = self._usuffix
        bits = self.lane.bits
        vid = call(f"__riscv_vid_v_{u}", VL)
        bit = call(f"__riscv_vand_vx_{u}", vid, C.Int(d), VL)
        cmp = "vmsne" if odd else "vmseq"
        test = call(f"__riscv_{cmp}_vx_{u}_b{bits // self.lmul}", bit, C.Int(0), VL)
        return C.Decl(self._mask_type, "mask", test, const=True)

    def _interleave(self, d: int) -> list[C.Top]:
        """The two outputs of ``shuffle(d)`` as helpers ``ilv<d>_lo``/``ilv<d>_hi``."""
        a, b, mask = C.Name("a"), C.Name("b"), C.Name("mask")
        u = self._usuffix
        out: list[C.Top] = []
        for half in ("lo", "hi"):
            # lo: lanes with bit d set take b[i - d]; hi: lanes with it clear take a[i + d]
            keep, src = (a, b) if half == "lo" else (b, a)
            if self.style == "gather":
                vid = call(f"__riscv_vid_v_{u}", VL)
                index = call(
                    f"__riscv_v{'sub' if half == 'lo' else 'add'}_vx_{u}", vid, C.Int(d), VL
                )
                value = C.Call(
                    f"__riscv_vrgather_vv_{self._suffix}_mu", (mask, keep, src, index, VL)
                )
                how = f"vrgather by lane {'- ' if half == 'lo' else '+ '}{d}"
            else:
                op = "vslideup" if half == "lo" else "vslidedown"
                value = C.Call(
                    f"__riscv_{op}_vx_{self._suffix}_mu", (mask, keep, src, C.Int(d), VL)
                )
                how = f"masked {op}"
            which = "first" if half == "lo" else "second"
            out.append(
                self._fn(
                    f"ilv{d}_{half}",
                    ("a", "b"),
                    [self._lane_mask(d, half == "lo"), C.Return(value)],
                    (f"The {which} output of the interleave at lane distance {d} ({how}).",),
                )
            )
        return out

    def _zip_helpers(self) -> list[C.Top]:
        """Interleave of two register groups into one group of twice the LMUL (``zip<E>``),
        and de-interleave of such a group's two halves (``unzip<E>_lo``/``_hi``), for E-bit
        elements; in the ``compress`` style the de-interleave compresses instead."""
        out: list[C.Top] = []
        lanes = self.lanes_for(self.lane)
        a, b = C.Name("a"), C.Name("b")
        s, bits, m = self._suffix, self.lane.bits, self.lmul
        for w in range(lanes.bit_length() - 1):
            e = bits << w
            if e > 32 or m > 4:
                continue
            ue, ue2 = f"u{e}m{m}", f"u{2 * e}m{2 * m}"
            vl_e = C.Bin("/", VL, C.Int(1 << w)) if w else VL

            def as_e(x: C.Expr, e: int = e) -> C.Expr:
                unsigned = call(f"__riscv_vreinterpret_v_{s}_u{bits}m{m}", x)
                if e == bits:
                    return unsigned
                return call(f"__riscv_vreinterpret_v_u{bits}m{m}_u{e}m{m}", unsigned)

            def from_e(x: C.Expr, e: int = e) -> C.Expr:
                if e != bits:
                    x = call(f"__riscv_vreinterpret_v_u{e}m{m}_u{bits}m{m}", x)
                return call(f"__riscv_vreinterpret_v_u{bits}m{m}_{s}", x)

            wide = call(
                f"__riscv_vwmaccu_vx_{ue2}",
                call(f"__riscv_vwaddu_vv_{ue2}", C.Name("ua"), C.Name("ub"), vl_e),
                C.Name(f"0x{(1 << e) - 1:x}u"),
                C.Name("ub"),
                vl_e,
            )
            out.append(
                C.FuncDef(
                    f"vuint{2 * e}m{2 * m}_t",
                    self.helper(f"zip{e}"),
                    (
                        C.Param(self.vec_type(), "a"),
                        C.Param(self.vec_type(), "b"),
                        C.Param("size_t", "vl"),
                    ),
                    (
                        C.Decl(f"vuint{e}m{m}_t", "ua", as_e(a), const=True),
                        C.Decl(f"vuint{e}m{m}_t", "ub", as_e(b), const=True),
                        C.Return(wide),
                    ),
                    storage="static inline",
                    doc=(
                        f"The {e}-bit elements of a and b interleaved (a0 b0 a1 b1 ...) in one",
                        f"group of twice the LMUL: a + (2^{e} - 1)*b + b in {2 * e}-bit elements",
                        "by a widening add and a widening multiply-add.",
                    ),
                )
            )
            for half in ("lo", "hi"):
                if self.style == "compress":
                    u = f"u{e}m{m}"
                    vid = call(f"__riscv_vid_v_{u}", vl_e)
                    parity = call(f"__riscv_vand_vx_{u}", vid, C.Int(1), vl_e)
                    cmp = "vmseq" if half == "lo" else "vmsne"
                    mask = call(f"__riscv_{cmp}_vx_{u}_b{e // m}", parity, C.Int(0), vl_e)
                    first = call(f"__riscv_vcompress_vm_{u}", as_e(a), C.Name("pick"), vl_e)
                    second = call(f"__riscv_vcompress_vm_{u}", as_e(b), C.Name("pick"), vl_e)
                    joined = call(
                        f"__riscv_vslideup_vx_{u}", first, second,
                        C.Bin("/", vl_e, C.Int(2)), vl_e,
                    )  # fmt: skip
                    body: tuple[C.Stmt, ...] = (
                        C.Decl(f"vbool{e // m}_t", "pick", mask, const=True),
                        C.Return(from_e(joined)),
                    )
                    how = "vcompress of each input's even (odd) elements, joined by a slide"
                else:
                    pair = call(
                        f"__riscv_vreinterpret_v_u{e}m{2 * m}_{ue2}",
                        call(f"__riscv_vcreate_v_{ue}_u{e}m{2 * m}", as_e(a), as_e(b)),
                    )
                    narrow = call(
                        f"__riscv_vnsrl_wx_{ue}", pair, C.Int(0 if half == "lo" else e), vl_e
                    )
                    body = (C.Return(from_e(narrow)),)
                    how = "a narrowing shift of the joined pair"
                which = "even" if half == "lo" else "odd"
                out.append(
                    self._fn(
                        f"unzip{e}_{half}",
                        ("a", "b"),
                        list(body),
                        (f"The {which} {e}-bit elements of a, then of b ({how}).",),
                    )
                )
        return out

    def zip(self, a: C.Expr, b: C.Expr, *, w: int, g: int, inverse: int) -> tuple[C.Expr, C.Expr]:
        """Interleave (or de-interleave) elements of 2^w lanes across the whole register
        group (``g`` must be its lane bits): see :meth:`_zip_helpers`."""
        lanes = self.lanes_for(self.lane)
        e = self.lane.bits << w
        if 1 << g != lanes or e > 32 or self.lmul > 4:
            raise ValueError(f"no {self.name} zip of {e}-bit elements in groups of {1 << g} lanes")
        if inverse:
            return (
                call(self.helper(f"unzip{e}_lo"), a, b, self.vl_expr),
                call(self.helper(f"unzip{e}_hi"), a, b, self.vl_expr),
            )
        u, m, s = f"u{self.lane.bits}", self.lmul, self._suffix
        wide = call(self.helper(f"zip{e}"), a, b, self.vl_expr)
        halves = call(f"__riscv_vreinterpret_v_u{2 * e}m{2 * m}_{u}m{2 * m}", wide)
        return tuple(  # type: ignore[return-value]
            call(
                f"__riscv_vreinterpret_v_{u}m{m}_{s}",
                call(f"__riscv_vget_v_{u}m{2 * m}_{u}m{m}", halves, C.Int(k)),
            )
            for k in (0, 1)
        )

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d: two masked slides (or gathers)."""
        lanes = self.lanes_for(self.lane)
        if d < 1 or d >= lanes or d & (d - 1):
            raise ValueError(f"no {self.name} shuffle at distance {d} of {lanes} lanes")
        return (
            call(self.helper(f"ilv{d}_lo"), a, b, self.vl_expr),
            call(self.helper(f"ilv{d}_hi"), a, b, self.vl_expr),
        )


class RvvAgnostic(RvvOps):
    """The VLEN-agnostic backend: the one-lane program, strip-mined by its emitter."""

    strip_mined = True

    @classmethod
    def lanes_for(cls, lane: LaneType) -> int:
        """The program has one lane per value; the emitter makes each a strip of vl lanes."""
        del lane
        return 1

    @classmethod
    def unsupported(cls, n: int, lane: LaneType) -> str | None:
        """Strip-mining runs any ring."""
        del n, lane
        return None

    def setvl(self, avl: C.Expr) -> C.Expr:
        """``vsetvl`` for the lane type and LMUL: min(avl, VLMAX)."""
        return call(f"__riscv_vsetvl_e{self.lane.bits}m{self.lmul}", avl)


FIXED_DEFAULT_LMUL = 2
"""The register-group size of a VLEN-specialised name without ``m<LMUL>`` (``rvv128``,
``rvv256``). Each LMUL-2 instruction covers two registers, and with pass plans tuned for twelve
register groups (:mod:`nttgen.tuning`) LMUL 2 executes 37-53 % fewer instructions than LMUL 1
for every preset, op and VLEN, with less vector work (each vector instruction counted per
register of its group, :mod:`nttgen.bench.icount`) in all but the transforms of NewHope-512 and
-1024 (up to 9 % more). QEMU, clang-19 -O3, 2026-11-28, LMUL 1 -> 2, instructions (vector work):

- VLEN 128, ML-KEM ntt 1,172 (1,172) -> 622 (1,099), basemul_acc k = 3 1,821 (2,205) -> 921
  (1,769), polymul 4,477 (4,501) -> 2,363 (4,205); ML-DSA basemul 717 (717) -> 365 (621),
  polymul 8,708 (8,708) -> 4,617 (8,092).
- VLEN 256, ML-KEM polymul 2,218 (2,230) -> 1,213 (2,161); NewHope-1024 ntt 3,396 (3,492) ->
  2,148 (3,820), polymul 11,260 (11,568) -> 6,803 (12,224).

LMUL 4 and 8 cut the instructions further but do more vector work (ML-KEM ntt at VLEN 128:
430 instructions and 1,417 work at LMUL 4, 393 and 1,891 at LMUL 8: whole-register moves,
register groups loaded to use part of them). A core that issues one instruction per cycle into
a vector unit as wide as VLEN needs about the larger of the two counts in cycles, so LMUL 2 is
the default; ``m1`` names keep LMUL 1. A complete NTT's element-wise base multiplications run
at LMUL 4 inside the same files (:data:`nttgen.tuning.PRODUCT_GROUPS`)."""

AGNOSTIC_DEFAULT_LMUL = 1
"""The register-group size of ``rvv`` without ``m<LMUL>``. Its strip-mined loops at LMUL 2 do
up to 25 % more vector work than at LMUL 1 (ML-KEM ntt, VLEN 128: 1,082 instructions and
vector work 1,082 at LMUL 1; 774 and 1,352 at LMUL 2), so it stays at LMUL 1."""

FIXED_PLAN_REGISTERS = 24
"""The registers (at LMUL 1) the layout planner may fill in the VLEN-specialised backends: the
other 8 hold what the passes keep live besides the data (the indexed loads' lane offsets,
twiddles, constants, masks). Planned for all 32, clang-19 spilled register groups in 7 of the 10
preset files (ML-DSA ``rvv256`` 87 spill or reload instructions, ML-DSA ``rvv128`` 67); planned
for 24 none does. Instructions under QEMU, 32 -> 24, VLEN 128: ML-KEM ntt 1,382 -> 1,264, intt
1,315 -> 1,398, polymul 4,849 -> 4,678; ML-DSA 2,871 -> 2,660, 3,215 -> 2,720, 9,871 -> 8,954;
NewHope-512 4,009 -> 3,293, 4,070 -> 3,364, 13,002 -> 10,864; VLEN 256: ML-KEM 569 -> 612,
644 -> 706, 2,176 -> 2,353 (one spill at 32); ML-DSA 1,613 -> 1,402, 1,630 -> 1,452, 5,353 ->
4,721 (with its passes as loops, unrolled it still spilled); NewHope-512 1,683 -> 1,702,
2,077 -> 1,746, 5,909 -> 5,615."""

_NAME = re.compile(r"rvv(\d*)(?:m(\d))?")
_CLASSES: dict[str, type[RvvOps]] = {}


def rvv_class(name: str) -> type[RvvOps]:
    """The RVV backend called ``name``: ``rvv`` (VLEN-agnostic) or ``rvv<VLEN>``, optionally
    followed by ``m<LMUL>`` (LMUL 1, 2, 4 or 8, else :data:`FIXED_DEFAULT_LMUL` or
    :data:`AGNOSTIC_DEFAULT_LMUL`; VLEN a power of two
    from 128 to 1024)."""
    if name in _CLASSES:
        return _CLASSES[name]
    m = _NAME.fullmatch(name)
    if not m:
        raise UnknownNameError(f"not an RVV backend name: {name!r}")
    vlen = int(m.group(1)) if m.group(1) else None
    default = AGNOSTIC_DEFAULT_LMUL if vlen is None else FIXED_DEFAULT_LMUL
    lmul = int(m.group(2)) if m.group(2) else default
    if lmul not in (1, 2, 4, 8):
        raise UnknownNameError(f"{name}: LMUL must be 1, 2, 4 or 8, not {lmul}")
    if vlen is not None and vlen not in (128, 256, 512, 1024):
        raise UnknownNameError(f"{name}: VLEN must be 128, 256, 512 or 1024 bits, not {vlen}")
    attrs: dict[str, object] = {
        "name": name,
        "lmul": lmul,
        "registers": (32 if vlen is None else FIXED_PLAN_REGISTERS) // lmul,
        "product_chunks": (max(1, 4 // lmul), 1),
    }
    if vlen is None:
        attrs["title"] = f"RISC-V Vector 1.0, VLEN-agnostic (strip-mined by vsetvl, LMUL={lmul})"
        cls: type[RvvOps] = type(f"Rvv_{name}", (RvvAgnostic,), attrs)
    else:
        attrs |= {"vlen": vlen, "min_vlen": vlen}
        attrs["title"] = f"RISC-V Vector 1.0 for VLEN >= {vlen} (LMUL={lmul})"
        cls = type(f"Rvv_{name}", (RvvFixed,), attrs)
    cls.__doc__ = f"The {attrs['title']} backend."
    _CLASSES[name] = cls
    return cls
