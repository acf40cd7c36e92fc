"""NTRU Prime rings Z_q[x]/(x^p - x - 1): validation, presets, custom rings and their multipliers.

These rings have no NTT of their own (x^p - x - 1 is irreducible and q - 1 has no large power of
two), so nttgen multiplies in them through the *pipelines* of :mod:`nttgen.plan.maps`: a product
computed exactly in a larger ring Z_q[x]/(g), deg g >= 2p - 1, split by checked ring maps, then
reduced modulo x^p - x - 1. A ring spec here is plain validated data plus the pipelines that exist
for it.

Rules (each broken rule raises :class:`~nttgen.errors.RingError` naming it):

1. f has the shape x^p - x - 1 (NTRU Prime's trinomial) with p prime;
2. q is an odd prime below 2^15 (the multipliers' lanes are 16 bits wide, signed Montgomery
   arithmetic needs q < 2^15);
3. at least one pipeline exists for (p, q) (:func:`~nttgen.plan.maps.choose_pipelines` names
   the rule each pipeline breaks otherwise; Schönhage–Nussbaumer exists for every odd prime q,
   so this only refuses p too small for any pipeline).

Results are *fully reduced and centred*: every output coefficient lies in [-(q-1)/2, (q-1)/2]
([-2295, 2295] for q = 4591), the representation the NTRU Prime specification encodes and that
its reference code (``Fq_freeze``) produces.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .aliases import SCHEME_ALIASES, resolve_alias
from .errors import InputError, RingError, UnknownNameError
from .plan.maps import Cost, Pipeline, PipelinePlan, build_pipeline, choose_pipelines
from .reference import trinomial_product
from .rings import c_identifier

MAX_Q = 1 << 15


@dataclass(frozen=True)
class NtruPrimeRing:
    """A validated ring Z_q[x]/(x^p - x - 1) with the multiplication pipelines that exist for it.

    ``pipelines`` lists the plans of :func:`~nttgen.plan.maps.choose_pipelines` in their fixed
    order (Good–Schönhage–Bruun, Good–Rader–Bruun, Schönhage–Nussbaumer), only those whose
    rules (p, q) satisfies; ``default_pipeline`` is the one with the fewest operations."""

    name: str
    p: int
    q: int
    description: str = ""
    preset: bool = False

    @property
    def modulus_poly(self) -> str:
        """The modulus polynomial f as text, e.g. ``x^761 - x - 1``."""
        return f"x^{self.p} - x - 1"

    @property
    def degree(self) -> int:
        """deg f = p: the number of coefficients of one ring element."""
        return self.p

    @property
    def degree_text(self) -> str:
        """``p = <p>``, as headers write the degree."""
        return f"p = {self.p}"

    @property
    def coefficient_range(self) -> tuple[int, int]:
        """[-(q-1)/2, (q-1)/2]: the centred representatives NTRU Prime stores."""
        return -self.half, self.half

    @property
    def output_range(self) -> tuple[int, int]:
        """[-(q-1)/2, (q-1)/2]: products come back centred."""
        return -self.half, self.half

    def reference_product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a*b mod (q, x^p - x - 1) over exact integers, centred (int64)."""
        return trinomial_product(a, b, self.q)

    @property
    def algorithm(self) -> str:
        """How the ring multiplies, in a few words (``nttgen list``): its pipelines."""
        return f"pipelines: {', '.join(self.pipeline_names)} (no NTT), 16-bit lanes"

    @property
    def half(self) -> int:
        """(q - 1) / 2: outputs lie in [-half, half]."""
        return (self.q - 1) // 2

    @property
    def c_name(self) -> str:
        """The ring's name as a C identifier fragment."""
        return c_identifier(self.name)

    @cached_property
    def pipelines(self) -> tuple[PipelinePlan, ...]:
        """The plans of the pipelines that exist for (p, q), in :data:`PIPELINE_NAMES` order."""
        return tuple(choose_pipelines(self.p, self.q))

    @property
    def pipeline_names(self) -> tuple[str, ...]:
        """The names of :attr:`pipelines`."""
        return tuple(plan.name for plan in self.pipelines)

    @cached_property
    def default_pipeline(self) -> str:
        """The existing pipeline with the fewest arithmetic operations (additions and
        multiplications; shifts by x^e are free moves) in one ``polymul``."""
        return min(self.pipeline_names, key=lambda n: _arithmetic(self.pipeline(n).cost()))

    def pipeline(self, name: str | None = None) -> Pipeline:
        """The multiplier of pipeline ``name`` (default :attr:`default_pipeline`), built and
        checked (cached). Raises :class:`UnknownNameError` for a name that is not a pipeline
        and :class:`RingError` naming the rule when that pipeline does not exist for (p, q)."""
        return build_pipeline(name or self.default_pipeline, self.p, self.q)

    def summary(self) -> dict[str, object]:
        """A JSON-friendly description of the ring."""
        return {
            "name": self.name,
            "p": self.p,
            "q": self.q,
            "f": self.modulus_poly,
            "output_range": [-self.half, self.half],
            "pipelines": list(self.pipeline_names),
            "default_pipeline": self.default_pipeline,
        }


def _arithmetic(counts: dict[str, int]) -> int:
    cost = Cost(counts)
    return cost["add"] + cost.multiplications


def make_ntru_ring(
    p: int, q: int, *, name: str | None = None, description: str = "", preset: bool = False
) -> NtruPrimeRing:
    """Validate (p, q) and return the ring Z_q[x]/(x^p - x - 1) (see the module's rules).

    Raises :class:`RingError` (a :class:`~nttgen.plan.maps.MapError` for the pipeline rules)
    naming the first rule broken."""
    if not isinstance(p, int) or not isinstance(q, int):
        raise RingError(f"p and q must be integers, got p={p!r}, q={q!r}")
    if q >= MAX_Q:
        raise RingError(
            f"q={q} is too large for an NTRU Prime multiplier: its lanes are 16 bits and signed "
            f"Montgomery arithmetic needs q < 2^15 = {MAX_Q}"
        )
    choose_pipelines(p, q)  # raises naming p's or q's rule, or every pipeline's
    return NtruPrimeRing(
        name=name or f"p{p}_q{q}", p=p, q=q, description=description, preset=preset
    )


NTRU_PRESETS: dict[str, NtruPrimeRing] = {
    r.name: r
    for r in (
        make_ntru_ring(
            761,
            4591,
            name="sntrup761",
            description="Streamlined NTRU Prime 761: R_q products, R_q x small in encapsulation",
            preset=True,
        ),
    )
}
"""One preset per arithmetic shape; NTRU LPRime 761, which multiplies in sntrup761's ring, is a
scheme alias (:data:`nttgen.aliases.SCHEME_ALIASES`)."""

_CUSTOM = re.compile(r"^p(\d+)_q(\d+)$")
_TRINOMIAL = re.compile(r"^x\s*\^\s*(\d+)\s*-\s*x\s*-\s*1$")


def parse_ntru_modulus(text: str) -> int:
    """p from the text of f = ``x^p - x - 1`` (spaces free, e.g. ``"x^653 - x - 1"``).

    Raises :class:`RingError` naming the accepted shape for any other polynomial."""
    m = _TRINOMIAL.match(text.strip())
    if not m:
        raise RingError(
            f"f={text!r} is not of the shape x^p - x - 1: nttgen's NTRU Prime multipliers "
            f"reduce by x^p = x + 1 (write it as e.g. 'x^761 - x - 1')"
        )
    return int(m.group(1))


def parse_ntru_ring(name: str) -> NtruPrimeRing | None:
    """The NTRU Prime ring ``name`` names: a preset (a scheme alias such as ``ntrulpr761`` names
    its target's ring, ``sntrup761``) or a custom name ``p<P>_q<Q>``; None when the name is
    neither. Raises :class:`RingError` when a custom name breaks a rule."""
    name = resolve_alias(name)
    if name in NTRU_PRESETS:
        return NTRU_PRESETS[name]
    m = _CUSTOM.match(name)
    if m:
        return make_ntru_ring(int(m.group(1)), int(m.group(2)))
    return None


NAME_SYNTAX = "p<P>_q<Q>"
"""How a custom NTRU Prime ring is named."""


def get_ntru_ring(name: str) -> NtruPrimeRing:
    """:func:`parse_ntru_ring`, or :class:`UnknownNameError` when the name is not an NTRU
    Prime ring's."""
    ring = parse_ntru_ring(name)
    if ring is None:
        raise UnknownNameError(
            f"unknown NTRU Prime ring {name!r}: presets are "
            f"{', '.join([*NTRU_PRESETS, *(a for a in SCHEME_ALIASES if is_ntru_name(a))])}; a "
            f"custom ring is written {NAME_SYNTAX} (e.g. p653_q4621) or given with --q Q --f "
            "'x^P - x - 1'"
        )
    return ring


def is_ntru_name(name: str) -> bool:
    """Whether ``name`` names an NTRU Prime ring (a preset or ``p<P>_q<Q>``)."""
    name = resolve_alias(name)
    return name in NTRU_PRESETS or bool(_CUSTOM.match(name))


# --------------------------------------------------------------------------- multiplication
def _coefficients(ring: NtruPrimeRing, what: str, x: Sequence[int]) -> list[int]:
    """x as a list of p Python ints, or :class:`InputError` naming the rule broken."""
    values = list(x)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"{what}: coefficients must be integers; {what}[{i}] = {v!r}")
    if len(values) != ring.p:
        raise InputError(f"{what}: expected p = {ring.p} coefficients, got {len(values)}")
    return [int(v) for v in values]


def polymul(
    ring: NtruPrimeRing, a: Sequence[int], b: Sequence[int], pipeline: str | None = None
) -> list[int]:
    """a * b in Z_q[x]/(x^p - x - 1) through one pipeline (default: the ring's cheapest).

    ``a`` and ``b`` hold p integer coefficients each, lowest degree first, any values (they are
    taken mod q). Returns p coefficients in [-(q-1)/2, (q-1)/2]. Raises :class:`InputError` for
    a wrong length or non-integer coefficients, :class:`RingError` for a pipeline that does not
    exist for the ring."""
    a = _coefficients(ring, "a", a)
    b = _coefficients(ring, "b", b)
    return ring.pipeline(pipeline).polymul(a, b)


def polymul_small(
    ring: NtruPrimeRing, a: Sequence[int], s: Sequence[int], pipeline: str | None = None
) -> list[int]:
    """a * s for a small operand s (every coefficient in {-1, 0, 1}), the R_q x small product
    of sntrup761's encapsulation and of ntrulpr761; same result and range as :func:`polymul`.

    Raises :class:`InputError` when s has a coefficient outside {-1, 0, 1}, naming the first."""
    a = _coefficients(ring, "a", a)
    s = _coefficients(ring, "s", s)
    for i, c in enumerate(s):
        if c not in (-1, 0, 1):
            raise InputError(f"s: polymul_small needs coefficients in {{-1, 0, 1}}; s[{i}] = {c}")
    return ring.pipeline(pipeline).polymul_small(a, s)
