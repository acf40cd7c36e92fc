"""Scheme names that multiply in another preset's ring.

Falcon-512 and NewHope-512 multiply in the same ring Z_12289[x]/(x^512 + 1), and NTRU LPRime 761
in the ring of Streamlined NTRU Prime 761: the same arithmetic, so the same code. nttgen
generates each arithmetic shape once, under the name of its preset (the *target*), and gives a
scheme that shares it a thin alias header: ``nttgen_falcon512_avx2.h`` includes
``nttgen_newhope512_avx2.h`` and defines every exported name under the scheme's prefix
(:mod:`nttgen.emit.alias`). Everywhere a ring name is read (``nttgen.load``, the command line),
an alias names its target's ring.

Ring names are read without regard to case (``MLKEM``, ``Kyber``, ``N256_Q7681``): every name
goes through :func:`canonical_name` first, and what nttgen writes always carries the
canonical lower-case name. :data:`NAME_ALIASES` are other spellings of a preset (``kyber``,
``ml-kem``, ``dilithium``): unlike a scheme alias, such a name gets no alias header, the
generated code is the preset's under the preset's name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SchemeAlias:
    """A scheme name (``name``) whose products are those of the preset ``target``."""

    name: str
    target: str
    description: str


SCHEME_ALIASES: dict[str, SchemeAlias] = {
    a.name: a
    for a in (
        SchemeAlias("falcon512", "newhope512", "Falcon-512: the ring of NewHope-512"),
        SchemeAlias("falcon1024", "newhope1024", "Falcon-1024: the ring of NewHope-1024"),
        SchemeAlias(
            "ntrulpr761", "sntrup761", "NTRU LPRime 761: the ring of sntrup761 (R_q x small)"
        ),
    )
}


NAME_ALIASES: dict[str, str] = {
    "kyber": "mlkem",
    "ml-kem": "mlkem",
    "ml_kem": "mlkem",
    "dilithium": "mldsa",
    "ml-dsa": "mldsa",
    "ml_dsa": "mldsa",
}
"""Other names of a preset (lower case), read as the preset itself: no alias header, no
files of their own.

Kyber (round 3) and ML-KEM (FIPS 203) multiply in the same ring Z_3329[x]/(x^256 + 1) with
the same NTT (root 17), and Dilithium and ML-DSA (FIPS 204) in Z_8380417[x]/(x^256 + 1)
(root 1753): the standards renamed the schemes and changed hashing and encodings, not the
ring arithmetic. A user who asks for ``kyber`` wants the ``mlkem`` code, and a C prefix
``nttgen_kyber_`` would only duplicate it under a second name, which is what
:data:`SCHEME_ALIASES` are for when a distinct scheme needs its own names. (``kyber-r1``,
the round-1 prime 7681, is a preset of its own.)"""


def canonical_name(name: str) -> str:
    """``name`` as nttgen reads it: surrounding blanks dropped, lower case, and a
    :data:`NAME_ALIASES` spelling replaced by its preset (``Kyber`` -> ``mlkem``,
    ``ML-DSA`` -> ``mldsa``). Any string goes in; a scheme alias or a custom name
    (``N256_Q7681`` -> ``n256_q7681``) comes out lower case but otherwise unchanged."""
    key = name.strip().lower()
    return NAME_ALIASES.get(key, key)


def scheme_alias(name: str | None) -> SchemeAlias | None:
    """The scheme alias ``name`` names in any case (``Falcon512``), or None (also for None,
    a preset or a custom name): the alias whose headers ``nttgen generate`` adds."""
    if name is None:
        return None
    return SCHEME_ALIASES.get(canonical_name(name))


def resolve_alias(name: str) -> str:
    """The preset a ring name stands for, in any case: the target of a scheme alias or of a
    name alias, or otherwise :func:`canonical_name` of ``name`` (a preset or custom name in
    lower case, or an unknown name)."""
    key = canonical_name(name)
    alias = SCHEME_ALIASES.get(key)
    return alias.target if alias else key


def accepted_names() -> list[str]:
    """Every alias a ring name may be, scheme aliases then name aliases (lower case); with
    the presets, these are the names :func:`nttgen.get_ring` suggests for a misspelt one."""
    return [*SCHEME_ALIASES, *NAME_ALIASES]


def describe_name_aliases() -> str:
    """One line for error messages: ``kyber, ml-kem, ml_kem name mlkem; dilithium, ...``."""
    by_target: dict[str, list[str]] = {}
    for alias, target in NAME_ALIASES.items():
        by_target.setdefault(target, []).append(alias)
    return "; ".join(f"{', '.join(names)} name {t}" for t, names in by_target.items())


def aliases_of(target: str) -> list[SchemeAlias]:
    """The scheme names that share the preset ``target``'s code, in declaration order."""
    return [a for a in SCHEME_ALIASES.values() if a.target == target]
