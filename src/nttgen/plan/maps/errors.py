"""Typed errors of the ring-map layer.

Every error is a :class:`ValueError` (through :class:`nttgen.errors.RingError`) whose message
names the rule that was broken, e.g. ``q=4597 has no cube root of unity (3 does not divide
q-1=4596)``.
"""

from __future__ import annotations

from ...errors import RingError


class MapError(RingError):
    """Base class: a ring map, pipeline or parameter set breaks a rule (the message names it)."""


class ParameterError(MapError):
    """p or q is not acceptable at all (p not prime, q not an odd prime, ...)."""


class NoRootOfUnityError(MapError):
    """A root of unity of the required order does not exist in Z_q (or in the ring used)."""


class NoSquareRootError(MapError):
    """A square root that a split needs (Cooley–Tukey or Bruun) does not exist in Z_q."""


class SizeError(MapError):
    """Sizes do not fit the map (not a power of two, not coprime, blocks too long, ...)."""


class FactorisationError(MapError):
    """A construction-time check failed: the target moduli do not multiply to the source, a map
    is not a ring homomorphism, or a round trip does not return its input (always a bug)."""


class InputShapeError(MapError):
    """An input polynomial or tuple of parts has the wrong length or count."""


class NoPipelineError(MapError):
    """No pipeline exists for (p, q); the message lists the rule each pipeline breaks."""
