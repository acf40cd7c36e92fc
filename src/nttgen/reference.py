"""Exact reference arithmetic in Z_q[x]/(x^n + 1), independent of every generated kernel."""

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
