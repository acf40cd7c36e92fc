"""The last stage of every NTRU Prime pipeline: the fold modulo x^p - x - 1.

The inverse stage leaves the product c of degree < 2p times a known factor (beta^-1 from the
Montgomery products and the pipeline's normalisations, :attr:`FoldShape.fold_scale`);
:func:`program_fold` folds it with x^p = x + 1, undoes the factor by one product by a constant
K, and centres the result (:func:`centre`). Any pipeline's shape with the fields of
:class:`FoldShape` can use it (the Good–Rader one, :mod:`.ntru`, and the Schönhage ones,
:mod:`.ntru_shift`).
"""

from __future__ import annotations

from typing import Protocol

from ..dsl.builder import Builder
from ..dsl.ir import Affine, Value
from .lazy import Reducer


class FoldShape(Protocol):
    """What :func:`program_fold` needs of a pipeline's shape."""

    p: int
    q: int
    lanes: int

    @property
    def fold_scale(self) -> int:
        """The factor besides beta^-1 that the inverse stage leaves on the product (K undoes
        it)."""
        ...

    @property
    def product_length(self) -> int:
        """Coefficients of the product the inverse stage writes (>= 2p; the fold reads 2p)."""
        ...


def centre(S: Builder, x: Value) -> Value:
    """The representative of x (in [-q, q)) in [-(q-1)/2, (q-1)/2]: x + q where negative
    gives [0, q); minus (q+1)/2, + q where negative, minus (q-1)/2 maps [0, (q-1)/2] to
    itself and [(q+1)/2, q) to [-(q-1)/2, 0)."""
    q = S.arith.q
    s = S.cond_add_q(x, hint="r")
    s = S.sub(s, S.const((q + 1) // 2, hint="h1"), hint="r")
    s = S.cond_add_q(s, hint="r")
    return S.sub(s, S.const((q - 1) // 2, hint="h0"), hint="r")


def program_fold(
    S: Builder, shape: FoldShape, contract: tuple[int, int], as_loop: bool = False
) -> None:
    """fold(r, c): r = K * c mod (x^p - x - 1), centred, for c of degree < 2p (2p entries
    read), K = beta / ``shape.fold_scale`` mod q. ``as_loop``: the whole vectors after the
    first in a loop even where the builder unrolls loops by default (less code)."""
    p, q, L = shape.p, shape.q, shape.lanes
    r = S.output("r", p, doc="product, centred")
    c = S.input("c", shape.product_length, contract, doc="scaled product")
    red = Reducer(S)
    k_const = S.arith.beta * pow(shape.fold_scale, -1, q) % q
    kz, kzq = S.arith.twisted(k_const)
    kpair = (S.const(kz, hint="k"), S.const(kzq, hint="kq"))

    def total(at: Affine | int, masked: bool) -> Value:
        x, y = red.make_room(S.load(c, at, hint="c"), S.load(c, at + p, hint="c"), need_diff=False)
        s = S.add(x, y, hint="s")
        if not masked:
            z = S.load(c, at + (p - 1), hint="c")
            u, w = red.make_room(s, z, need_diff=False)
            return S.mulconst(S.add(u, w, hint="s"), *kpair, hint="k")
        out = S.mulconst(s, *kpair, hint="k")
        if L == 1:
            return out  # r_0 has no c_(p-1) term
        # lanes 1 .. L-1 take c_(j+p-1) times K, lane 0 times 0
        pairs = [S.arith.twisted(0)] + [S.arith.twisted(k_const)] * (L - 1)
        mz = S.table("mask", [z for z, _ in pairs], doc="K, but 0 in lane 0 (r_0 has no c_(p-1))")
        mzq = S.table("maskq", [zq for _, zq in pairs], doc="quotients of mask")
        third = S.mulconst(
            S.load(c, p - 1, hint="c"), S.load(mz, 0, hint="m"), S.load(mzq, 0, hint="mq")
        )
        u, w = red.make_room(out, third, need_diff=False)
        return S.add(u, w, hint="s")

    def finish(at: Affine | int, val: Value) -> None:
        val = red.fit_to(val, (-q, q - 1))
        S.store(r, at, centre(S, val))

    if L == 1:
        # r_0 in a loop of one iteration, so that strip-mined code (which vectorises loops,
        # not straight-line code) has a loop to run it in
        S.loop(1, lambda v: finish(Affine.of(v), total(Affine.of(v), True)), hint="j0")
    else:
        finish(0, total(0, True))
    count = (p - L) // L  # whole chunks after the first
    S.loop(count, lambda v: finish(Affine.of(v) * L + L, total(Affine.of(v) * L + L, False)),
           hint="j", unroll=False if as_loop else None)  # fmt: skip
    if p % L:
        finish(p - L, total(p - L, False))
