"""The namespace of a ring's generated files: the root of every external symbol and file name,
the root of every macro, and how the command line selects them.

By default a ring's files are ``nttgen_<ring>_<isa>.c`` with symbols ``nttgen_<ring>_<isa>_ntt``
and macros ``NTTGEN_<RING>_<ISA>_N`` and ``NTTGEN_DEBUG``. ``nttgen generate --prefix P`` makes
them ``P_<isa>.c``, ``P_<isa>_ntt``, ``P_<ISA>_N`` and ``P_DEBUG`` (the macro root is ``P`` in
upper case), so that a library links nttgen's code under its own names, or two copies of one
ring side by side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from ..ring_family import RingSpec

IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
MAX_PREFIX = 40  # leaves room for the longest suffix within C99's 63 significant characters


@dataclass(frozen=True)
class Names:
    """``root``: what starts every symbol and file name (``nttgen_mlkem``); ``macros``: what
    starts every macro (``NTTGEN``); ``option``: the command-line text that selects them
    (empty for the default names)."""

    root: str
    macros: str = "NTTGEN"
    option: str = ""

    def macro(self, name: str) -> str:
        """The macro ``name`` in this namespace (``ALIGN`` -> ``NTTGEN_ALIGN``)."""
        return f"{self.macros}_{name}"


def default_names(ring: RingSpec) -> Names:
    """``nttgen_<ring>`` and ``NTTGEN``."""
    return Names(f"nttgen_{ring.c_name}")


def prefix_names(prefix: str) -> Names:
    """The namespace ``--prefix prefix`` selects. Raises :class:`InputError` unless ``prefix``
    is a C identifier that starts with a letter (names starting with ``_`` are reserved to the
    implementation), has no trailing or doubled ``_`` (a ``_`` joins it to the rest of each
    name) and has at most :data:`MAX_PREFIX` characters."""
    if not IDENTIFIER.fullmatch(prefix):
        raise InputError(
            f"--prefix {prefix!r} is not a C identifier that starts with a letter (letters, "
            "digits and _ only)"
        )
    if prefix.endswith("_") or "__" in prefix:
        raise InputError(
            f"--prefix {prefix!r}: leave out the trailing or doubled _ (nttgen joins the prefix "
            "to each name with one _)"
        )
    if len(prefix) > MAX_PREFIX:
        raise InputError(f"--prefix has {len(prefix)} characters; at most {MAX_PREFIX}")
    return Names(prefix, prefix.upper(), f" --prefix {prefix}")


def names_for(ring: RingSpec, prefix: str | None) -> Names:
    """The default names of ``ring``, or those of ``--prefix prefix``."""
    return default_names(ring) if prefix is None else prefix_names(prefix)
