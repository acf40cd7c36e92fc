"""AVX2: 256-bit vectors, 16 lanes of 16 bits or 8 lanes of 32 bits (arithmetic in :mod:`.x86`).

Shuffles (one per lane distance d, see :func:`nttgen.dsl.semantics.shuffle`): d = L/2 swaps
128-bit halves (``vinserti128`` and ``vperm2i128``); 64-bit granularity uses
``vpunpck{l,h}qdq``; 32-bit granularity a 64-bit shift and ``vpblendd``; 16-bit granularity a
32-bit shift and ``vpblendw``."""

from __future__ import annotations

from .. import c_ast as C
from .x86 import X86Simd, call


class Avx2(X86Simd):
    """The AVX2 backend."""

    name = "avx2"
    title = "AVX2 (256-bit vectors)"
    cflags = ("-mavx2",)
    features = ("avx2",)
    compile_checks = (("__AVX2__", "-mavx2"),)
    width = 256
    cpuid7_ebx = 1 << 5  # AVX2
    xcr0 = 0x6  # SSE and AVX (ymm) state

    def blend_odd(self, a: C.Expr, b: C.Expr, width: int) -> C.Expr:
        """``vpblendw``/``vpblendd`` with an immediate (the word blend repeats per 128 bits)."""
        return call(f"_mm256_blend_epi{width}", a, b, C.Int(0xAA))

    def shuffle(self, a: C.Expr, b: C.Expr, *, d: int) -> tuple[C.Expr, C.Expr]:
        """Interleave at lane distance d."""
        width = d * self.lane.bits  # bits per interleaved block
        if width == 128:
            # the low halves by an insertion (one cycle where vperm2i128 takes three on
            # AMD): clang rewrites the permutation so itself, gcc keeps what it is given
            low = call("_mm256_inserti128_si256", a, call("_mm256_castsi256_si128", b), C.Int(1))
            return low, call("_mm256_permute2x128_si256", a, b, C.Int(0x31))
        if width == 64:
            return call("_mm256_unpacklo_epi64", a, b), call("_mm256_unpackhi_epi64", a, b)
        if width in (16, 32):
            return self._helper_pair(f"ilv{width}", a, b)
        raise ValueError(f"no AVX2 shuffle for {d} lanes of {self.lane.bits} bits")
