"""Exact reference arithmetic in Z_q[x]/(x^n + 1) and Z_q[x]/(x^p - x - 1), independent of every
generated kernel and of every ring map."""

from __future__ import annotations

import numpy as np


def schoolbook(a: np.ndarray, b: np.ndarray, q: int) -> np.ndarray:
    """a*b mod (q, x^n + 1) by the schoolbook method over exact integers, for 1-D arrays of
    equal length n. Returns int64 coefficients in [0, q)."""
    a = np.asarray(a)
    b = np.asarray(b)
    n = a.shape[-1]
    if a.shape != (n,) or b.shape != (n,):
        raise ValueError("schoolbook takes two 1-D arrays of the same length")
    ar = np.mod(a.astype(object), q)
    br = np.mod(b.astype(object), q)
    if q < 1 << 20:
        # every partial sum stays below n * q^2 < 2^62: int64 is exact
        full = np.convolve(ar.astype(np.int64), br.astype(np.int64))
    else:
        full = np.convolve(ar, br)
    lo = full[:n].copy()
    lo[: n - 1] -= full[n:]
    return np.array([int(x) % q for x in lo], dtype=np.int64)


def schoolbook_batch(a: np.ndarray, b: np.ndarray, q: int) -> np.ndarray:
    """:func:`schoolbook` row by row for (batch, n) arrays."""
    return np.stack([schoolbook(x, y, q) for x, y in zip(a, b, strict=True)])


def trinomial_product(a: np.ndarray, b: np.ndarray, q: int) -> np.ndarray:
    """a*b mod (q, x^p - x - 1) over exact integers, for 1-D arrays of equal length p (any
    integer values). Returns int64 coefficients centred in [-(q-1)/2, (q-1)/2] (q odd)."""
    a = np.asarray(a)
    b = np.asarray(b)
    p = a.shape[-1]
    if a.shape != (p,) or b.shape != (p,) or p < 2:
        raise ValueError("trinomial_product takes two 1-D arrays of the same length p >= 2")
    ar = np.mod(a.astype(object), q).astype(np.int64)
    br = np.mod(b.astype(object), q).astype(np.int64)
    # every partial sum stays below p * q^2, exact in int64 for q < 2^20 and p < 2^22
    dtype = np.int64 if q < 1 << 20 and p < 1 << 22 else object
    full = np.convolve(ar.astype(dtype), br.astype(dtype))
    # x^i = x^(i-p) * (x + 1) for p <= i <= 2p - 2 lands below x^p: one fold of the top half
    low = full[:p].copy()
    low[: p - 1] += full[p:]
    low[1:p] += full[p:]
    r = np.array([int(x) % q for x in low], dtype=np.int64)
    return np.where(r > q // 2, r - q, r)
