"""The ring families nttgen generates, and the lookups every layer above them uses.

Each family implements :class:`~nttgen.ring_family.RingFamily`: :data:`NTT` (x^n + 1, one
negacyclic NTT program per ISA, :mod:`nttgen.generate`) and :data:`NTRU_PRIME` (x^p - x - 1,
the ring-map pipelines of :mod:`nttgen.emit.ntru_files`). :func:`get_ring` reads a name of any
family, :func:`family_of` finds a ring's family by its type; nothing above this module asks
which family a ring belongs to.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from .aliases import (
    SCHEME_ALIASES,
    accepted_names,
    canonical_name,
    describe_name_aliases,
    resolve_alias,
)
from .build_cache import stop_storing
from .emit.files import CFileWriter, GeneratedFiles
from .emit.isa import isa_class
from .emit.names import Names
from .emit.ntru_files import (
    NTRU_ISAS,
    NTRU_PIPELINES,
    clear_ntru_caches,
    generate_ntru,
    ntru_writer,
)
from .errors import InputError, UnknownNameError
from .generate import file_writer, generate, kernel_set
from .ntru_rings import NAME_SYNTAX as NTRU_NAME_SYNTAX
from .ntru_rings import (
    NTRU_PRESETS,
    NtruPrimeRing,
    make_ntru_ring,
    parse_ntru_modulus,
    parse_ntru_ring,
)
from .ring_family import RingFamily, RingSpec
from .rings import NAME_SYNTAX as NTT_NAME_SYNTAX
from .rings import PRESETS, Ring, custom_ring, parse_ring


class NttFamily:
    """Z_q[x]/(x^n + 1): n a power of two, q ≡ 1 (mod n); one NTT program per ISA."""

    title = "x^n + 1 rings (negacyclic NTT; any n, q with --n/--q)"
    presets: Mapping[str, RingSpec] = PRESETS
    ops = (
        "ntt",
        "intt",
        "basemul",
        "basemul_acc",
        "basemul_acc_cached",
        "polymul",
        "ntt_vec",
        "intt_vec",
    )

    def parse(self, name: str) -> Ring | None:
        """:func:`nttgen.rings.parse_ring`."""
        return parse_ring(name)

    def from_options(
        self, q: int, n: int | None, f: str | None, lane_bits: int | None
    ) -> Ring | None:
        """x^n + 1 over Z_q from ``--n`` and ``--q`` (``--lane-bits`` forces the lanes)."""
        if n is None:
            return None
        if f is not None:
            raise InputError("--n names an x^n + 1 ring; an NTRU Prime ring takes --q and --f")
        return custom_ring(n, q, lane_bits)

    def name_syntax(self) -> str:
        """``n<N>_q<Q>``."""
        return NTT_NAME_SYNTAX

    def unsupported(self, ring: RingSpec, isa: str) -> str | None:
        """The ISA's own rule on n and the lane width (:meth:`Isa.unsupported`)."""
        assert isinstance(ring, Ring)  # the family's own type: family_of chose this family
        return isa_class(isa).unsupported(ring.n, ring.lane)

    def variants(self, ring: RingSpec) -> Sequence[str]:
        """None: one program per ISA (its tuning is a declared schedule, not a variant)."""
        del ring
        return ()

    def check_variant(self, ring: RingSpec, variant: str | None) -> None:
        """Only the default: a pipeline names one of NTRU Prime's programs."""
        if variant is not None:
            raise InputError(
                f"pipeline {variant!r}: pipelines are for NTRU Prime rings; {ring.name} has one "
                "program, its NTT"
            )

    def writer(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> CFileWriter:
        """:func:`nttgen.generate.file_writer`."""
        self.check_variant(ring, variant)
        assert isinstance(ring, Ring)
        return file_writer(ring, isa, names)

    def generate(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> GeneratedFiles:
        """:func:`nttgen.generate.generate` (cached)."""
        self.check_variant(ring, variant)
        assert isinstance(ring, Ring)
        return generate(ring, isa, names)


class NtruPrimeFamily:
    """Z_q[x]/(x^p - x - 1): no NTT; products through a ring-map pipeline
    (:data:`~nttgen.emit.ntru_files.NTRU_PIPELINES`); where none is named, the ring's
    :attr:`~nttgen.ntru_rings.NtruPrimeRing.default_pipeline`, the one ``nttgen plans``
    marks with ``*`` (Good–Rader–Bruun wherever it exists)."""

    title = (
        "NTRU Prime rings Z_q[x]/(x^p - x - 1) (no NTT: ring-map pipelines; any p, q with --q/--f)"
    )
    presets: Mapping[str, RingSpec] = NTRU_PRESETS
    ops = ("polymul", "polymul_small")

    def parse(self, name: str) -> NtruPrimeRing | None:
        """:func:`nttgen.ntru_rings.parse_ntru_ring`."""
        return parse_ntru_ring(name)

    def from_options(
        self, q: int, n: int | None, f: str | None, lane_bits: int | None
    ) -> NtruPrimeRing | None:
        """Z_q[x]/(f) from ``--q`` and ``--f 'x^p - x - 1'``."""
        if f is None:
            return None
        if n is not None:
            raise InputError("--n names an x^n + 1 ring; an NTRU Prime ring takes --q and --f")
        if lane_bits is not None:
            raise InputError("--lane-bits is for x^n + 1 rings: NTRU Prime lanes are 16 bits")
        return make_ntru_ring(parse_ntru_modulus(f), q)

    def name_syntax(self) -> str:
        """``p<P>_q<Q>``."""
        return NTRU_NAME_SYNTAX

    def unsupported(self, ring: RingSpec, isa: str) -> str | None:
        """Why ``isa`` has no NTRU Prime code (the ISAs of :data:`NTRU_ISAS` have it for every
        ring of the family)."""
        del ring
        if isa in NTRU_ISAS:
            return None
        return f"NTRU Prime rings are generated for {', '.join(NTRU_ISAS)}, not yet for {isa}"

    def variants(self, ring: RingSpec) -> Sequence[str]:
        """The pipelines with generated C that exist for (p, q), the ring's default first."""
        assert isinstance(ring, NtruPrimeRing)
        default = ring.default_pipeline
        ordered = [default, *(p for p in NTRU_PIPELINES if p != default)]
        return tuple(p for p in ordered if p in ring.pipeline_names)

    def check_variant(self, ring: RingSpec, variant: str | None) -> None:
        """A pipeline of :data:`NTRU_PIPELINES`, or None for the ring's default pipeline
        (whether a named one exists for (p, q) is the pipeline's own rule, raised when it is
        built)."""
        del ring
        if variant is not None and variant not in NTRU_PIPELINES:
            raise UnknownNameError(
                f"unknown pipeline {variant!r}: choose from {', '.join(NTRU_PIPELINES)}"
            )

    def writer(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> CFileWriter:
        """:func:`~nttgen.emit.ntru_files.ntru_writer` (cached) through ``variant``, None:
        the ring's default pipeline."""
        self.check_variant(ring, variant)
        assert isinstance(ring, NtruPrimeRing)
        return ntru_writer(ring, isa, variant or ring.default_pipeline, names)

    def generate(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> GeneratedFiles:
        """:func:`~nttgen.emit.ntru_files.generate_ntru` (cached) through ``variant``, None:
        the ring's default pipeline."""
        self.check_variant(ring, variant)
        assert isinstance(ring, NtruPrimeRing)
        return generate_ntru(ring, isa, variant or ring.default_pipeline, names=names)


NTT = NttFamily()
NTRU_PRIME = NtruPrimeFamily()

FAMILIES: tuple[RingFamily, ...] = (NTT, NTRU_PRIME)
"""Every ring family, in the order ``nttgen list`` shows them."""

_BY_TYPE: dict[type, RingFamily] = {Ring: NTT, NtruPrimeRing: NTRU_PRIME}


def family_of(ring: RingSpec) -> RingFamily:
    """The family a ring belongs to (looked up by the ring's type)."""
    return _BY_TYPE[type(ring)]


def all_presets() -> dict[str, RingSpec]:
    """Every preset of every family, by name, in :data:`FAMILIES` order."""
    return {name: r for fam in FAMILIES for name, r in fam.presets.items()}


def get_ring(name: str) -> RingSpec:
    """The ring ``name`` names in whichever family reads it: a preset, a scheme alias (its
    target's ring), a name alias (``kyber``, ``ml-dsa``: :data:`~nttgen.aliases.NAME_ALIASES`)
    or a custom name (``n<N>_q<Q>``, ``p<P>_q<Q>``), in any case (``MLKEM``, ``N256_Q7681``).
    Returns the preset's own ring object, or a custom ring named in lower case.

    Raises :class:`UnknownNameError` when no family reads it, with the closest accepted names
    (``did you mean mlkem?``), the presets, the aliases and the custom-name syntaxes; and
    :class:`~nttgen.errors.RingError` naming the rule a custom ring breaks."""
    key = canonical_name(name)
    for fam in FAMILIES:
        ring = fam.parse(key)
        if ring is not None:
            return ring
    names = [*all_presets(), *SCHEME_ALIASES]
    syntaxes = " or ".join(fam.name_syntax() for fam in FAMILIES)
    suggestions = close_names(key)
    hint = f" (did you mean {_either(suggestions)}?)" if suggestions else ""
    raise UnknownNameError(
        f"unknown ring {name!r}{hint}: presets are {', '.join(names)}; "
        f"{describe_name_aliases()} (names are read in any case); a custom ring is written "
        f"{syntaxes} (e.g. n256_q7681, p653_q4621)"
    )


def close_names(name: str, limit: int = 3) -> list[str]:
    """Up to ``limit`` (>= 1) accepted ring names (presets, scheme aliases, name aliases) close
    to ``name`` (:func:`difflib.get_close_matches`, similarity >= 0.6 after
    :func:`~nttgen.aliases.canonical_name`), best first, one per ring: a name whose ring an
    earlier suggestion already names is left out. Empty when nothing is close."""
    candidates = [*all_presets(), *accepted_names()]
    matches = difflib.get_close_matches(canonical_name(name), candidates, n=len(candidates))
    out: list[str] = []
    seen: set[str] = set()
    for match in matches:
        target = resolve_alias(match)
        if target not in seen:
            seen.add(target)
            out.append(match)
    return out[:limit]


def _either(names: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def usable_isas(ring: RingSpec, isas: Sequence[str]) -> list[str]:
    """The ISAs among ``isas`` that have code for ``ring``, in their order."""
    fam = family_of(ring)
    return [i for i in isas if fam.unsupported(ring, i) is None]


def clear_caches() -> None:
    """Forget every cached kernel set and generated file set of every family, and stop reading
    or writing stored ones (:func:`nttgen.build_cache.stored`) in this process: for callers
    that change the tuning table or an ISA's choices in place and want the next generation to
    see it."""
    stop_storing()
    kernel_set.cache_clear()
    generate.cache_clear()
    clear_ntru_caches()


def ring_from_options(
    q: int | None, n: int | None = None, f: str | None = None, lane_bits: int | None = None
) -> RingSpec:
    """The custom ring of the command line's options: ``--n N --q Q`` (x^n + 1) or
    ``--q Q --f 'x^p - x - 1'`` (NTRU Prime). Raises :class:`InputError` naming what is
    missing or contradictory, and the family's own rule errors."""
    if q is None:
        raise InputError(
            "a custom ring needs both --n and --q (x^n + 1) or both --q and --f (x^p - x - 1)"
        )
    for fam in FAMILIES:
        ring = fam.from_options(q, n, f, lane_bits)
        if ring is not None:
            return ring
    raise InputError(
        "a custom ring needs both --n and --q (x^n + 1) or both --q and --f (x^p - x - 1)"
    )
