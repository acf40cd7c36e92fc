"""Generated files of an NTRU Prime ring: the .h/.c pair and the JSON manifest for one ISA.

Same conventions as :mod:`nttgen.emit.files` (deterministic text, provenance header, contracts
in the prototypes' comments); the functions come from :mod:`nttgen.programs.ntru`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..build_cache import GENERATION_CACHE, stored
from ..dsl.ir import Function
from ..dsl.vocab import OP_GROUPS, PAIR_SUMS
from ..errors import IsaUnavailableError, MapError
from ..interp.cost import count_ops
from ..lanes import I16
from ..ntru_rings import NtruPrimeRing
from ..plan.constants import Arith
from ..plan.maps.choose import GRB, GSB, SN
from ..programs.ntru import NtruFunctions, build_good_rader
from ..programs.ntru_config import LineThresholds, NtruConfig
from ..programs.ntru_shift import build_shift_pipeline
from ..toolchain import cache_dir
from ..tuning import NTRU_CHOICES, NTRU_TUNED, NtruTuning
from ..version import __version__
from .files import CFileWriter, GeneratedFiles, _ops_text, lanes_text
from .isa import isa_class
from .isa.base import EmitContext
from .names import Names, default_names

NTRU_ISAS = ("c", "avx2", "avx512", "neon", "rvv")
"""The ISAs NTRU Prime rings are generated for. AVX-512 (32 lanes) uses blocks of 32 and a DFT
of length 51 (see :func:`nttgen.programs.ntru.good_rader_shape`). RISC-V Vector is the
VLEN-agnostic ``rvv``: the one-lane program strip-mined (the VLEN-specialised ``rvv<VLEN>``
backends are not generated for these rings)."""

NTRU_PIPELINES = (GSB, GRB, SN)
"""The pipelines with generated C: Good–Rader–Bruun (:mod:`nttgen.programs.ntru`) and the two
Schönhage pipelines (:mod:`nttgen.programs.ntru_shift`). Where no pipeline is named, a ring's
:attr:`~nttgen.ntru_rings.NtruPrimeRing.default_pipeline` is generated (Good–Rader–Bruun
wherever it exists)."""

PIPELINE_TAGS = {GRB: "", GSB: "gsb", SN: "sn"}
"""Infix of a pipeline's file and symbol names: none for Good–Rader–Bruun, the default wherever
it exists; a fixed one for each other pipeline, also where it is a ring's default (p = 653,
q = 4621: ``nttgen_p653_q4621_sn_c.h``), so that a file name always says its pipeline."""


@dataclass(frozen=True)
class EntryDoc:
    """What an exported function computes, for its comment and the manifest."""

    summary: str
    inputs: str
    output: str


def entry_docs(ring: NtruPrimeRing) -> dict[str, EntryDoc]:
    """The exported functions of an NTRU Prime ring, by name."""
    h = ring.half
    out = f"r: {ring.p} coefficients in [{-h}, {h}] (the centred representatives)"
    return {
        "polymul": EntryDoc(
            f"r = a*b mod (q, {ring.modulus_poly})",
            f"a, b: {ring.p} coefficients each in [{-h}, {h}], lowest first",
            out,
        ),
        "polymul_small": EntryDoc(
            f"r = a*b mod (q, {ring.modulus_poly}) for a small b",
            f"a: {ring.p} coefficients in [{-h}, {h}]; b: {ring.p} coefficients in {{-1, 0, 1}}",
            out,
        ),
    }


def ntru_command(
    ring: NtruPrimeRing, isa: str, pipeline: str | None = None, names: Names | None = None
) -> str:
    """The command line that regenerates a ring's files for an ISA through ``pipeline``
    (default: the ring's default pipeline) in the namespace ``names``, output location aside;
    ``--pipeline`` only for a pipeline other than the ring's default."""
    what = f"--ring {ring.name}" if ring.preset else f'--q {ring.q} --f "{ring.modulus_poly}"'
    chosen = pipeline or ring.default_pipeline
    extra = "" if chosen == ring.default_pipeline else f" --pipeline {chosen}"
    return f"nttgen generate {what} --isa {isa}{extra}{names.option if names else ''}"


def ntru_stem(
    ring: NtruPrimeRing, isa: str, pipeline: str | None = None, names: Names | None = None
) -> str:
    """The file stem and symbol prefix of ``pipeline`` (default: the ring's default pipeline),
    e.g. ``nttgen_sntrup761_avx2`` (Good–Rader–Bruun) or ``nttgen_sntrup761_sn_avx2``, in
    the namespace ``names`` (default: nttgen's)."""
    tag = PIPELINE_TAGS[pipeline or ring.default_pipeline]
    root = (names or default_names(ring)).root
    return f"{root}_{tag + '_' if tag else ''}{isa_class(isa).name}"


def ntru_arith(ring: NtruPrimeRing, isa: str) -> Arith:
    """The lane arithmetic of ``ring`` on ``isa``: 16-bit lanes (q < 2^15), products by
    constants as the ISA prefers them."""
    return Arith(ring.q, I16, isa_class(isa).const_mul_for(I16, ring.q))


def line_thresholds(tuned: NtruTuning, q: int) -> LineThresholds | None:
    """The per-pass thresholds of ``tuned`` as lane values for modulus q (a pass left out:
    none in the forward's, ``inverse_threshold_q`` in the inverse's); None where it names
    none."""
    if tuned.forward_lines_q is None and tuned.inverse_lines_q is None:
        return None
    t = tuned.inverse_threshold_q
    fwd = [None if k is None else k * q for k in tuned.forward_lines_q or (None, None)]
    inv = [None if k is None else k * q for k in tuned.inverse_lines_q or (t, t, t)]
    return LineThresholds(forward=(fwd[0], fwd[1]), inverse=(inv[0], inv[1], inv[2]))


def ntru_config(ring: NtruPrimeRing, isa: str) -> NtruConfig:
    """The measured program variants of ``ring`` on ``isa``: the ISA's choices
    (:data:`nttgen.tuning.NTRU_CHOICES`) with the thresholds measured for the ring
    (:data:`nttgen.tuning.NTRU_TUNED`, in lane values for its q)."""
    tuned = NTRU_TUNED.get((ring.p, ring.q, isa), NtruTuning())
    t = tuned.inverse_threshold_q
    return NtruConfig(
        **NTRU_CHOICES[isa],  # type: ignore[arg-type]
        inverse_threshold=None if t is None else t * ring.q,
        line_thresholds=line_thresholds(tuned, ring.q),
    )


def ntru_functions(
    ring: NtruPrimeRing, isa: str, pipeline: str | None = None, config: NtruConfig | None = None
) -> NtruFunctions:
    """The functions of ``ring`` for ``isa`` through ``pipeline`` (default: the ring's
    :attr:`~nttgen.ntru_rings.NtruPrimeRing.default_pipeline`) with the program variants of
    ``config`` (default :func:`ntru_config`), in the order the programs record them (cached:
    callers must not change them). Raises :class:`IsaUnavailableError` for an ISA or a
    pipeline without generated C yet, and the pipeline's own error (naming the rule, p and q)
    where it does not exist for (p, q)."""
    name = pipeline or ring.default_pipeline
    if name not in NTRU_PIPELINES:
        raise IsaUnavailableError(
            f"pipeline {name!r} has no generated C yet (generated: {', '.join(NTRU_PIPELINES)})"
        )
    if isa not in NTRU_ISAS:
        raise IsaUnavailableError(
            f"NTRU Prime rings are generated for {', '.join(NTRU_ISAS)}, not yet for {isa}"
        )
    ring.pipeline(name)  # the pipeline's rules, with their message, before any building
    chosen = config or ntru_config(ring, isa)
    if chosen.base_products == "pairs" and PAIR_SUMS not in isa_class(isa).op_groups:
        raise IsaUnavailableError(
            f"base products 'pairs' need the op group {PAIR_SUMS!r}, which {isa} does not emit "
            f"({OP_GROUPS[PAIR_SUMS]})"
        )
    try:
        return _functions(ring, isa, name, config or ntru_config(ring, isa))
    except (IsaUnavailableError, MapError) as exc:
        # a program's own rule names its internal sizes ("16 lanes do not divide its input
        # half of 2"); say which ring, ISA and pipeline the user asked for, keeping the type
        raise type(exc)(f"{name} for p={ring.p}, q={ring.q} on {isa}: {exc}") from exc


@lru_cache(maxsize=GENERATION_CACHE)
def _functions(ring: NtruPrimeRing, isa: str, pipeline: str, config: NtruConfig) -> NtruFunctions:
    cls = isa_class(isa)
    # The statements stay in the order the programs record them (each DFT line by line, each
    # product level by level), not list-scheduled as the NTT kernels are: the traced DFTs
    # have far more independent work than registers, and a critical-path order kept too many
    # values live. Measured (sntrup761, clang-19, stage harness, best of 5 runs): AVX2
    # forward 1,023 -> 785 ticks, inverse 1,545 -> 1,189 (clang's spill accesses 1,165 ->
    # 491 and 1,588 -> 494), base 2,251 -> 2,163, polymul 6,674 -> 5,928; AVX-512 polymul
    # 5,697 -> 5,588.
    costs = cls.move_costs(I16)
    zip_group = costs.zip_group if costs is not None else None
    arith, lanes = ntru_arith(ring, isa), cls.lanes_for(I16)
    if pipeline == GRB:
        return build_good_rader(ring.p, ring.q, arith, lanes, zip_group, config)
    return build_shift_pipeline(
        pipeline, ring.p, ring.q, arith, lanes, zip_group, config.coarse_reductions
    )


class NtruFileWriter(CFileWriter):
    """Builds the generated files of one NTRU Prime ring for one ISA."""

    def __init__(
        self,
        ring: NtruPrimeRing,
        isa: str,
        pipeline: str | None = None,
        config: NtruConfig | None = None,
        names: Names | None = None,
    ) -> None:
        names = names or default_names(ring)
        self.names = names
        self.ring = ring
        self.pipeline = pipeline or ring.default_pipeline
        self.variant_tag = PIPELINE_TAGS[self.pipeline]
        self.fs = ntru_functions(ring, isa, self.pipeline, config)
        self.arith = ntru_arith(ring, isa)
        cls = isa_class(isa)
        self.prefix = ntru_stem(ring, isa, self.pipeline, names)
        self.stem = self.prefix
        self.command = ntru_command(ring, isa, self.pipeline, names)
        self.isa = cls(EmitContext(self.arith, self.prefix, macros=names.macros))
        self.lanes = self.fs.shape.lanes
        self.docs = entry_docs(ring)
        self.functions = self.fs.functions
        self.gcc_options = self.fs.gcc_options
        self.costs = {n: dict(count_ops(f, {})) for n, f in self.fs.functions.items()}
        self._register_tables()

    def entry_text(self, name: str) -> tuple[str, str, str]:
        """(summary, input, output) of the entry point ``name`` (:func:`entry_docs`)."""
        d = self.docs[name]
        return d.summary, d.inputs, d.output

    def dims(self) -> tuple[int, int]:
        """(p, q)."""
        return self.ring.p, self.ring.q

    def _table_per_line(self) -> int:
        return max(self.lanes, 8)

    def _header_lines(self, kind: str) -> list[str]:
        ring, shape, ar = self.ring, self.fs.shape, self.arith
        lines = [
            f"{self.stem}.{kind}: generated by nttgen {__version__}. Do not edit; regenerate with",
            f"  {self.command}",
            "",
            f"Ring:   Z_q[x]/({ring.modulus_poly}), p = {ring.p}, q = {ring.q}"
            + (f" (preset {ring.name})" if ring.preset else ""),
            *shape.plan_lines(ring.modulus_poly),
            f"ISA:    {self.isa.title}; {lanes_text(self.isa, self.lanes)} of 16 bits per value",
            f"Lanes:  beta = 2^16; q^-1 mod beta = {ar.qinv}; beta mod q = {ar.mont}; "
            f"Barrett v = {ar.barrett_v}, shift {16 + ar.barrett_k}",
            "Ranges: inclusive [lo, hi], proven by nttgen's interval analysis for every input in",
            "        the stated input range.",
        ]
        return lines

    def _function_doc(self, name: str, fn: Function) -> tuple[str, ...]:
        # the stages (forward, base, ...) are internal: their own doc and their op counts
        if fn.internal:
            return (fn.doc, f"Ops per call: {_ops_text(self.costs[name])}")
        return super()._function_doc(name, fn)

    def _manifest_sections(self) -> tuple[dict[str, object], dict[str, object]]:
        """The pipeline, after ``ring``."""
        return {"pipeline": self.pipeline}, {}


def generate_ntru(
    ring: NtruPrimeRing,
    isa: str = "c",
    pipeline: str | None = None,
    config: NtruConfig | None = None,
    names: Names | None = None,
) -> GeneratedFiles:
    """The generated files of an NTRU Prime ring for one ISA through ``pipeline`` (default:
    the ring's :attr:`~nttgen.ntru_rings.NtruPrimeRing.default_pipeline`; see
    :data:`NTRU_PIPELINES`) with the program variants of ``config`` (default
    :func:`ntru_config`), in the namespace ``names`` (default: nttgen's). Cached, and shared
    through the build cache where storing is on (the test suite, see
    :func:`nttgen.build_cache.stored`)."""
    chosen = pipeline or ring.default_pipeline  # one cache entry whether named or not
    ntru_functions(ring, isa, chosen, config)  # the refusals, before the cache
    return _files(ring, isa, chosen, config or ntru_config(ring, isa), names)


@lru_cache(maxsize=GENERATION_CACHE)
def _files(
    ring: NtruPrimeRing, isa: str, pipeline: str, config: NtruConfig, names: Names | None
) -> GeneratedFiles:
    key: tuple[object, ...] = (ring, isa, pipeline, config)
    return stored(
        cache_dir() / "generated",
        "ntru_files",
        key if names is None else (*key, names),
        lambda: NtruFileWriter(ring, isa, pipeline, config, names).files(),
    )


def ntru_writer(
    ring: NtruPrimeRing, isa: str, pipeline: str | None = None, names: Names | None = None
) -> NtruFileWriter:
    """The (cached) file writer of ``ring`` on ``isa`` through ``pipeline`` (default: the
    ring's default pipeline) with the measured program variants (:func:`ntru_config`), in the
    namespace ``names`` (default: nttgen's); callers must not change it."""
    return _writer(ring, isa, pipeline or ring.default_pipeline, names)


@lru_cache(maxsize=GENERATION_CACHE)
def _writer(
    ring: NtruPrimeRing, isa: str, pipeline: str, names: Names | None = None
) -> NtruFileWriter:
    return NtruFileWriter(ring, isa, pipeline, names=names)


def clear_ntru_caches() -> None:
    """Forget the NTRU Prime functions, writers and files this process holds."""
    _functions.cache_clear()
    _files.cache_clear()
    _writer.cache_clear()
