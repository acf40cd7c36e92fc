"""NTRU Prime rings Z_q[x]/(x^p - x - 1): validation, presets, custom rings and their multipliers.

These rings have no NTT of their own (x^p - x - 1 is irreducible and q - 1 has no large power of
two), so nttgen multiplies in them through the *pipelines* of :mod:`nttgen.plan.maps`: a product
computed exactly in a larger ring Z_q[x]/(g), deg g >= 2p - 1, split by checked ring maps, then
reduced modulo x^p - x - 1. A ring spec here is plain validated data plus the pipelines that exist
for it.

Rules (each broken rule raises :class:`~nttgen.errors.RingError` naming it):

1. f has the shape x^p - x - 1 (NTRU Prime's trinomial) with p prime, 3 <= p <= 1277
   (:data:`~nttgen.plan.maps.choose.MAX_P`, sntrup1277's p);
2. q is an odd prime below 2^15 (the multipliers' lanes are 16 bits wide, signed Montgomery
   arithmetic needs q < 2^15);
3. at least one pipeline exists for (p, q) (:func:`~nttgen.plan.maps.choose_pipelines` names
   the rule each pipeline breaks otherwise, including the bound on the degree it computes in,
   :func:`~nttgen.plan.maps.choose.degree_bound`; Schönhage–Nussbaumer exists for every
   admissible (p, q)).

The sizes (p, q) are checked before primality and every suggestion is a bounded search, so any
(p, q) is answered at once.

The *default pipeline*, the one used wherever none is named (``polymul``, ``nttgen.load``,
``nttgen generate``, the ``*`` of ``nttgen plans``), is the first existing one of
:data:`DEFAULT_PREFERENCE`.

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
from .arith import is_prime
from .errors import InputError, ParameterError, RingError, UnknownNameError
from .plan.maps import Pipeline, PipelinePlan, build_pipeline, choose_pipelines
from .plan.maps.choose import GRB, GSB, SN, check_p_size
from .reference import trinomial_product
from .rings import c_identifier, name_number

MAX_Q = 1 << 15

DEFAULT_PREFERENCE: tuple[str, ...] = (GRB, GSB, SN)
"""The order in which a ring's default pipeline is chosen: the first that exists for (p, q).

It is the order of the generated C's measured speed, not of the plans' op counts: for sntrup761
(docs/measurements.md) AVX2 polymul takes about 5,200 ticks through Good–Rader–Bruun (the
tuned program), 12,500 through Good–Schönhage–Bruun and 20,700 through Schönhage–Nussbaumer,
and the portable C keeps that order. The op counts do not predict it (for p = 857, q = 5167
Schönhage–Nussbaumer has the fewest, yet its program is the slowest), and a fixed order needs
no pipeline built to name the default."""


@dataclass(frozen=True)
class NtruPrimeRing:
    """A validated ring Z_q[x]/(x^p - x - 1) with the multiplication pipelines that exist for it.

    ``pipelines`` lists the plans of :func:`~nttgen.plan.maps.choose_pipelines` in their fixed
    order (Good–Schönhage–Bruun, Good–Rader–Bruun, Schönhage–Nussbaumer), only those whose
    rules (p, q) satisfies; ``default_pipeline`` is the first of them in
    :data:`DEFAULT_PREFERENCE`."""

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
        """The pipeline used wherever none is named (the Python multipliers, ``nttgen.load``,
        ``nttgen generate``; ``*`` in ``nttgen plans``): the first of
        :data:`DEFAULT_PREFERENCE` that exists for (p, q). Good–Rader–Bruun wherever it
        exists (sntrup761, p = 857 q = 5167), else Good–Schönhage–Bruun, else
        Schönhage–Nussbaumer (p = 653, q = 4621). Builds no pipeline."""
        names = self.pipeline_names
        return next(name for name in DEFAULT_PREFERENCE if name in names)

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


def _nearest_odd_primes(q: int) -> str:
    """The odd primes below 2^15 nearest to q (one each side, q itself excluded), as text.
    A bounded scan: prime gaps below 2^15 are under 100."""
    below = next((x for x in range(min(q - 1, MAX_Q - 1), max(q - 200, 2), -1) if is_prime(x)), 0)
    above = next((x for x in range(max(q + 1, 3), min(max(q, 3) + 200, MAX_Q)) if is_prime(x)), 0)
    return ", ".join(str(x) for x in sorted({below, above} - {0}, key=lambda x: (abs(x - q), x)))


def make_ntru_ring(
    p: int, q: int, *, name: str | None = None, description: str = "", preset: bool = False
) -> NtruPrimeRing:
    """Validate (p, q) and return the ring Z_q[x]/(x^p - x - 1) (see the module's rules):
    3 <= p <= 1277 prime, q an odd prime below 2^15, and some pipeline existing for (p, q).

    Raises :class:`RingError` (a :class:`~nttgen.plan.maps.MapError` for the pipeline rules)
    naming the first rule broken: sizes first, then primality, then the pipelines' rules, so
    any (p, q) is answered at once."""
    if not isinstance(p, int) or not isinstance(q, int):
        raise RingError(f"p and q must be integers, got p={p!r}, q={q!r}")
    check_p_size(p)
    if q >= MAX_Q:
        raise RingError(
            f"q={q} is too large for an NTRU Prime multiplier: its lanes are 16 bits and signed "
            f"Montgomery arithmetic needs q < 2^15 = {MAX_Q}"
        )
    if q < 3 or not is_prime(q):
        raise ParameterError(
            f"q={q} is not an odd prime: Z_q must be a field with 2 invertible; nearest: "
            f"{_nearest_odd_primes(q)}"
        )
    choose_pipelines(p, q)  # raises naming p's rule, or every pipeline's
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
        shown = text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"
        raise RingError(
            f"f={shown!r} is not of the shape x^p - x - 1: nttgen's NTRU Prime multipliers "
            f"reduce by x^p = x + 1 (write it as e.g. 'x^761 - x - 1')"
        )
    return name_number(m.group(1), "p")


def parse_ntru_ring(name: str) -> NtruPrimeRing | None:
    """The NTRU Prime ring ``name`` names: a preset (a scheme alias such as ``ntrulpr761`` names
    its target's ring, ``sntrup761``) or a custom name ``p<P>_q<Q>``; None when the name is
    neither. Raises :class:`RingError` when a custom name breaks a rule."""
    name = resolve_alias(name)
    if name in NTRU_PRESETS:
        return NTRU_PRESETS[name]
    m = _CUSTOM.match(name)
    if m:
        return make_ntru_ring(name_number(m.group(1), "p"), name_number(m.group(2), "q"))
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
    """a * b in Z_q[x]/(x^p - x - 1) through one pipeline (default: the ring's
    :attr:`~NtruPrimeRing.default_pipeline`).

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
