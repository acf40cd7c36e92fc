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
from .rvv_backends import rvv_class

# the backends generated for the presets (``rvv128m2`` and other LMULs are made on demand)
ISAS: dict[str, type[Isa]] = {
    "c": PortableC,
    "avx2": Avx2,
    "avx512": Avx512,
    "neon": Neon,
    "rvv": rvv_class("rvv"),
    "rvv128": rvv_class("rvv128"),
    "rvv256": rvv_class("rvv256"),
}


def isa_class(name: str) -> type[Isa]:
    """The ISA backend called ``name``."""
    if name in ISAS:
        return ISAS[name]
    if name.startswith("rvv"):
        return rvv_class(name)
    raise UnknownNameError(
        f"unknown ISA {name!r}: known ISAs are {', '.join(ISAS)} "
        "(and rvv<VLEN>m<LMUL>, e.g. rvv128m2)"
    )


__all__ = ["ISAS", "EmitContext", "Isa", "isa_class"]
