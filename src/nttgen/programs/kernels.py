"""The kernel set of a ring: every entry point, built in dependency order so that each kernel's
input contract is the proven output range of the kernels that feed it.

Entry points (C names ``nttgen_<ring>_<isa>_<op>``):

========== ================================================================================
ntt        in place: standard coefficients -> NTT domain (native order), normal domain
intt       in place: NTT domain -> beta * NTT^-1 (absorbs the beta^-1 of basemul)
basemul    r = a o b * beta^-1 (pointwise, or degree-2 products for incomplete NTTs)
basemul_acc r = sum of k base products * beta^-1 (k >= 1 pairs stored one after another)
basemul_cache cache <- the multiplication cache of b (what every product by b recomputes)
basemul_acc_cached basemul_acc given the k caches of the b_i
reduce     in place: any lane value -> its representative in [0, q)
reduce_centred in place: any lane value -> its representative in [-(q-1)/2, (q-1)/2]
reduce_partial in place: any lane value -> a representative in (-q, q) (one Barrett step)
tomont     in place: x -> x * beta (mod q), into Montgomery form
frommont   in place: x -> x * beta^-1 (mod q), out of Montgomery form
polymul    r = a * b mod (q, x^n + 1), coefficients in [0, q)
========== ================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..dsl.builder import Builder
from ..dsl.ir import Buffer, Function, Value
from ..dsl.schedule import schedule
from ..errors import BoundsError
from ..flows import intt_bound, ntt_bound
from ..interp.cost import count_ops, rank
from ..plan.constants import Arith
from ..plan.layout import MemOrder, PassPlan, plan_forward
from ..plan.ntt import NttAlgebra
from ..rings import Ring
from .build_config import BuildConfig
from .entry_points import OP_INFO
from .fused import pair_slot, program_mul_core, whole_pass
from .inner_product import program_basemul_acc, program_basemul_cache
from .intt_variants import InttVariant, intt_variants
from .lazy import Reducer
from .ntt import Transform, build_permutation, build_transform
from .pointwise import program_basemul, program_reduce, program_scale, reduce_to_standard
from .reduction_choice import ReductionChoice
from .ring_contract import RingContract, publish
from .vector import program_vector

# Bisection steps of the search for the widest NTT-domain range the products accept at no cost
DOMAIN_SEARCH_STEPS = 16

OPS = ("ntt", "intt", "basemul", "basemul_acc", "basemul_cache", "basemul_acc_cached", "reduce",
       "reduce_centred", "reduce_partial", "tomont", "frommont", "to_standard", "from_standard",
       "polymul")  # fmt: skip


def _join(*ranges: tuple[int, int]) -> tuple[int, int]:
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _cheaper(best: Function | None, fn: Function, variant: InttVariant) -> Function:
    """Record ``fn``'s inverse ``variant`` and its rank (:func:`nttgen.interp.cost.rank`)
    and return the cheaper of ``best`` and ``fn``."""
    fn.info["variant"] = variant
    fn.info["rank"] = rank(fn)
    if best is None or fn.info["rank"] < best.info["rank"]:  # type: ignore[operator]
        return fn
    return best


Range = tuple[int, int]


@dataclass
class KernelSet(ReductionChoice):
    """All functions of one ring for one build configuration, with their contracts. The
    ``reference`` set (the portable C's) publishes the ring's contract (``published``, see
    :class:`RingContract`); where ``contract`` is given (every other ISA), each entry point
    accepts at least its input ranges and reduces its outputs into its output ranges."""

    ring: Ring
    config: BuildConfig
    functions: dict[str, Function] = field(default_factory=dict)
    contract: RingContract | None = None
    reference: bool = False
    published: RingContract | None = None
    # entry points built for, and emitted by, another ISA (see nttgen.generate.kernel_set)
    guests: dict[str, str] = field(default_factory=dict)
    # whether the builders handed out now may reduce by barrett_coarse (see _either_reduction)
    _coarse: bool = field(default=False, init=False, repr=False)

    def _owed(self, op: str, buffer: str) -> Range | None:
        """The output range the ring's contract holds ``op`` to (None: no contract); the
        reference set owes the inverse NTT's flow bound alone."""
        if self.reference and op == "intt":
            bound = intt_bound(self.ring.name, self.ring.q, self.ring.lane.bits)
            return None if bound is None else (-bound, bound)
        return self.contract.output(op, buffer) if self.contract else None

    def _accepted(self, op: str, buffer: str, own: Range) -> Range:
        """``own`` widened to the input range the ring's contract asks ``op`` to accept."""
        theirs = self.contract.input(op, buffer) if self.contract else None
        return own if theirs is None else _join(own, theirs)

    @cached_property
    def alg(self) -> NttAlgebra:
        """Twiddles and checks of the ring's NTT."""
        return NttAlgebra(self.ring, self.config.const_mul)

    @property
    def arith(self) -> Arith:
        """Lane arithmetic constants."""
        return self.alg.arith

    @cached_property
    def passes(self) -> list[PassPlan]:
        """The forward transform's pass plan."""
        ring = self.ring
        merge = list(self.config.merge or [1] * ring.depth)
        extra = list(self.config.extra_slots) if self.config.extra_slots else None
        lane_bits = self.config.lanes.bit_length() - 1
        return plan_forward(
            ring.log_n,
            ring.depth,
            lane_bits,
            merge,
            extra,
            class_slots=self.config.class_slots,
            park_bits=self.config.park_bits,
            costs=self.config.move_costs,
            gather=self.config.gathers,
        )

    @property
    def order(self) -> MemOrder:
        """The native NTT-domain order: where the forward transform leaves each position."""
        return self.passes[-1].order_out

    def builder(self, name: str, doc: str, unroll: bool | None = None) -> Builder:
        """A fresh builder for one function of this set, whose static loops are unrolled
        when ``unroll`` is true (default: ``config.unroll``, the transforms' choice)."""
        S = Builder(name, self.arith, self.config.lanes, doc)
        S.unroll_default = self.config.unroll if unroll is None else unroll
        S.coarse_reductions = self._coarse
        return S

    def _intt(
        self,
        variant: InttVariant,
        contract: tuple[int, int],
        name: str,
        to_standard: bool,
        copies: int = 1,
    ) -> Function:
        n, q = self.ring.n, self.ring.q
        fname = f"{name}_pair" if copies == 2 else name
        S = self.builder(fname, OP_INFO[fname].summary)
        a, *also = (S.inout(x, n, contract, doc="NTT domain") for x in "ab"[:copies])
        scale = self.alg.inverse_scale() * self.arith.beta % q
        red = Reducer(S, variant.threshold)
        owed = self._owed(name, "a")

        def last(x: Value) -> Value:
            if to_standard:
                return reduce_to_standard(S, x)
            return x if owed is None else red.fit_to(x, owed)

        build_transform(
            S,
            self.alg,
            self.passes,
            a,
            network=variant.network,
            scale=scale,
            scale_first=variant.scale_first,
            centred_last=variant.centred_last,
            red=red,
            before_store=last if to_standard or owed is not None else None,
            also=also,
        )
        return S.finish(require={"a": (0, q - 1)} if to_standard else None)

    def _best_intt(
        self, contract: tuple[int, int], name: str = "intt", to_standard: bool = False
    ) -> Function:
        """The cheapest inverse NTT over the variants the generator tries (see
        :class:`InttVariant`), ranked by :func:`nttgen.interp.cost.estimated_cycles`, then by
        reductions, then by op count. Every variant is analysed; none is hand-placed.
        ``to_standard`` also reduces the outputs to [0, q) in the last pass."""
        best: Function | None = None
        shoup = self.arith.const_mul != "montgomery"
        for variant in intt_variants(self.ring.q, self.config.intt_networks, shoup):
            try:
                fn = self._either_reduction(
                    lambda v=variant: self._intt(v, contract, name, to_standard), feeds=False
                )
            except BoundsError:  # e.g. a threshold below what a reduction can reach
                continue
            fn.info["network"] = variant.network
            fn.info["scale"] = variant.scale_where
            fn.info["policy"] = variant.policy
            best = _cheaper(best, fn, variant)
        if best is None:
            raise BoundsError(f"{self.ring.name}: no inverse NTT fits the lanes")
        return best

    def _ntt(self, out_of_place: bool, copies: int = 1) -> Function:
        """The forward NTT in place (``ntt``), or from ``a`` into ``r`` (``ntt_from``); with
        ``copies`` = 2, in place on two polynomials at once (``ntt_pair``: ``a`` and ``b``)."""
        n, q = self.ring.n, self.ring.q
        name = "ntt_from" if out_of_place else ("ntt_pair" if copies == 2 else "ntt")
        S = self.builder(name, OP_INFO[name].summary)
        canonical = (-(q - 1), q - 1)
        if out_of_place:
            dst = S.output("r", n, doc="NTT domain")
            src = S.input("a", n, canonical, doc="coefficients")
            also: list[Buffer] = []
        else:
            dst, *also = (S.inout(x, n, canonical, doc="coefficients") for x in "ab"[:copies])
            src = None
        red = Reducer(S)
        owed = self._owed("ntt", "a")

        def last(x: Value) -> Value:
            x = red.fit_for_product(x)
            return x if owed is None else red.fit_to(x, owed)

        build_transform(
            S,
            self.alg,
            self.passes,
            dst,
            network="ct",
            before_store=last,
            red=red,
            src=src,
            also=also,
        )
        return S.finish()

    def _vector(self, op: str) -> None:
        """``<op>_vec`` (see :mod:`nttgen.programs.vector`), by ``<op>_pair`` where
        ``config.paired_transforms`` asks for it. The pair takes the single transform's choice
        of reductions, so that it leaves each polynomial exactly as the single one does."""
        f = self.functions
        pair = None
        single = f["ntt_from"] if op == "ntt" and self.config.shared_forward else f[op]
        coarse = bool(single.info.get("coarse"))
        if self.config.paired_transforms and op == "ntt":
            pair = self._built_with(coarse, lambda: self._ntt(False, copies=2))
        elif self.config.paired_transforms:
            variant, contract = f["intt"].info["variant"], f["intt"].contract.inputs["a"]
            assert isinstance(variant, InttVariant)
            pair = self._built_with(
                coarse, lambda: self._intt(variant, contract, "intt", False, copies=2)
            )
        if pair is not None:
            pair.internal = True
            f[pair.name] = pair
        S = self.builder(f"{op}_vec", OP_INFO[f"{op}_vec"].summary)
        program_vector(S, f[op], pair, "coefficients" if op == "ntt" else "NTT domain")
        f[f"{op}_vec"] = S.finish()

    def _mul_core(self, hat_contract: tuple[int, int], both: bool) -> Function | None:
        """polymul's fused core (see :mod:`nttgen.programs.fused`): r <- NTT^-1(r o NTT(b))
        in [0, q), or with ``both`` r <- NTT^-1(NTT(a) o NTT(b)) (``mul_both``); its inverse
        the cheapest of the variants the generator tries (ranked as in :meth:`_best_intt`);
        None where the transform does not fit one chunk of registers."""
        n, q = self.ring.n, self.ring.q
        whole = whole_pass(self.passes)
        slot = None if whole is None else pair_slot(whole, self.ring.base_degree)
        if whole is None or slot is None:
            return None
        name = "mul_both" if both else "mul_core"

        def core(variant: InttVariant) -> Function:
            S = self.builder(name, OP_INFO[name].summary)
            if both:
                r = S.output("r", n, doc="product")
                a = S.input("a", n, (-(q - 1), q - 1), doc="coefficients")
            else:
                r = S.inout("r", n, hat_contract, doc="a_hat (NTT domain) in, product out")
                a = None
            b = S.input("b", n, (-(q - 1), q - 1), doc="coefficients")
            inverse = Transform(
                S,
                self.alg,
                [whole],
                network=variant.network,
                scale=self.alg.inverse_scale() * self.arith.beta % q,
                scale_first=variant.scale_first,
                centred_last=variant.centred_last,
                red=Reducer(S, variant.threshold),
            )
            program_mul_core(S, self.alg, whole, inverse, slot, r, b, a)
            return S.finish(require={"r": (0, q - 1)})

        best: Function | None = None
        shoup = self.arith.const_mul != "montgomery"
        for variant in intt_variants(q, self.config.intt_networks, shoup):
            try:
                fn = self._either_reduction(lambda v=variant: core(v), feeds=False)
            except BoundsError:
                continue
            best = _cheaper(best, fn, variant)
        if best is not None:
            best.internal = True
        return best

    def _inner_product(
        self,
        name: str,
        hat: Range,
        target: Range,
        cache: Range | None,
        a_range: Range | None = None,
    ) -> Function:
        """``basemul_acc`` (``cache`` None) or ``basemul_acc_cached`` for NTT-domain inputs
        in ``hat`` (a in ``a_range`` where given) and caches in ``cache``, each result reduced
        into ``target``: with exact double-width sums where the analysis accepts them, else
        with lane sums."""
        for wide in (True, False) if self.config.wide_sums else (False,):
            # chunks as a loop: each chunk's loops over k break its straight line anyway, and
            # unrolled, the three copies of a product per chunk made the files up to 1.5
            # times larger
            S = self.builder(name, OP_INFO[name].summary, unroll=False)
            try:
                program_basemul_acc(
                    S,
                    self.alg,
                    self.order,
                    hat,
                    products_outer=self.config.products_outer,
                    target=target,
                    cache_contract=cache,
                    a_contract=a_range,
                    wide=wide,
                    twists=self.config.twist_products,
                    chunks=self.config.product_chunks,
                )
                return S.finish()
            except BoundsError:
                if not wide:
                    raise
        raise AssertionError("unreachable")

    def _products(self, hat: Range) -> tuple[Range, Range, int]:
        """The output ranges of basemul and basemul_acc built for NTT-domain inputs in
        ``hat``, and the reductions both place (a probe of :meth:`_widest_domain`)."""
        products = self.config.unroll_products
        S = self.builder("basemul", "probe", products)
        program_basemul(S, self.alg, self.order, hat)
        one = S.finish()
        acc = self._inner_product("basemul_acc", hat, one.contract.outputs["r"], None)
        reductions = count_ops(one)["reductions"] + count_ops(acc, {"k": 3})["reductions"]
        return one.contract.outputs["r"], acc.contract.outputs["r"], reductions

    def _widest_domain(self, ntt_out: Range, canonical: Range) -> Range:
        """The widest symmetric range the reference's base multiplications accept at no
        cost: no more reductions than for its own NTT's outputs ``ntt_out``, and products
        still inside what its inverse NTT accepts anyway (``canonical`` joined with the
        products of ``ntt_out``), capped by :func:`nttgen.flows.ntt_bound`. Other ISAs'
        NTTs may then leave that much without a final reduction."""
        base = max(-ntt_out[0], ntt_out[1])
        one, acc, cost = self._products(ntt_out)
        room = _join(one, acc, canonical)

        def free(m: int) -> bool:
            try:
                o, a, c = self._products((-m, m))
            except BoundsError:
                return False
            inside = room[0] <= min(o[0], a[0]) and max(o[1], a[1]) <= room[1]
            return inside and c == cost

        lo, hi = base, ntt_bound(self.ring.name, self.ring.q, self.ring.lane.bits)
        if hi <= lo:
            return ntt_out
        if free(hi):
            return (-hi, hi)
        for _ in range(DOMAIN_SEARCH_STEPS):
            mid = (lo + hi) // 2
            if mid == lo:
                break
            lo, hi = (mid, hi) if free(mid) else (lo, mid)
        return _join(ntt_out, (-lo, lo))

    def build(self) -> KernelSet:
        """Build every entry point (see the module docstring)."""
        ring, alg, n, q = self.ring, self.alg, self.ring.n, self.ring.q
        canonical = (-(q - 1), q - 1)
        f = self.functions

        # polymul's helper is the NTT reading its input from another array (no copy). With
        # shared_forward the in-place ntt calls it with the same array twice: exact, because
        # every pass reads each group of positions whole before it stores any of them (each
        # output of a group depends on every input of the group), and the evaluator, which
        # the tests compare with the exact NTT, runs the call on one array.
        if self.config.shared_forward:
            f["ntt_from"] = self._either_reduction(
                lambda: self._ntt(out_of_place=True), owed=self._owed("ntt", "a")
            )
            f["ntt_from"].internal = True
            S = self.builder("ntt", OP_INFO["ntt"].summary)
            a = S.inout("a", n, canonical, doc="coefficients")
            S.call(f["ntt_from"], r=a, a=a)
            f["ntt"] = S.finish()
        else:
            f["ntt"] = self._either_reduction(lambda: self._ntt(out_of_place=False))
        # what this set's own ntt leaves, and what its entry points accept (the ring's
        # contract may ask for more: every ISA's ntt output)
        ntt_out = _join(f["ntt"].contract.outputs["a"], canonical)
        if self.reference:
            hat_in = self._widest_domain(ntt_out, canonical)
        else:
            hat_in = self._accepted("basemul", "a", ntt_out)

        products = self.config.unroll_products

        def basemul() -> Function:
            S = self.builder("basemul", "base multiplication in the NTT domain", products)
            program_basemul(S, alg, self.order, hat_in, target=self._owed("basemul", "r"))
            return S.finish()

        f["basemul"] = self._either_reduction(basemul)

        one = f["basemul"].contract.outputs["r"]
        f["basemul_acc"] = self._either_reduction(
            lambda: self._inner_product(
                "basemul_acc", hat_in, self._owed("basemul_acc", "r") or one, None
            )
        )

        def basemul_cache() -> Function:
            S = self.builder("basemul_cache", OP_INFO["basemul_cache"].summary, products)
            owed = self._owed("basemul_cache", "cache")
            program_basemul_cache(S, alg, self.order, hat_in, owed)
            return S.finish()

        f["basemul_cache"] = self._either_reduction(basemul_cache)
        cache = f["basemul_cache"].contract.outputs["cache"]
        f["basemul_acc_cached"] = self._either_reduction(
            lambda: self._inner_product(
                "basemul_acc_cached",
                hat_in,
                self._owed("basemul_acc_cached", "r") or one,
                self._accepted("basemul_acc_cached", "cache", cache),
                # the rows a cached operand meets are reduced (sampled A, decoded t or s: FIPS
                # 203 and 204 keep them in [0, q)), so its products sum in bigger groups
                self._accepted("basemul_acc_cached", "a", canonical),
            )
        )

        intt_in = _join(
            *(
                f[op].contract.outputs["r"]
                for op in ("basemul", "basemul_acc", "basemul_acc_cached")
            ),
            canonical,
        )
        f["intt"] = self._best_intt(self._accepted("intt", "a", intt_in))

        # The conversions are loops on every ISA: they run once per key or message, not in
        # the inner products, and unrolled they were most of the code of the SIMD files
        # (see heuristic_config)
        centred = ((q - 1) // 2, (q - 1) // 2)
        for name, bound in (
            ("reduce", (0, q - 1)),
            ("reduce_centred", (-centred[0], centred[1])),
            ("reduce_partial", canonical),
        ):
            S = self.builder(name, OP_INFO[name].summary, unroll=False)
            program_reduce(S, n, name)
            f[name] = S.finish(require={"a": bound})

        S = self.builder(
            "tomont", "multiply by beta mod q (into Montgomery form), in place", unroll=False
        )
        program_scale(
            S,
            n,
            self.arith.twisted(self.arith.beta),
            "x -> x*beta (mod q)",
            self._owed("tomont", "a"),
        )
        f["tomont"] = S.finish()

        S = self.builder(
            "frommont",
            "multiply by beta^-1 mod q (out of Montgomery form), in place",
            unroll=False,
        )
        program_scale(
            S, n, self.arith.twisted_raw(1), "x -> x/beta (mod q)", self._owed("frommont", "a")
        )
        f["frommont"] = S.finish()

        if not self.order.is_identity:
            for name, to_std in (("to_standard", True), ("from_standard", False)):
                S = self.builder(name, OP_INFO[name].summary, unroll=False)
                a = S.inout("a", n, (S.lane.min, S.lane.max), doc="NTT domain")
                build_permutation(S, self.passes, a, to_standard=to_std)
                f[name] = S.finish()

        if "ntt_from" not in f:
            f["ntt_from"] = self._either_reduction(
                lambda: self._ntt(out_of_place=True), owed=self._owed("ntt", "a")
            )
            f["ntt_from"].internal = True
        # polymul's helper: the inverse reducing its outputs to [0, q) in its last pass (no
        # separate reduction), where no fused core takes its place; the same variant as
        # intt, so the two share their twiddle table
        variant = f["intt"].info["variant"]
        assert isinstance(variant, InttVariant)
        both = self.config.fuse_forwards
        core = self._mul_core(ntt_out, both) if self.config.fuse_polymul else None
        if core is not None:
            f[core.name] = core
        else:
            f["intt_reduce"] = self._either_reduction(
                lambda: self._intt(variant, intt_in, "intt_reduce", True), feeds=False
            )
            f["intt_reduce"].internal = True

        S = self.builder("polymul", "r = a*b mod (q, x^n + 1), coefficients in [0, q)")
        r = S.output("r", n, doc="product, standard order, in [0, q)")
        a = S.input("a", n, canonical, doc="coefficients")
        b = S.input("b", n, canonical, doc="coefficients")
        if core is not None and both:
            S.call(core, r=r, a=a, b=b)
        elif core is not None:  # no scratch array: see nttgen.programs.fused
            S.call(f["ntt_from"], r=r, a=a)
            S.call(core, r=r, b=b)
        else:
            ta = S.local("a_hat", n)
            tb = S.local("b_hat", n)
            S.call(f["ntt_from"], r=ta, a=a)
            S.call(f["ntt_from"], r=tb, a=b)
            S.call(f["basemul"], r=r, a=ta, b=tb)
            S.call(f["intt_reduce"], a=r)
        f["polymul"] = S.finish(require={"r": (0, q - 1)})
        for op in ("ntt", "intt"):
            self._vector(op)
        if self.reference:
            self.published = publish(self.ring, self.functions, hat_in, intt_in)
        if self.config.schedule == "critical_path":
            for fn in f.values():
                schedule(fn, self.config.live_limit)
        del ring
        return self


def build_kernels(
    ring: Ring,
    config: BuildConfig | None = None,
    contract: RingContract | None = None,
    reference: bool = False,
) -> KernelSet:
    """Build and return the kernel set of ``ring``: the ``reference`` set publishes the ring's
    contract, any other meets ``contract`` where one is given (see :class:`KernelSet`)."""
    return KernelSet(ring, config or BuildConfig(), contract=contract, reference=reference).build()
