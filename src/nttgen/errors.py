"""Typed errors raised by nttgen.

Every error names the rule that was broken so that a user (or the CLI, which prints the message as
one line) can act on it without reading a traceback.
"""


class NttgenError(Exception):
    """Base class of every error nttgen raises on purpose."""


class RingError(NttgenError, ValueError):
    """Invalid ring parameters: the message names the rule broken and, where one exists, the
    nearest valid choice."""


class UnknownNameError(NttgenError, KeyError, ValueError):
    """An unknown preset, ISA, kernel or operation name."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it verbatim
        return str(self.args[0]) if self.args else ""


class BoundsError(NttgenError):
    """The interval analysis found a lane that can overflow, or an output contract that cannot
    be met. The message names the kernel, the op, the layer and the range."""


class LaneOverflowError(NttgenError, ArithmeticError):
    """The evaluator in checked mode met a lane result that differs from the mathematical
    integer (the lane wrapped)."""


class IsaUnavailableError(NttgenError):
    """An ISA was requested that this CPU or toolchain cannot run."""


class BuildError(NttgenError):
    """The C compiler failed on generated code (always a bug in nttgen)."""


class InputError(NttgenError, ValueError):
    """Bad input to the Python API: wrong dtype, shape or coefficient range."""


class OutputError(NttgenError):
    """A file or directory nttgen was asked to write cannot be written: the message names the
    option that gave the path (``-o``, ``--json``, ``--png``), the path and the reason in plain
    words (:mod:`nttgen.fsio` turns every :class:`OSError` of writing into one)."""


# ------------------------------------------------------------ the ring-map layer's rules
class MapError(RingError):
    """Base class: a ring map, pipeline or parameter set breaks a rule (the message names it)."""


class ParameterError(MapError):
    """p or q is not acceptable at all (p not prime, q not an odd prime, ...)."""


class NoRootOfUnityError(MapError):
    """A root of unity of the required order does not exist in Z_q (or in the ring used)."""


class NoSquareRootError(MapError):
    """A square root that a split needs (Cooley–Tukey or Bruun) does not exist in Z_q."""


class SizeError(MapError):
    """Sizes do not fit the map (not a power of two, not coprime, blocks too long, ...)."""


class FactorisationError(MapError):
    """A construction-time check failed: the target moduli do not multiply to the source, a map
    is not a ring homomorphism, or a round trip does not return its input (always a bug)."""


class InputShapeError(MapError):
    """An input polynomial or tuple of parts has the wrong length or count."""


class NoPipelineError(MapError):
    """No pipeline exists for (p, q); the message lists the rule each pipeline breaks."""


# ------------------------------------------------------------ the host's build settings
class CacheError(NttgenError, OSError):
    """The build cache (``$NTTGEN_CACHE``, default ``~/.cache/nttgen``) cannot be created or
    written: the message names the directory and the reason. It is an :class:`OSError` too, so
    callers that catch file-system errors keep doing so."""


class SettingError(NttgenError, ValueError):
    """An environment setting nttgen reads (``NTTGEN_SANITIZE``) has a value it cannot use: the
    message names the setting, the value and the accepted ones."""
