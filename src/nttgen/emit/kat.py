"""The known answers of a ring directory's self-test (:mod:`nttgen.emit.selftest`): what it runs,
on which inputs, and what each output must be, with the C functions that recompute the inputs
and the checksums exactly as this module does.

The self-test runs every entry point of the front end that computes, on every ISA it can, on
inputs drawn from fixed seeds (a splitmix64 stream that the program and this module compute
alike), and compares a checksum of each output with the answer computed here at generation
time by nttgen's exact evaluator (:func:`nttgen.interp.evaluate.evaluate`) over the portable
C's programs. The ranges come from the ISA files' manifests, the ISAs from the front end's.

What makes one answer right for every ISA:

* **Inputs** lie in the narrowest input contract over the ISAs (the front end's ranges), at
  both ends as well as random: every ISA's contract holds.
* **The NTT domain.** Inputs an entry point reads in the native order go through
  ``from_standard`` first, outputs it leaves in the native order through ``to_standard``, so
  every ISA is compared in the ring's standard order. ``to_standard`` and ``from_standard``
  themselves are the one exception: their answers are each ISA's permutation (from its
  manifest's ``native_order``), one checksum per ISA.
* **Representatives.** An output whose contract spans q values or more (the NTT domain,
  ``tomont``...) is compared as canonical residues in [0, q), as each ISA leaves its own
  representatives; an output whose range holds one representative per residue (``reduce``,
  ``polymul``, NTRU Prime's centred products) is compared as it is, and every output is also
  checked to lie in its documented range. The residues are the same on every ISA because
  every ISA's manifest has the same lane arithmetic (q and beta, the Montgomery factor) and
  says the same of each output (checked here; a difference is refused).

Each file is a pure function of the ring's files: no dates or paths, byte-identical on every
regeneration.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..interp.evaluate import evaluate
from . import c_ast as C
from .files import CFileWriter, GeneratedFiles
from .isa import isa_class

ORDER_ONLY = ("to_standard", "from_standard")
"""Entry points whose answers depend on the ISA (its native order)."""

NOT_RUN = ("basemul_cache", "ntt_vec", "intt_vec")
"""Entry points the self-test does not run on their own: the multiplication cache is each ISA's
own layout and representatives (neither a standard-order polynomial nor comparable across
ISAs). It runs inside ``basemul_acc_cached``'s cases, whose cache the runner computes from b
with the same ISA's ``basemul_cache`` (:data:`CACHE`). The transforms of k polynomials write
k polynomials, where every case here compares one; ``nttgen verify`` compares them with the
single transforms on every ISA."""

CACHE = "cache"
"""The role (and parameter name) of an input the self-test derives from b with
``basemul_cache`` instead of filling it."""

NATIVE = "native order"
"""What a manifest's ``input``/``output`` text of an entry point says when it reads or writes the
NTT domain in the ISA's own order."""

K = 3
"""The number of products that ``basemul_acc`` (a size parameter ``k``) sums in the self-test."""

# the fill kinds of an input array (kat_fill in the C)
RANDOM, LOW, HIGH, ALTERNATE, ENDS, RAMP = range(6)
TWO_INPUTS = (
    ("random", RANDOM, RANDOM),
    ("all lo", LOW, LOW),
    ("all hi", HIGH, HIGH),
    ("all hi by all lo", HIGH, LOW),
    ("alternating ends", ALTERNATE, ALTERNATE),
    ("random ends", ENDS, ENDS),
)
ONE_INPUT = tuple((name, a, a) for name, a, b in TWO_INPUTS if a == b)
CONVERSIONS = (("random", RANDOM, RANDOM), ("ramp", RAMP, RAMP))

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # splitmix64's increment
MIX1, MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def stream(seed: int, length: int) -> list[int]:
    """The first ``length`` outputs of splitmix64 started at ``seed`` (kat_next in the C)."""
    out = []
    state = seed & MASK
    for _ in range(length):
        state = (state + GOLDEN) & MASK
        z = state
        z = ((z ^ (z >> 30)) * MIX1) & MASK
        z = ((z ^ (z >> 27)) * MIX2) & MASK
        out.append(z ^ (z >> 31))
    return out


def fill(length: int, lo: int, hi: int, kind: int, seed: int) -> np.ndarray:
    """The ``length`` values kat_fill writes for ``kind`` in [lo, hi] from ``seed``: random
    (uniform, up to a bias below 2^-31), all lo, all hi, hi and lo alternating (hi first), hi or
    lo at random, or the ramp lo, lo + 1, ... (int64)."""
    span = hi - lo + 1
    xs = stream(seed, length)
    out = []
    for i, x in enumerate(xs):
        v = lo + x % span
        if kind == LOW:
            v = lo
        elif kind == HIGH:
            v = hi
        elif kind == ALTERNATE:
            v = hi if i % 2 == 0 else lo
        elif kind == ENDS:
            v = hi if x >> 63 else lo
        elif kind == RAMP:
            v = lo + i % span
        out.append(v)
    return np.array(out, dtype=np.int64)


def checksum(values: Sequence[int]) -> int:
    """The 64-bit checksum kat_checksum computes of an output: FNV-1a's constants over whole
    values, each step followed by an xor-shift (every step is a bijection of the state, so one
    changed value always changes the checksum)."""
    h = FNV_OFFSET
    for v in values:
        h = ((h ^ (int(v) & MASK)) * FNV_PRIME) & MASK
        h ^= h >> 32
    return h


@dataclass(frozen=True)
class KatOp:
    """One entry point of the front end as the self-test runs it: its parameters in C order
    (roles ``out``/``in``/``inout``, or ``size`` for ``k``), the length of each input array,
    each input's range, the range its output must lie in, whether the output is compared as it
    is (else as canonical residues), whether its answers are per ISA, and whether it reads and
    writes the native order."""

    name: str
    params: tuple[tuple[str, str], ...]
    length: int
    ranges: tuple[tuple[int, int], ...]
    out_range: tuple[int, int]
    exact: bool
    per_isa: bool
    native_in: bool
    native_out: bool

    @property
    def inputs(self) -> list[str]:
        """The names of the input arrays, in C order."""
        return [n for n, role in self.params if role in ("in", "inout")]


@dataclass(frozen=True)
class KatCase:
    """One known answer: the op, the case's name, the fill kind of each input, the seed of the
    first input (the second's is seed + 1), the inputs, the expected checksum by ISA ("" for
    every ISA), the expected values where the file stores them in full, and the expected
    values behind the checksum (None where they are per ISA; for tests)."""

    op: str
    name: str
    kinds: tuple[int, int]
    seed: int
    inputs: tuple[np.ndarray, ...]
    want: dict[str, int]
    full: tuple[int, ...] | None = None
    answer: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SelfTest:
    """What the self-test of one front end checks: the ISAs (name, architecture; best first),
    the ops, the cases, n and q, the C type of a coefficient and log2 of beta, the Montgomery
    factor of every ISA."""

    stem: str
    isas: tuple[tuple[str, str | None], ...]
    ops: tuple[KatOp, ...]
    cases: tuple[KatCase, ...]
    n: int
    q: int
    lane: str
    beta_bits: int

    @property
    def n_macro(self) -> C.Name:
        """The front end's macro of the number of coefficients (``<STEM>_N``)."""
        return C.Name(f"{self.stem.upper()}_N")

    @property
    def q_macro(self) -> C.Name:
        """The front end's macro of q (``<STEM>_Q``)."""
        return C.Name(f"{self.stem.upper()}_Q")


def _meet(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return max(r[0] for r in ranges), min(r[1] for r in ranges)


def _hull(ranges: list[tuple[int, int]]) -> tuple[int, int]:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _same_arithmetic(manifests: dict[str, dict]) -> None:  # type: ignore[type-arg]
    """Raise ValueError unless every ISA has the same q and beta (so the same Montgomery
    factors) and says the same of what each entry point computes."""
    first_isa, first = next(iter(manifests.items()))
    for isa, m in manifests.items():
        for key in ("q", "beta_bits"):
            if m["arith"][key] != first["arith"][key]:
                raise ValueError(f"{isa} and {first_isa} differ in {key}: no common answers")
        for op, meta in m["functions"].items():
            theirs = first["functions"].get(op)
            if theirs is not None and (meta["summary"], meta["output"]) != (
                theirs["summary"],
                theirs["output"],
            ):
                raise ValueError(f"{isa} and {first_isa} compute {op} differently")


def _native_index(perm: list[int], size: int) -> list[int]:
    """native[p] = the standard index stored at address p (address bit b holds index bit
    perm[b]), as :mod:`nttgen.api` reads a manifest's ``native_order``."""
    return [sum(((p >> b) & 1) << dst for b, dst in enumerate(perm)) for p in range(size)]


def _op(name: str, manifests: dict[str, dict], n: int, q: int, lane_bits: int) -> KatOp:  # type: ignore[type-arg]
    """The op ``name`` from the ISAs' manifests (the ISAs that lack an order conversion keep the
    standard order: to them it is the identity on any lane value)."""
    having = [m["functions"][name] for m in manifests.values() if name in m["functions"]]
    full = (-(1 << (lane_bits - 1)), (1 << (lane_bits - 1)) - 1)
    if not having:  # a conversion no ISA here needs: the front end's no-op
        whole = list(full)
        params: list[dict] = [  # type: ignore[type-arg]
            {"name": "a", "kind": "array", "role": "inout", "length": n, "times": None,
             "in_range": whole, "out_range": whole}
        ]  # fmt: skip
        texts = ("", "")
    else:
        params = having[0]["params"]
        texts = (having[0]["input"], having[0]["output"])
    arrays = [p for p in params if p["kind"] == "array"]
    outs = [p for p in arrays if p["role"] in ("out", "inout")]
    ins = [p for p in arrays if p["role"] in ("in", "inout") and p["name"] != CACHE]
    if len(outs) != 1 or outs[0]["length"] != n or not 1 <= len(ins) <= 2:
        raise ValueError(
            f"{name}: the self-test runs one output of n values from one or two inputs"
        )
    ranges = []
    for p in ins:
        found = [
            tuple(prm["in_range"])
            for f in having
            for prm in f["params"]
            if prm["name"] == p["name"] and prm.get("in_range")
        ]
        ranges.append(_meet(found) if found else full)  # type: ignore[arg-type]
    outs_found = [
        tuple(prm["out_range"])
        for f in having
        for prm in f["params"]
        if prm["name"] == outs[0]["name"] and prm.get("out_range")
    ]
    if name in ORDER_ONLY and len(having) < len(manifests):
        outs_found.append(ranges[0])  # the identity where an ISA keeps the standard order
    out_range = _hull(outs_found) if outs_found else full  # type: ignore[arg-type]
    times = {p["times"] for p in ins}
    length = ins[0]["length"] * (K if times != {None} else 1)
    return KatOp(
        name=name,
        params=tuple(
            (p["name"], CACHE if p["name"] == CACHE else p.get("role", "size")) for p in params
        ),
        length=length,
        ranges=tuple(ranges),  # type: ignore[arg-type]
        out_range=out_range,
        exact=name in ORDER_ONLY or out_range[1] - out_range[0] < q,
        per_isa=name in ORDER_ONLY,
        native_in=name not in ORDER_ONLY and NATIVE in texts[0],
        native_out=name not in ORDER_ONLY and NATIVE in texts[1],
    )


def _value(op: KatOp, v: int, q: int) -> int:
    """What the self-test compares of an output value: itself, or its residue in [0, q)."""
    return int(v) if op.exact else int(v) % q


def _answers(
    op: KatOp, inputs: list[list[np.ndarray]], portable: CFileWriter, q: int
) -> list[tuple[int, ...]]:
    """The outputs the exact evaluator computes with the portable C's program of ``op`` for
    each case's ``inputs`` (standard order), as the self-test compares them. Raises ValueError
    where one leaves the documented output range."""
    fn = portable.functions[op.name]
    feed = {name: np.stack([case[i] for case in inputs]) for i, name in enumerate(op.inputs)}
    scalars = {n: K for n, role in op.params if role == "size"}
    if any(role == CACHE for _, role in op.params):
        # the caches of the K polynomials of b, as the runner computes them
        polys = feed["b"].reshape(len(inputs) * K, -1)
        cache = evaluate(portable.functions["basemul_cache"], portable.arith, {"b": polys})
        feed[CACHE] = cache[CACHE].reshape(len(inputs), -1)
    out = evaluate(fn, portable.arith, feed, scalars, checked=True)
    (rows,) = [out[n] for n, role in op.params if role in ("out", "inout")]
    lo, hi = op.out_range
    if not (lo <= rows.min() and rows.max() <= hi):
        raise ValueError(f"{op.name}: the evaluator leaves the documented output range")
    return [tuple(_value(op, v, q) for v in row) for row in rows]


def _permuted(op: KatOp, x: np.ndarray, manifest: dict, n: int) -> list[int]:  # type: ignore[type-arg]
    """``x`` through the order conversion ``op`` of the ISA of ``manifest`` (the identity where
    the ISA keeps the standard order)."""
    values = [int(v) for v in x]
    if op.name not in manifest["functions"] or "native_order" not in manifest:
        return values
    native = _native_index(manifest["native_order"], n)
    if op.name == "from_standard":
        return [values[i] for i in native]
    out = [0] * n
    for p, i in enumerate(native):
        out[i] = values[p]
    return out


def selftest_plan(
    front: GeneratedFiles, isa_files: Sequence[GeneratedFiles], portable: CFileWriter
) -> SelfTest:
    """What the self-test of the front end ``front`` checks: its ISAs (from its manifest), its
    computing entry points with ranges from the ISA files' manifests ``isa_files`` (the files
    of the front end's ISAs; others are ignored), and the known answers, computed by the exact
    evaluator over ``portable`` (the writer of the front end's portable C), or per ISA from its
    native order for the order conversions. Raises ValueError when the ISAs disagree on the
    lane arithmetic or on what an entry point computes, or the portable C does not keep the
    standard order."""
    manifest = json.loads(front.manifest)
    by_stem = {f.stem: json.loads(f.manifest) for f in isa_files}
    manifests = {i["name"]: by_stem[i["stem"]] for i in manifest["isas"]}
    _same_arithmetic(manifests)
    if not manifests["c"].get("native_order_is_standard", True):
        raise ValueError("the portable C keeps the NTT domain in another order than the standard")
    stem = front.stem
    n, q = (portable.dims()[0], int(manifests["c"]["arith"]["q"]))
    lane_bits = int(manifests["c"]["arith"]["beta_bits"])
    names = [f.removeprefix(f"{stem}_") for f in manifest["functions"]]
    # what computes: an entry point of the ISA files, or an order conversion the front end adds
    # (the others, such as use_isa, choose the ISA)
    computing = [
        x
        for x in names
        if x not in NOT_RUN
        and (x in ORDER_ONLY or any(x in m["functions"] for m in manifests.values()))
    ]
    ops = [_op(x, manifests, n, q, lane_bits) for x in computing]
    cases: list[KatCase] = []
    for index, op in enumerate(ops):
        kinds = CONVERSIONS if op.per_isa else TWO_INPUTS if len(op.inputs) == 2 else ONE_INPUT
        seeds = [0x5E1F7E57 + 64 * (16 * index + number) for number in range(len(kinds))]
        inputs = [
            [fill(op.length, *op.ranges[i], kind, seed + i)
             for i, kind in enumerate((ka, kb)[: len(op.inputs)])]
            for seed, (_, ka, kb) in zip(seeds, kinds, strict=True)
        ]  # fmt: skip
        if op.per_isa:
            wants = [
                {isa: checksum(_permuted(op, case[0], m, n)) for isa, m in manifests.items()}
                for case in inputs
            ]
            fulls: list[tuple[int, ...] | None] = [None] * len(kinds)
            answers: list[tuple[int, ...] | None] = [None] * len(kinds)
        else:
            answers = list(_answers(op, inputs, portable, q))
            wants = [{"": checksum(values)} for values in answers]  # type: ignore[arg-type]
            # one full output (polymul's random case): the first wrong coefficient is named
            fulls = [v if op.name == "polymul" and k[0] == "random" else None
                     for v, k in zip(answers, kinds, strict=True)]  # fmt: skip
        for (case, ka, kb), seed, x, want, full, answer in zip(
            kinds, seeds, inputs, wants, fulls, answers, strict=True
        ):
            cases.append(KatCase(op.name, case, (ka, kb), seed, tuple(x), want, full, answer))
    isas = tuple((i["name"], isa_class(i["name"]).arch) for i in manifest["isas"])
    lane = portable.lane_c_type
    return SelfTest(stem, isas, tuple(ops), tuple(cases), n, q, lane, lane_bits)


# ------------------------------------------------------------------------- the C twins
# what the program computes alike: the splitmix64 stream, the fill of a case's inputs, the
# compared value of an output coefficient and the checksum (kept beside their Python forms)
def fill_def(plan: SelfTest) -> C.FuncDef:
    """``kat_fill(p, len, lo, hi, kind, seed)``: the inputs of a case (see :func:`fill`)."""
    p, i, x, v = C.Name("p"), C.Name("i"), C.Name("x"), C.Name("v")
    lo, hi, kind, span = C.Name("lo"), C.Name("hi"), C.Name("kind"), C.Name("span")

    def when(k: int, *more: C.Expr) -> C.Expr:
        test = C.Bin("==", kind, C.Int(k))
        return C.Logic("&&", (test, *more)) if more else test

    even = C.Bin("==", C.Bin("%", i, C.Int(2)), C.Int(0))
    odd = C.Bin("==", C.Bin("%", i, C.Int(2)), C.Int(1))
    top = C.Bin(">>", x, C.Int(63))
    loop = (
        C.Decl("uint64_t", "x", C.Call("kat_next", (C.Unary("&", C.Name("state")),))),
        C.Decl("int64_t", "v", C.Bin("+", lo, C.Cast("int64_t", C.Bin("%", x, span)))),
        C.If(when(LOW), (C.Assign(v, lo),)),
        C.If(when(HIGH), (C.Assign(v, hi),)),
        C.If(when(ALTERNATE, even), (C.Assign(v, hi),)),
        C.If(when(ALTERNATE, odd), (C.Assign(v, lo),)),
        C.If(when(ENDS, C.Bin("==", top, C.UInt(1))), (C.Assign(v, hi),)),
        C.If(when(ENDS, C.Bin("==", top, C.UInt(0))), (C.Assign(v, lo),)),
        C.If(when(RAMP), (C.Assign(v, C.Bin("+", lo, C.Cast("int64_t", C.Bin("%", i, span)))),)),
        C.Assign(C.Index(p, i), C.Cast(plan.lane, v)),
    )  # fmt: skip
    body = (
        C.Decl("uint64_t", "state", C.Name("seed")),
        C.Decl("uint64_t", "span", C.Bin("+", C.Cast("uint64_t", C.Bin("-", hi, lo)), C.UInt(1))),
        C.For("i", C.Bin("<", i, C.Name("len")), loop),
    )
    return C.FuncDef(
        "void",
        "kat_fill",
        (
            C.Param(plan.lane, "*p"),
            C.Param("size_t", "len"),
            C.Param("int64_t", "lo"),
            C.Param("int64_t", "hi"),
            C.Param("int", "kind"),
            C.Param("uint64_t", "seed"),
        ),
        body,
        storage="static",
        doc=(
            "p[0..len) filled with values in [lo, hi], the splitmix64 stream of seed giving x:",
            "kind 0: lo + x mod (hi - lo + 1); 1: all lo; 2: all hi; 3: hi, lo, hi, lo, ...;",
            "4: hi where the top bit of x is set, else lo; 5: lo, lo + 1, lo + 2, ...",
        ),
    )


def next_def() -> C.FuncDef:
    """``kat_next(&state)``: splitmix64."""
    z, state = C.Name("z"), C.Unary("*", C.Name("state"))

    def mix(shift: int, factor: int) -> C.Stmt:
        return C.Assign(z, C.Bin("*", C.Bin("^", z, C.Bin(">>", z, C.Int(shift))),
                                 C.UInt(factor, hex=True)))  # fmt: skip

    body = (
        C.OpAssign("+", state, C.UInt(GOLDEN, hex=True)),
        C.Decl("uint64_t", "z", state),
        mix(30, MIX1),
        mix(27, MIX2),
        C.Return(C.Bin("^", z, C.Bin(">>", z, C.Int(31)))),
    )
    return C.FuncDef(
        "uint64_t",
        "kat_next",
        (C.Param("uint64_t", "*state"),),
        body,
        storage="static",
        doc=("The next value of the splitmix64 stream in *state.",),
    )


def value_def(plan: SelfTest) -> C.FuncDef:
    """``kat_value(v, exact)``: what is compared of an output value."""
    v, r = C.Name("v"), C.Name("r")
    body = (
        C.If(C.Name("exact"), (C.Return(v),)),
        C.Decl("int64_t", "r", C.Bin("%", v, plan.q_macro)),
        C.If(C.Bin("<", r, C.Int(0)), (C.OpAssign("+", r, plan.q_macro),)),
        C.Return(r),
    )
    return C.FuncDef(
        "int64_t",
        "kat_value",
        (C.Param("int64_t", "v"), C.Param("int", "exact")),
        body,
        storage="static",
        doc=("v itself (exact), or its residue in [0, q).",),
    )


def checksum_def(plan: SelfTest) -> C.FuncDef:
    """``kat_checksum(p, exact)``: see :func:`checksum`."""
    h, i = C.Name("h"), C.Name("i")
    value = C.Call("kat_value", (C.Index(C.Name("p"), i), C.Name("exact")))
    body = (
        C.Decl("uint64_t", "h", C.UInt(FNV_OFFSET, hex=True)),
        C.For(
            "i",
            C.Bin("<", i, plan.n_macro),
            (
                C.OpAssign("^", h, C.Cast("uint64_t", value)),
                C.OpAssign("*", h, C.UInt(FNV_PRIME, hex=True)),
                C.OpAssign("^", h, C.Bin(">>", h, C.Int(32))),
            ),
        ),
        C.Return(h),
    )
    return C.FuncDef(
        "uint64_t",
        "kat_checksum",
        (C.Param(f"const {plan.lane}", "*p"), C.Param("int", "exact")),
        body,
        storage="static",
        doc=("A checksum of the n values of p as kat_value compares them.",),
    )


def cache_fill(plan: SelfTest, b: C.Name) -> list[C.Stmt]:
    """C statements that declare ``cache`` and fill it with the K caches of b (in the native
    order by then) by the front end's ``basemul_cache``: what the runner of an op with a
    :data:`CACHE` parameter passes there."""
    per = C.Name(f"{plan.stem.upper()}_CACHE_N")
    i = C.Name("j")
    at = lambda x, m: C.Unary("&", C.Index(x, C.Bin("*", i, m)))  # noqa: E731
    fill = C.CallStmt(
        C.Call(f"{plan.stem}_basemul_cache", (at(C.Name(CACHE), per), at(b, plan.n_macro)))
    )
    return [
        C.Decl(plan.lane, CACHE, None, array=C.format_expr(C.Bin("*", C.Int(K), per))),
        C.For("j", C.Bin("<", i, C.Int(K)), (fill,)),
    ]
