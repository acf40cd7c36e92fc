"""AVX-512 (F + BW): 512-bit vectors, 32 lanes of 16 bits or 16 of 32 bits, 32 registers.

The arithmetic is that of :mod:`.x86` in ``zmm`` registers; what is new is the register file (32
registers: a 256-coefficient polynomial of 16-bit lanes is 8 of them, so the planner can run the
whole transform between one load and one store) and the shuffles, with mask registers for blends
and sign corrections. Three shuffle styles (one per lane distance d, see
:func:`nttgen.dsl.semantics.shuffle`), chosen per ring by measurement (:mod:`nttgen.tuning`):

``native``
    fixed patterns only: 256-bit halves with ``vshufi64x2``; 128-bit blocks with two
    ``vshufi64x2`` per output (gather the even blocks, then reorder); 64-bit blocks with
    ``vpunpck{l,h}qdq``; 32- and 16-bit blocks with a 64/32-bit shift and a masked blend.
``blocks``
    ``native``, but 128-bit blocks with one ``vpermt2q`` per output (what clang makes of the
    two ``vshufi64x2``; gcc keeps both).
``permute``
    one two-source permutation per output (``vpermt2q``/``vpermt2d``/``vpermt2w``) at the block
    width, with the index vector as a constant, for every distance.
"""

from __future__ import annotations

from ...dsl.semantics import shuffle_lane_sources
from .. import c_ast as C
from .x86 import X86Simd, call


def _hex(v: int) -> C.Expr:
    return C.Name(f"0x{v:x}")


def _indexed(perm: C.Expr) -> list[C.Stmt]:
    """The body of a helper returning the two-source permutation ``perm`` (func(a, index, b)),
    its index vector a local of its own (so that the lines fit)."""
    assert isinstance(perm, C.Call)
    a, index, b = perm.args
    return [
        C.Decl("__m512i", "idx", index, const=True),
        C.Return(C.Call(perm.func, (a, C.Name("idx"), b))),
    ]


class Avx512(X86Simd):
    """The AVX-512 backend."""

    name = "avx512"
    title = "AVX-512 (512-bit vectors, 32 registers)"
    cflags = ("-mavx512f", "-mavx512bw")
    features = ("avx512f", "avx512bw")
    compile_checks = (("__AVX512F__", "-mavx512f"), ("__AVX512BW__", "-mavx512bw"))
    width = 512
    cpuid7_ebx = (1 << 16) | (1 << 30)  # AVX512F, AVX512BW
    xcr0 = 0xE6  # SSE, AVX, opmask, upper halves of zmm0-15, zmm16-31
    registers = 32
    shuffle_styles = ("native", "blocks", "permute")
    # with 32 registers ML-KEM's chunks pay in pairs too (basemul_acc k = 5, clang/gcc:
    # 105/111 -> 100/104 ticks, basemul_acc_cached 80/83 -> 76/80; Zen 5)
    product_chunks = (2, 2)
    # m of mredw by vpmulld: with vpmuldq, clang zero-extends its low half by two shifts before
    # the next product (ML-DSA basemul_acc k = 3, clang-19: Zen 5 97 -> 112 ticks, Emerald
    # Rapids 250 -> 264; gcc 99 either way on Zen 5, 259 -> 241 on Emerald Rapids)
    mredw_m = "mullo"

    def blend_odd(self, a: C.Expr, b: C.Expr, width: int) -> C.Expr:
        """A masked blend (``vpblendmw``/``vpblendmd``): the mask selects b's odd blocks."""
        blocks = 512 // width
        mask = C.Name(f"0x{int('10' * (blocks // 2), 2):x}u")
        return call(f"_mm512_mask_blend_epi{width}", C.Cast(f"__mmask{blocks}", mask), a, b)

    def _cond_add_helper(self) -> list[C.Top]:
        """a + q in the lanes whose sign bit is set, as a masked add (mask from the sign bits,
        which is data, but a masked add takes the same time whatever the mask holds)."""
        a = C.Name("a")
        bits = self.lane.bits
        if bits == 16:
            neg = call("_mm512_movepi16_mask", a)
        else:
            neg = call("_mm512_cmplt_epi32_mask", a, call("_mm512_setzero_si512"))
        mask_type = f"__mmask{self.lanes_for(self.lane)}"
        body = [
            C.Decl(mask_type, "neg", neg, const=True),
            C.Return(self._i("mask_add", a, C.Name("neg"), a, self._set1(self.arith.q))),
        ]
        doc = ("Adds q to the lanes that are negative: a masked add under the sign mask.",)
        return [self._fn("cond_add_q", ("a",), body, doc)]

    def _interleave_helpers(self) -> list[C.Top]:
        """Native style: the shift-and-blend interleaves and the two-step 128-bit one (blocks
        style: a two-source permutation for that one); permute style: one two-source
        permutation helper per block width."""
        a, b = C.Name("a"), C.Name("b")
        if self.style == "permute":
            fns: list[C.Top] = []
            for width in (16, 32, 64, 128, 256):
                if width < self.lane.bits:
                    continue
                lo, hi = self._permute(a, b, width)
                doc = f"blocks of a and b, interleaved at {width}-bit granularity (vpermt2)."
                fns.append(self._fn(f"perm{width}_lo", ("a", "b"), _indexed(lo), ("Even " + doc,)))
                fns.append(self._fn(f"perm{width}_hi", ("a", "b"), _indexed(hi), ("Odd " + doc,)))
            return fns
        fns = super()._interleave_helpers()
        if self.style == "blocks":
            for half, perm in zip(("lo", "hi"), self._permute(a, b, 128), strict=True):
                which = "Even" if half == "lo" else "Odd"
                doc = (f"{which} 128-bit blocks of a and b, interleaved (vpermt2q).",)
                fns.append(self._fn(f"ilv128_{half}", ("a", "b"), _indexed(perm), doc))
            return fns
        for half, imm in (("lo", 0x88), ("hi", 0xDD)):
            sel = C.Name("sel")
            body = [
                self._decl("sel", call("_mm512_shuffle_i64x2", a, b, C.Int(imm))),
                C.Return(call("_mm512_shuffle_i64x2", sel, sel, C.Int(0xD8))),
            ]
            which = "Even" if half == "lo" else "Odd"
            doc = (
                f"{which} 128-bit blocks of a and b, interleaved: gather them (a a b b), then",
                "reorder the middle two (a b a b).",
            )
            fns.append(self._fn(f"ilv128_{half}", ("a", "b"), body, doc))
        return fns

    def _permute(self, a: C.Expr, b: C.Expr, width: int) -> tuple[C.Expr, C.Expr]:
        """vpermt2{w,d,q} at the block width (at most 64 bits): index k < E picks a[k], E + k
        picks b[k] (E elements per vector)."""
        g = min(width, 64)
        elems = 512 // g
        per = 64 // g
        outs = []
        for sources in shuffle_lane_sources(width // g, elems):
            idx = [reg * elems + lane for reg, lane in sources]
            words = [
                sum(v << (g * j) for j, v in enumerate(idx[w * per : (w + 1) * per]))
                for w in range(8)
            ]
            vec = call("_mm512_set_epi64", *(_hex(w) for w in reversed(words)))
            outs.append(call(f"_mm512_permutex2var_epi{g}", a, vec, b))
        return outs[0], outs[1]

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d in the configured style."""
        width = d * self.lane.bits  # bits per interleaved block
        if width not in (16, 32, 64, 128, 256):
            raise ValueError(f"no AVX-512 shuffle for {d} lanes of {self.lane.bits} bits")
        if self.style == "permute":
            return call(self.helper(f"perm{width}_lo"), a, b), call(
                self.helper(f"perm{width}_hi"), a, b
            )
        if width == 256:
            return (
                call("_mm512_shuffle_i64x2", a, b, C.Int(0x44)),
                call("_mm512_shuffle_i64x2", a, b, C.Int(0xEE)),
            )
        if width == 64:
            return call("_mm512_unpacklo_epi64", a, b), call("_mm512_unpackhi_epi64", a, b)
        return self._helper_pair(f"ilv{width}", a, b)
