"""Data movement on AVX2 and AVX-512: interleaves of two vectors at 16- and 32-bit
granularity, their inverses inside 128-bit groups, and byte shuffles (``vpshufb``)."""

from __future__ import annotations

from typing import Any

from .. import c_ast as C


def call(name: str, *args: C.Expr) -> C.Expr:
    """A call of an intrinsic or helper."""
    return C.Call(name, args)


class X86Moves:
    """Interleave and shuffle helpers and the ``zip`` template, mixed into
    :class:`~.x86.X86Simd` (they compose its intrinsics ``_i``, ``_fn``, ``blend_odd`` and
    ``_helper_pair``)."""

    def _x(self) -> Any:
        return self

    def _interleave_helpers(self) -> list[C.Top]:
        """Interleaves at 16- and 32-bit granularity: a 32/64-bit shift and a blend per output."""
        isa = self._x()
        a, b = C.Name("a"), C.Name("b")
        fns: list[C.Top] = []
        for width in (16, 32):
            if width < isa.lane.bits:
                continue
            shift = f"epi{2 * width}"
            lo = isa.blend_odd(a, isa._i("slli", b, C.Int(width), e=shift), width)
            hi = isa.blend_odd(isa._i("srli", a, C.Int(width), e=shift), b, width)
            doc = f"blocks of a and b, interleaved at {width}-bit granularity."
            fns.append(isa._fn(f"ilv{width}_lo", ("a", "b"), [C.Return(lo)], ("Even " + doc,)))
            fns.append(isa._fn(f"ilv{width}_hi", ("a", "b"), [C.Return(hi)], ("Odd " + doc,)))
        return fns

    def _unzip_helpers(self) -> list[C.Top]:
        """De-interleaves inside 128-bit groups (the inverse of ``vpunpck{l,h}{wd,dq}``): 32-bit
        elements by ``vshufps`` (even then odd elements of both inputs); 16-bit elements by a
        byte shuffle per input that moves its even elements to the low 64 bits of each group,
        then ``vpunpck{l,h}qdq``."""
        isa = self._x()
        a, b = C.Name("a"), C.Name("b")
        p = isa._p
        fns: list[C.Top] = []
        cast_ps = lambda x: call(f"{p}_castsi{isa.width}_ps", x)  # noqa: E731
        ftype = f"__m{isa.width}"
        for half, imm in (("lo", 0x88), ("hi", 0xDD)):
            body = [
                C.Decl(ftype, "fa", cast_ps(a), const=True),
                C.Decl(ftype, "fb", cast_ps(b), const=True),
                C.Return(
                    call(
                        f"{p}_castps_si{isa.width}",
                        call(f"{p}_shuffle_ps", C.Name("fa"), C.Name("fb"), C.Int(imm)),
                    )
                ),
            ]
            which = "Even" if half == "lo" else "Odd"
            doc = f"{which} 32-bit elements of a then of b, per 128-bit group (vshufps)."
            fns.append(isa._fn(f"unzip32_{half}", ("a", "b"), body, (doc,)))
        # bytes of one 128-bit group: even 16-bit elements first, then the odd ones
        order = [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]
        doc = (
            "The even 16-bit elements of each 128-bit group, then the odd ones (vpshufb):",
            "vpunpck{l,h}qdq of two such vectors de-interleaves them.",
        )
        fns.append(self._byte_shuffle("evens_first16", order, doc))
        return fns

    def _byte_shuffle(self, name: str, order: list[int], doc: tuple[str, ...]) -> C.FuncDef:
        """A helper of one ``vpshufb`` that puts byte ``order[i]`` of each 128-bit group at
        byte i (the control bytes as two 64-bit halves, lo and hi, repeated per group)."""
        isa = self._x()
        words = [sum(order[8 * k + j] << (8 * j) for j in range(8)) for k in (0, 1)]
        reps = isa.width // 128
        set64 = "_mm256_setr_epi64x" if isa.width == 256 else "_mm512_setr_epi64"
        mask = call(set64, *(C.Name(h) for h in ("lo", "hi") * reps))
        body: list[C.Stmt] = [
            C.Decl("int64_t", h, C.Name(f"0x{w:016x}"), const=True)
            for h, w in zip(("lo", "hi"), words, strict=True)
        ]
        body.append(C.Return(call(f"{isa._p}_shuffle_epi8", C.Name("a"), mask)))
        return isa._fn(name, ("a",), body, doc)

    def zip(self, a: C.Expr, b: C.Expr, *, w: int, g: int, inverse: int) -> tuple[C.Expr, C.Expr]:
        """Interleave (``vpunpck{l,h}``) or de-interleave elements of 2^w lanes inside the
        128-bit groups (see :meth:`_unzip_helpers`)."""
        isa = self._x()
        elem = isa.lane.bits << w
        if (1 << g) * isa.lane.bits != 128 or elem not in (16, 32, 64):
            raise ValueError(f"no x86 zip of {elem}-bit elements in groups of {1 << g} lanes")
        if not inverse or elem == 64:  # 64-bit elements: the interleave is its own inverse
            return (
                isa._i("unpacklo", a, b, e=f"epi{elem}"),
                isa._i("unpackhi", a, b, e=f"epi{elem}"),
            )
        if elem == 32:
            return isa._helper_pair("unzip32", a, b)
        # the byte shuffles are written out here, not in two helpers, so that the compiler
        # shares them between the two outputs
        ea, eb = (call(isa.helper("evens_first16"), x) for x in (a, b))
        return (
            isa._i("unpacklo", ea, eb, e="epi64"),
            isa._i("unpackhi", ea, eb, e="epi64"),
        )
