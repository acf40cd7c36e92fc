"""Scheme names that multiply in another preset's ring.

Falcon-512 and NewHope-512 multiply in the same ring Z_12289[x]/(x^512 + 1), and NTRU LPRime 761
in the ring of Streamlined NTRU Prime 761: the same arithmetic, so the same code. nttgen
generates each arithmetic shape once, under the name of its preset (the *target*), and gives a
scheme that shares it a thin alias header: ``nttgen_falcon512_avx2.h`` includes
``nttgen_newhope512_avx2.h`` and defines every exported name under the scheme's prefix
(:mod:`nttgen.emit.alias`). Everywhere a ring name is read (``nttgen.load``, the command line),
an alias names its target's ring.
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


def resolve_alias(name: str) -> str:
    """The preset a ring name stands for: the alias's target, or ``name`` itself."""
    alias = SCHEME_ALIASES.get(name)
    return alias.target if alias else name


def aliases_of(target: str) -> list[SchemeAlias]:
    """The scheme names that share the preset ``target``'s code, in declaration order."""
    return [a for a in SCHEME_ALIASES.values() if a.target == target]
