"""ISA backends as data: per ISA, a class mapping each vocabulary op to a C template.

Adding an ISA means adding one module here and one entry to :data:`ISAS`; a schema test checks
that every ISA implements the whole vocabulary with the same parameters.
"""

from __future__ import annotations

from ...errors import UnknownNameError
from .avx2 import Avx2
from .avx512 import Avx512
from .base import EmitContext, Isa
from .neon import Neon
from .portable import PortableC

ISAS: dict[str, type[Isa]] = {"c": PortableC, "avx2": Avx2, "avx512": Avx512, "neon": Neon}


def isa_class(name: str) -> type[Isa]:
    """The ISA backend called ``name``."""
    try:
        return ISAS[name]
    except KeyError:
        raise UnknownNameError(f"unknown ISA {name!r}: known ISAs are {', '.join(ISAS)}") from None


__all__ = ["ISAS", "EmitContext", "Isa", "isa_class"]
