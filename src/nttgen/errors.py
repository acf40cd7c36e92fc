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
