"""The intermediate representation programs are recorded into.

A :class:`Function` is a list of statements over SSA :class:`Value` s of one lane type, each a
vector of L lanes (L is fixed per build: 1 for portable C, 16 for AVX2 16-bit lanes, ...).
Memory is addressed by :class:`Affine` expressions of loop counters only (with at most one
offset read from a public table by a loop counter), so no address can depend on data. Loops
have compile-time trip counts, or a count read from a public scalar parameter. Mutable
:class:`Var` s carry values across iterations of runtime loops.

The IR is produced once per kernel by :class:`nttgen.dsl.builder.Builder` (which runs the
tagless-final program and makes the analysis-driven decisions) and then replayed into every
interpreter (:func:`nttgen.dsl.replay.replay`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..intervals import Bound
from ..lanes import LaneType


@dataclass(eq=False)
class Value:
    """An SSA vector value. ``hint`` is a readable name stem for emitters (``t``, ``zeta``);
    ``pair_sum``: a value of L/2 double-width lanes (see the vocabulary's ``pair_madd``)."""

    lane: LaneType
    hint: str
    id: int
    pair_sum: bool = False

    def kind_for(self, narrow: LaneType) -> str:
        """The vocabulary kind of this value in a program whose lanes are ``narrow``."""
        if self.pair_sum:
            return "p"
        return "n" if self.lane == narrow else "w"

    def __repr__(self) -> str:
        return f"%{self.hint}{self.id}"


@dataclass(eq=False)
class LoopVar:
    """A loop counter. Its value ranges over [0, trip count)."""

    hint: str
    id: int

    def __repr__(self) -> str:
        return f"{self.hint}{self.id}"


@dataclass(eq=False)
class ScalarParam:
    """A public size_t parameter of a kernel (e.g. the number k of products to accumulate)."""

    name: str
    min_value: int = 1
    doc: str = ""


@dataclass(frozen=True)
class Lookup:
    """``table.values[var]``: an element offset read, by a loop counter, from a table of
    offsets fixed at generation time (public: no address depends on data). For index maps
    that are not affine, such as a Good–Thomas output order."""

    table: Table
    var: LoopVar


@dataclass(frozen=True)
class Affine:
    """const + sum(coef * var) [+ lookup]: an element index that depends on loop counters
    only (``lookup``: at most one offset read from a public table by a loop counter)."""

    const: int = 0
    terms: tuple[tuple[LoopVar, int], ...] = ()
    lookup: Lookup | None = None

    @staticmethod
    def of(x: Affine | int | LoopVar) -> Affine:
        """Lift an int or a loop counter to an affine expression."""
        if isinstance(x, Affine):
            return x
        if isinstance(x, LoopVar):
            return Affine(0, ((x, 1),))
        return Affine(int(x))

    @staticmethod
    def looked_up(table: Table, var: LoopVar) -> Affine:
        """The index ``table.values[var]`` (an offsets table, see :meth:`Builder.offsets`)."""
        return Affine(0, (), Lookup(table, var))

    def __add__(self, other: Affine | int | LoopVar) -> Affine:
        o = Affine.of(other)
        if self.lookup is not None and o.lookup is not None:
            raise ValueError("an index takes at most one table lookup")
        coefs: dict[LoopVar, int] = {}
        order: list[LoopVar] = []
        for v, c in (*self.terms, *o.terms):
            if v not in coefs:
                order.append(v)
                coefs[v] = 0
            coefs[v] += c
        terms = tuple((v, coefs[v]) for v in order if coefs[v])
        return Affine(self.const + o.const, terms, self.lookup or o.lookup)

    __radd__ = __add__

    def __mul__(self, k: int) -> Affine:
        if not isinstance(k, int):
            raise TypeError("affine indices scale by integers only")
        if self.lookup is not None and k != 1:
            raise ValueError("a table lookup does not scale: store the offsets scaled")
        if k == 0:
            return Affine(0)
        return Affine(self.const * k, tuple((v, c * k) for v, c in self.terms), self.lookup)

    __rmul__ = __mul__

    def evaluate(self, env: Mapping[LoopVar, int]) -> int:
        """The index for concrete counter values."""
        base = self.const + sum(c * env[v] for v, c in self.terms)
        if self.lookup is None:
            return base
        offsets, i = self.lookup.table.values, env[self.lookup.var]
        if not 0 <= i < len(offsets):
            raise ValueError(
                f"offsets table {self.lookup.table.name} has {len(offsets)} entries, "
                f"read at {i}: its loop runs past it"
            )
        return base + offsets[i]

    @property
    def loop_vars(self) -> tuple[LoopVar, ...]:
        """The counters this index depends on."""
        own = tuple(v for v, _ in self.terms)
        if self.lookup is None or self.lookup.var in own:
            return own
        return (*own, self.lookup.var)


@dataclass(frozen=True)
class Count:
    """A loop trip count: ``const`` alone, or for a runtime count the number of values
    var = 0, 1, ... with ``step * var + offset < param + const`` and, where ``cap`` is given,
    var < cap: ``param + const`` (the defaults), ceil((param + const) / step) (groups of
    ``step``), or min(cap, param + const - offset) (the rest of a group that starts at
    ``offset``, an expression of enclosing loop counters). A capped count has a static
    maximum, so the analysis runs its body at most ``cap`` times instead of widening."""

    const: int
    param: ScalarParam | None = None
    step: int = 1
    offset: Affine = field(default_factory=Affine)
    cap: int | None = None

    @property
    def static(self) -> bool:
        """Whether the count is known at generation time."""
        return self.param is None

    def trips(self, param: int, env: Mapping[LoopVar, int] | None = None) -> int:
        """The trip count of a runtime count for the parameter's value ``param`` and the
        enclosing counters ``env`` (those ``offset`` reads)."""
        room = param + self.const - self.offset.evaluate(env or {})
        n = max(0, -(-room // self.step))
        return n if self.cap is None else min(n, self.cap)


@dataclass(eq=False)
class Buffer:
    """A polynomial-sized array of lanes: a kernel parameter or a local scratch array.

    ``role`` is ``in`` (read only), ``out`` (written), ``inout`` or ``local``. Inputs carry a
    ``contract``: the inclusive range every element is promised to lie in. ``length`` counts
    elements; ``per_param`` makes the length ``length * param`` (k polynomials)."""

    name: str
    lane: LaneType
    length: int
    role: str
    contract: tuple[int, int] | None = None
    per_param: ScalarParam | None = None
    doc: str = ""

    @property
    def readonly(self) -> bool:
        """Whether the kernel never writes this buffer."""
        return self.role == "in"


@dataclass(eq=False)
class Table:
    """A constant table (twiddles, twisted factors), laid out in consumption order so every
    load reads the next rows. ``notes`` maps a start index to a comment for that row group."""

    name: str
    lane: LaneType
    values: tuple[int, ...]
    notes: tuple[tuple[int, str], ...] = ()
    doc: str = ""
    # Copied into the function's stack frame on entry, the loads then reading the copy. Static
    # data lies at an offset from the caller's stack that nobody controls; where a loop
    # stores to the stack between its loads of a table, a load whose address matches a recent
    # store's in the low 12 bits waits for it (4K aliasing). The copy lies at a fixed offset
    # from the function's other stack data instead (see docs/design.md).
    in_frame: bool = False
    # Values one vector each, each over all of its vector's lanes: the program's broadcast
    # constants (see nttgen.emit.const_loads) or broadcast table entries (see
    # nttgen.emit.vector_broadcasts), read where they are used, as memory operands.
    constants: bool = False


Memory = Buffer | Table


@dataclass(eq=False)
class Var:
    """A mutable register: declared with an initial value, reassigned inside loops."""

    lane: LaneType
    hint: str
    id: int


@dataclass(eq=False)
class Op:
    """results = kind(args, **attrs)."""

    kind: str
    results: tuple[Value, ...]
    args: tuple[Value, ...]
    attrs: tuple[tuple[str, int], ...] = ()
    tag: str = ""


@dataclass(eq=False)
class Load:
    """result = src[index .. index + L - 1], or src[index] in every lane (``broadcast``), or
    lane k = src[index + lanes_at[k]] (a gather by offsets fixed at generation time)."""

    result: Value
    src: Memory
    index: Affine
    tag: str = ""
    broadcast: bool = False
    lanes_at: tuple[int, ...] | None = None


@dataclass(eq=False)
class Store:
    """dst[index .. index + L - 1] = value, or dst[index + lanes_at[k]] = lane k (a scatter by
    offsets fixed at generation time)."""

    dst: Buffer
    index: Affine
    value: Value
    tag: str = ""
    lanes_at: tuple[int, ...] | None = None


@dataclass(eq=False)
class Loop:
    """for var in [0, count): body. ``unroll`` asks emitters to unroll a static loop."""

    var: LoopVar
    count: Count
    body: list[Stmt]
    unroll: bool = False
    tag: str = ""


@dataclass(eq=False)
class VarDef:
    """Declare a mutable register with an initial value."""

    var: Var
    init: Value


@dataclass(eq=False)
class VarSet:
    """Assign a mutable register."""

    var: Var
    value: Value


@dataclass(eq=False)
class VarGet:
    """Read a mutable register."""

    result: Value
    var: Var


@dataclass(eq=False)
class Call:
    """Call another kernel function; ``args`` bind the callee's parameters by name."""

    callee: Function
    args: tuple[tuple[str, Buffer | ScalarParam | int], ...]
    tag: str = ""


@dataclass(eq=False)
class CallEach:
    """Call kernel functions on the polynomials of an array of ``count`` polynomials, one
    group after another: ``calls`` is ((callee, width), ...) with widths 2 then 1, or 1 alone;
    each callee in turn runs on the next ``width`` polynomials of ``array`` for as long as
    that many are left, its ``width`` buffer parameters (one polynomial each) bound to them in
    order. The groups never overlap, so every polynomial is read and written by one call."""

    count: ScalarParam
    calls: tuple[tuple[Function, int], ...]
    array: Buffer
    tag: str = ""

    @property
    def args(self) -> tuple[tuple[str, Buffer], ...]:
        """The array, as the caller's argument (what a statement passes, by name)."""
        return ((self.array.name, self.array),)

    def groups(self, k: int) -> list[tuple[Function, int, int]]:
        """(callee, first polynomial, width) of every call, in order, for ``count`` = k."""
        out: list[tuple[Function, int, int]] = []
        start = 0
        for callee, width in self.calls:
            while start + width <= k:
                out.append((callee, start, width))
                start += width
        return out


@dataclass(eq=False)
class Comment:
    """A comment that emitters copy into generated code."""

    text: str


Stmt = Op | Load | Store | Loop | VarDef | VarSet | VarGet | Call | CallEach | Comment


@dataclass
class Contract:
    """What a kernel function promises: per buffer parameter, the inclusive range of every
    element on entry (inputs) and on exit (outputs), as the analysis proved them."""

    inputs: dict[str, tuple[int, int]] = field(default_factory=dict)
    outputs: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(eq=False)
class Function:
    """One kernel entry point (or an internal helper) in IR form."""

    name: str
    lanes: int
    lane: LaneType
    params: list[Buffer | ScalarParam]
    body: list[Stmt]
    locals: list[Buffer] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    doc: str = ""
    contract: Contract = field(default_factory=Contract)
    bounds: dict[Value, Bound] = field(default_factory=dict)
    output_bounds: dict[str, Bound] = field(default_factory=dict)
    reductions: int = 0
    info: dict[str, object] = field(default_factory=dict)
    internal: bool = False  # a static helper of the file, not an entry point
    # Every call passes a different array to each buffer parameter (the builder checks it at
    # each call), so the C declares them ``restrict``: compilers may then reorder and
    # vectorize the loads and stores without run-time overlap checks.
    distinct_buffers: bool = False

    def param(self, name: str) -> Buffer | ScalarParam:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}")

    @property
    def buffers(self) -> list[Buffer]:
        """The buffer parameters, in order."""
        return [p for p in self.params if isinstance(p, Buffer)]


def walk(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement of a body, depth first, loops before their bodies."""
    for s in body:
        yield s
        if isinstance(s, Loop):
            yield from walk(s.body)
