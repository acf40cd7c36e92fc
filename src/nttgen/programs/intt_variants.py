"""The ways the generator builds an inverse NTT (:class:`InttVariant`): every network, placement
of the final factor and reduction threshold it tries, the cheapest of which the analysis picks
(:meth:`nttgen.programs.kernels.KernelSet._best_intt`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..plan.ntt import Network

# Thresholds (multiples of q) the inverse NTT's reduction policy is tried with; None = lazy only.
INTT_THRESHOLDS: tuple[int | None, ...] = (None, 2, 4)


@dataclass(frozen=True)
class InttVariant:
    """One way to build the inverse NTT: the butterfly ``network`` (``gs`` or ``dit``, see
    :mod:`nttgen.plan.ntt`), where ``gs`` applies the final factor (``scale_first``: to the
    inputs; else folded into the last layer), and the reduction ``threshold`` of the lazy
    policy (None: lazy only; else operands wider than it are reduced before use, which can
    save reductions later when a loop joins the ranges of several coefficients). With
    ``centred_last`` (``gs`` with the factor in the last layer, where products by constants
    are Shoup products) that layer multiplies by Montgomery products, whose centred results
    can spare the outputs' final reduction: Shoup's lie in about [0, q + q/4)."""

    network: Network
    scale_first: bool
    threshold: int | None
    centred_last: bool = False

    @property
    def scale_where(self) -> str:
        """Where the final factor is applied, in words."""
        if self.network == "dit":
            return "output twist"
        if self.scale_first:
            return "first pass"
        return "last layer, by Montgomery products" if self.centred_last else "last layer"

    @property
    def policy(self) -> str:
        """The reduction policy, in words."""
        return "lazy" if self.threshold is None else f"lazy, threshold {self.threshold}"


def intt_variants(
    q: int, networks: tuple[Network, ...] = ("gs", "dit"), shoup: bool = False
) -> list[InttVariant]:
    """Every inverse-NTT variant the generator tries for modulus q with these networks, and
    where products by constants are Shoup products (``shoup``) also with a centred last
    layer."""
    thresholds = [None if m is None else m * q for m in INTT_THRESHOLDS]
    out: list[InttVariant] = []
    if "gs" in networks:
        out += [InttVariant("gs", sf, t) for sf in (True, False) for t in thresholds]
        if shoup:
            out += [InttVariant("gs", False, t, centred_last=True) for t in thresholds]
    if "dit" in networks:
        out += [InttVariant("dit", False, t) for t in thresholds]
    return out
