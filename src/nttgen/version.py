"""The generator's version: it is written into every generated file's header."""

__version__ = "0.1.0"
