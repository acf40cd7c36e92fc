"""The transforms of k polynomials (``ntt_vec``, ``intt_vec``): one call of a transform per
polynomial, or of its paired body per two polynomials (see ``BuildConfig.paired_transforms``)."""

from __future__ import annotations

from ..dsl.builder import Builder
from ..dsl.ir import Function, ScalarParam


def program_vector(S: Builder, single: Function, pair: Function | None, what: str) -> None:
    """The in-place transform ``single`` (one array ``a`` of n values) on each of k >= 1
    polynomials stored one after another in ``a`` (``what`` they hold on entry, for the
    documentation): with ``pair`` (the same transform on two arrays at once) two at a time,
    the odd one left over by ``single``. The function takes ``single``'s contract for every
    polynomial and leaves each as ``single`` would."""
    k = ScalarParam("k", 1, "number of polynomials, at least 1")
    contract = single.contract.inputs["a"]
    n = single.params[0].length  # type: ignore[union-attr]
    a = S.inout("a", n, contract, doc=f"k polynomials, {what}", per=k)
    S.fn.params.append(k)
    S.call_each(k, [*([(pair, 2)] if pair else []), (single, 1)], a)
