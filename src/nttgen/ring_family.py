"""The interface every ring family implements, and nothing else.

A *ring family* is one shape of modulus polynomial f with its multiplication algorithm:
x^n + 1 with a negacyclic NTT (:mod:`nttgen.rings`), x^p - x - 1 through the ring-map pipelines
of NTRU Prime (:mod:`nttgen.ntru_rings`). Everything around the kernels (generation, the file
writer and manifest, the loader and kernel class, verification, the CLI, the benchmark, the
dispatching front end) is written once against these two protocols; :mod:`nttgen.families` holds
the implementations and looks a ring's family up by its type. This module imports nothing of
nttgen, so every layer may depend on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np

    from .emit.files import CFileWriter, GeneratedFiles
    from .emit.names import Names


class RingSpec(Protocol):
    """A validated ring Z_q[x]/(f): plain data, hashable, the same for every ISA."""

    @property
    def name(self) -> str:
        """The preset or custom name (``mlkem``, ``n512_q12289``, ``sntrup761``, ``p653_q4621``)."""
        ...

    @property
    def q(self) -> int:
        """The prime modulus."""
        ...

    @property
    def degree(self) -> int:
        """deg f: the number of coefficients of one ring element."""
        ...

    @property
    def preset(self) -> bool:
        """Whether the ring is a preset (its files are checked in under ``generated/``)."""
        ...

    @property
    def description(self) -> str:
        """One line on where the ring is used (empty for a custom ring)."""
        ...

    @property
    def modulus_poly(self) -> str:
        """f as text, e.g. ``x^256 + 1`` or ``x^761 - x - 1``."""
        ...

    @property
    def degree_text(self) -> str:
        """deg f as the family writes it in headers (``n = 256``, ``p = 761``)."""
        ...

    @property
    def c_name(self) -> str:
        """The name as a C identifier fragment (``kyber-r1`` -> ``kyber_r1``)."""
        ...

    @property
    def algorithm(self) -> str:
        """How the ring multiplies, in a few words (``nttgen list``)."""
        ...

    @property
    def coefficient_range(self) -> tuple[int, int]:
        """The inclusive range the Python API accepts for every coefficient of a product's
        operands (the generated ``polymul``'s input contract)."""
        ...

    @property
    def output_range(self) -> tuple[int, int]:
        """The inclusive range of every coefficient ``polymul`` returns."""
        ...

    def reference_product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a*b mod (q, f) over exact integers, coefficients in :attr:`output_range` (int64;
        a, b: ``degree`` integers each, any values)."""
        ...

    def summary(self) -> dict[str, object]:
        """A JSON-friendly description (headers, manifests, ``--json`` outputs)."""
        ...


class RingFamily(Protocol):
    """One family of rings: how its names parse, which ISAs and program variants exist for a
    ring, and how a ring's files are generated. A third family is added by implementing this
    protocol and registering it in :data:`nttgen.families.FAMILIES` (see docs/architecture.md)."""

    @property
    def title(self) -> str:
        """How ``nttgen list`` heads the family's table."""
        ...

    @property
    def presets(self) -> Mapping[str, RingSpec]:
        """The family's presets by name, one per arithmetic shape."""
        ...

    @property
    def ops(self) -> tuple[str, ...]:
        """The operations the benchmark times for the family's rings, in table order."""
        ...

    def parse(self, name: str) -> RingSpec | None:
        """The ring ``name`` names in this family (a preset, an alias resolved to its target,
        or the family's custom-name syntax); None when the name is not of this family. Raises
        :class:`~nttgen.errors.RingError` when it is, but the ring breaks a rule."""
        ...

    def from_options(
        self, q: int, n: int | None, f: str | None, lane_bits: int | None
    ) -> RingSpec | None:
        """The custom ring the command line's ``--q`` with ``--n`` or ``--f`` gives, if those
        options describe a ring of this family (None otherwise). Raises
        :class:`~nttgen.errors.NttgenError` naming the rule the options break."""
        ...

    def name_syntax(self) -> str:
        """How a custom ring of the family is named, for error messages (``n<N>_q<Q>``)."""
        ...

    def unsupported(self, ring: RingSpec, isa: str) -> str | None:
        """Why ``isa`` has no code for ``ring`` (one line), or None when it has."""
        ...

    def variants(self, ring: RingSpec) -> Sequence[str]:
        """The names of the ring's program variants with generated C (NTRU Prime's pipelines),
        default first; empty when the family has one program."""
        ...

    def check_variant(self, ring: RingSpec, variant: str | None) -> None:
        """Raise :class:`~nttgen.errors.NttgenError` naming the rule when ``variant`` is not one
        of :meth:`variants` (None always passes: the default)."""
        ...

    def writer(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> CFileWriter:
        """The file writer of ``ring`` on ``isa`` through ``variant`` (default: the ring's
        default program), in the namespace ``names`` (default: nttgen's)."""
        ...

    def generate(
        self, ring: RingSpec, isa: str, variant: str | None = None, names: Names | None = None
    ) -> GeneratedFiles:
        """The .h/.c/.json texts of ``ring`` on ``isa`` through ``variant`` in the namespace
        ``names`` (cached)."""
        ...
