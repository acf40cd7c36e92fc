"""nttgen: constant-time NTT polynomial multipliers for lattice cryptography, generated from one
DSL program per transform into portable C and SIMD C.

Start with :func:`load` (Python API, every ring family), :func:`get_ring` (presets and custom
rings of every family: :mod:`nttgen.rings` for x^n + 1, :mod:`nttgen.ntru_rings` for NTRU
Prime) and :mod:`nttgen.outputs` (C files).
"""

from .api import Kernel, load
from .errors import (
    BoundsError,
    BuildError,
    InputError,
    IsaUnavailableError,
    NttgenError,
    RingError,
    UnknownNameError,
)
from .families import all_presets, get_ring
from .ntru_rings import NtruPrimeRing, make_ntru_ring
from .ring_family import RingSpec
from .rings import PRESETS, Ring, custom_ring, make_ring
from .version import __version__

__all__ = [
    "PRESETS",
    "BoundsError",
    "BuildError",
    "InputError",
    "IsaUnavailableError",
    "Kernel",
    "NtruPrimeRing",
    "NttgenError",
    "Ring",
    "RingError",
    "RingSpec",
    "UnknownNameError",
    "__version__",
    "all_presets",
    "custom_ring",
    "get_ring",
    "load",
    "make_ntru_ring",
    "make_ring",
]
