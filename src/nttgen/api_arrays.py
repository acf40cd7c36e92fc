"""Checked integer arrays for the Python API: what a kernel method or :meth:`Kernel.raw
<nttgen.api.Kernel.raw>` accepts as an integer, an integer array and a range of values, each
refusal an :class:`~nttgen.errors.InputError` naming the argument and the rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InputError


def is_int(x: object) -> bool:
    """A Python or numpy integer, not a bool (True is an int to Python, never a size to us)."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def integer_array(what: str, x: Any) -> np.ndarray:
    """``x`` as an ndarray of a (signed or unsigned) integer dtype, or :class:`InputError`
    naming ``what``: None, strings, bools, floats (so NaN), complex and object arrays (Python
    integers beyond 64 bits) are refused, never converted."""
    if x is None:
        raise InputError(f"{what}: expected an integer array, got None")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError, OverflowError):  # ragged nesting, unconvertible objects
        raise InputError(
            f"{what}: expected an integer array, got a {type(x).__name__} numpy cannot read as one"
        ) from None
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        raise InputError(f"{what}: expected an integer array, got dtype {arr.dtype}")
    return arr


def check_values(what: str, name: str, arr: np.ndarray, lo: int, hi: int, rule: str) -> None:
    """:class:`InputError` "``what``: ``rule`` must lie in [lo, hi]" naming the range found and
    the index of an extreme value outside it (``name[i, j]``)."""
    if arr.size == 0:
        return
    # min/max as Python ints: exact for uint64 values above 2^63 too
    mn, mx = int(arr.min()), int(arr.max())
    if lo <= mn and mx <= hi:
        return
    low = mn < lo
    index = np.unravel_index(int(arr.argmin() if low else arr.argmax()), arr.shape)
    raise InputError(
        f"{what}: {rule} must lie in [{lo}, {hi}], got values in [{mn}, {mx}] "
        f"({name}[{', '.join(map(str, index))}] = {mn if low else mx})"
    )
