"""Transposes between rows and pieces in lanes: one move per register bit.

The DFT stages write a piece per row (its coefficients in consecutive lanes); the base
products want L pieces' coefficient i in one vector. An L x L transpose turns one into the
other (:func:`transpose`, :func:`load_rows`), by the ISA's in-group zips where it has them and
the ``shuffle`` op otherwise; with 2-lane elements it makes the pair layout of the Good–Rader
"pairs" base (:func:`~.ntru_base.program_base_pairs`). Used by the base stages of every NTRU
Prime pipeline (:mod:`.ntru_base`, :mod:`.ntru_shift`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..dsl import semantics
from ..dsl.builder import Builder
from ..dsl.ir import Affine, Buffer, Value
from .lazy import Reducer


def _transpose_moves(regs: int, zip_group: int | None, elem_bits: int = 0) -> list[tuple[str, int]]:
    """The moves of a transpose of ``regs`` registers of ``regs`` elements (of 2^elem_bits
    lanes each), one per register bit: ("zip", b) interleaves elements inside groups of
    2^zip_group lanes (x86 ``vpunpck{l,h}{wd,dq}``: one instruction per output), for as many
    register bits as a group has element bits; ("shuffle", b) swaps register bit b with
    element bit b (the ``shuffle`` op) for the rest."""
    bits = regs.bit_length() - 1
    zips = max(0, min((zip_group or 0) - elem_bits, bits))
    return [("zip", b) for b in range(zips)] + [("shuffle", b) for b in range(zips, bits)]


def _run_moves(
    moves: list[tuple[str, int]],
    regs: list,
    zip_group: int | None,
    shuffle: Callable,
    zip_: Callable,
    elem_bits: int = 0,
) -> list:
    """Apply ``moves`` to the registers ``regs`` (in place, and returned) with the given
    two-register primitives, on elements of 2^elem_bits lanes."""
    for kind, bit in moves:
        d = 1 << bit
        for r in range(len(regs)):
            if r & d:
                continue
            if kind == "zip":
                regs[r], regs[r + d] = zip_(regs[r], regs[r + d], elem_bits, zip_group, 0)
            else:
                regs[r], regs[r + d] = shuffle(regs[r], regs[r + d], d << elem_bits)
    return regs


def transpose(
    S: Builder, rows: list[Value], zip_group: int | None = None, elem_bits: int = 0
) -> list[Value]:
    """The transpose of R vectors of R elements of E = 2^elem_bits lanes (R * E = L):
    out[c] element e = rows[e] element c. One move per register bit
    (:func:`_transpose_moves`): zips where the ISA has them (``zip_group``), else the
    ``shuffle`` op. A network of zips is a transpose up to a relabelling of rows and columns,
    so the rows go into registers in the order that puts row e at element e, and the
    registers come out in column order; both orders are found by running the network on lane
    tags."""
    R, L, E = len(rows), S.lanes, 1 << elem_bits
    if R * E != L:
        raise ValueError(f"a transpose of {R} rows of {E}-lane elements needs {R * E} lanes")
    moves = _transpose_moves(R, zip_group, elem_bits)
    tags = [np.arange(r * L, (r + 1) * L, dtype=np.int64) for r in range(R)]
    out_tags = _run_moves(
        moves,
        tags,
        zip_group,
        lambda a, b, d: semantics.shuffle(d, a, b),
        lambda a, b, w, g, inv: semantics.zip_lanes(w, g, inv, a, b),
        elem_bits,
    )
    # what register i holds ends at element elem_of[i]; register j ends holding column col[j]
    elem_of = {int(t[lane]) // L: lane // E for t in out_tags for lane in range(L)}
    col = [(int(t[0]) % L) // E for t in out_tags]
    for t, c in zip(out_tags, col, strict=True):
        for lane, x in enumerate(int(v) for v in t):
            if (x % L) // E != c or x % E != lane % E or elem_of[x // L] != lane // E:
                raise AssertionError("not a relabelled transpose")  # pragma: no cover
    regs = _run_moves(
        moves,
        [rows[elem_of[i]] for i in range(R)],
        zip_group,
        lambda a, b, d: S.shuffle(a, b, d, hints=("tr", "tr")),
        lambda a, b, w, g, inv: S.zip(a, b, w, g, inv, hints=("tr", "tr")),
        elem_bits,
    )
    out: list[Value] = list(regs)
    for j, c in enumerate(col):
        out[c] = regs[j]
    return out


def load_rows(
    S: Builder,
    src: Buffer,
    k0: Affine,
    stride: int,
    length: int,
    zip_group: int | None,
    red: Reducer | None = None,
) -> list[Value]:
    """Coefficients 0 .. length-1 of pieces k0 .. k0+L-1 (piece k at ``src[k*stride]``), one
    vector per coefficient (pieces in lanes): L x L tiles, transposed. With ``red``, each
    vector is reduced to within q where it could lie outside."""
    L = S.lanes
    out: list[Value] = []
    for h in range(0, length, L):
        tile = [S.load(src, k0 * stride + rr * stride + h, hint=src.name) for rr in range(L)]
        out += transpose(S, tile, zip_group) if L > 1 else tile
    if red is not None:
        q = S.arith.q
        out = [red.within(v, q) for v in out]
    return out
