"""The interval transfer functions of the vocabulary ops, under their older name.

They live in :mod:`nttgen.dsl.transfer`, beside the exact semantics and below the builder,
whose live interval analysis (:mod:`nttgen.dsl.bounds`) applies them; this module re-exports
them for the callers that name ``nttgen.interp.transfer``.
"""

from __future__ import annotations

from ..dsl.transfer import (
    Range,
    add,
    barrett,
    barrett_analytic,
    barrett_coarse,
    cond_add_q,
    madd,
    montgomery_of_product,
    montmul,
    montmul_twist,
    montmul_var,
    mredw,
    mulhi,
    mullo,
    mulw,
    product_range,
    reduction_exact,
    shoupmul,
    sra,
    sub,
)

__all__ = [
    "Range",
    "add",
    "barrett",
    "barrett_analytic",
    "barrett_coarse",
    "cond_add_q",
    "madd",
    "montgomery_of_product",
    "montmul",
    "montmul_twist",
    "montmul_var",
    "mredw",
    "mulhi",
    "mullo",
    "mulw",
    "product_range",
    "reduction_exact",
    "shoupmul",
    "sra",
    "sub",
]
