"""nttgen: constant-time NTT polynomial multipliers for lattice cryptography, generated from one
DSL program per transform into portable C and SIMD C.

Start with :func:`load` (Python API), :mod:`nttgen.rings` (presets and custom rings) and
:func:`nttgen.generate.generate` (C files).
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
from .rings import PRESETS, Ring, custom_ring, get_ring, make_ring
from .version import __version__

__all__ = [
    "PRESETS",
    "BoundsError",
    "BuildError",
    "InputError",
    "IsaUnavailableError",
    "Kernel",
    "NttgenError",
    "Ring",
    "RingError",
    "UnknownNameError",
    "__version__",
    "custom_ring",
    "get_ring",
    "load",
    "make_ring",
]
