"""The three NTRU Prime multiplication pipelines, built from checked ring maps.

A :class:`Pipeline` is a tree of ring maps from Z_q[x]/(g) down to small leaf rings, one
:class:`~.basecase.BaseMul` per leaf, and the final reduction modulo x^p - x - 1:

    polymul(a, b) = reduce_{x^p - x - 1}( T^-1( basemul_i( T(a)_i, T(b)_i ) ) )

where T is the tree's forward map. Since deg a, deg b < p and deg g >= 2p - 1, the product
computed in Z_q[x]/(g) is the integer-polynomial product a*b mod q, so the result is exact.

Pipelines (sizes from :mod:`.choose`; shown for p = 761, q = 4591):

``good-schoenhage-bruun``
    SchoenhageMap(m=16, 3 x 32): x^1536 - 1 -> 96 x (x^32 + 1), then on each piece the Bruun tree
    x^32 + 1 -> 2 x (x^16 +- e x^8 + 1) -> 4 x (x^8 + alpha x^4 + 1): 384 leaves of degree 8.
``good-rader-bruun``
    CyclotomicGoodThomasMap(m=16, 17 x 3 x 2): Phi_17(x^96) = (x^1632 - 1)/(x^96 - 1) -> 96 x
    (x^16 - t), the pieces with k_17 != 0, each split once (CooleyTukeyMap when t is a square,
    BruunMap otherwise): 192 leaves of degree 8. Where the product does not fit below
    Phi_r's degree, GoodThomasMap on the whole x^(96 r) - 1, whose 6 DC pieces of degree 16
    stay unsplit (unless ``split_dc``).
``schoenhage-nussbaumer``
    TruncatedSchoenhageMap(m=32, l=32): (x^1024 + 1)(x^512 - 1) -> 48 x (x^64 + 1), then
    NussbaumerMap(k=8, r=8) on each: 768 leaves y^8 + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from ...errors import FactorisationError, InputShapeError, MapError
from .base import RingMap
from .basecase import BaseMul, Method
from .bruun import BruunMap, bruun_tree
from .choose import GRB, GSB, SN, PipelinePlan, plan_pipeline
from .compose import MapTree
from .cooley_tukey import CooleyTukeyMap
from .cost import Cost, sink
from .good_thomas import CyclotomicGoodThomasMap, GoodThomasMap
from .modarith import is_square
from .nussbaumer import NussbaumerMap
from .polys import Modulus, centred_list, describe, ntru_prime_modulus, pad
from .schoenhage import SchoenhageMap, TruncatedSchoenhageMap


def reduce_ntru(c: Sequence[int], p: int, q: int, ctr: Cost | None = None) -> list[int]:
    """c mod (x^p - x - 1, q) for len(c) <= 2p - 1: from the top, x^i = x^(i-p) (x + 1), i.e.
    c[i-p] += c[i] and c[i-p+1] += c[i] for i = 2p-2 down to p (2 adds each, 2(p-1) in all).
    Returns p coefficients in [0, q)."""
    if len(c) > 2 * p - 1:
        raise InputShapeError(f"reduce_ntru takes at most 2p-1 = {2 * p - 1} coefficients")
    k = sink(ctr)
    out = [x % q for x in c] + [0] * max(0, 2 * p - 1 - len(c))
    for i in range(2 * p - 2, p - 1, -1):
        out[i - p] = (out[i - p] + out[i]) % q
        out[i - p + 1] = (out[i - p + 1] + out[i]) % q
        k.tick("add", 2)
        out[i] = 0
    return out[:p]


class Pipeline:
    """A multiplier for Z_q[x]/(x^p - x - 1): the ring-map ``tree`` (source g, see ``plan``),
    a base multiplication per leaf and the final reduction. Build with :func:`build_pipeline`."""

    def __init__(self, plan: PipelinePlan, tree: RingMap, method: Method = "schoolbook") -> None:
        self.plan, self.tree, self.method = plan, tree, method
        self.name, self.p, self.q = plan.name, plan.p, plan.q
        self.ring: Modulus = ntru_prime_modulus(plan.p, plan.q)
        if tree.source_degree < 2 * plan.p - 1:  # pragma: no cover - guaranteed by the plan
            raise InputShapeError(f"{plan.name}: deg g = {tree.source_degree} < 2p-1")
        muls: dict[Modulus, BaseMul] = {}
        for t in tree.targets:
            if t not in muls:
                muls[t] = BaseMul(plan.q, t, method)
        self.bases: tuple[BaseMul, ...] = tuple(muls[t] for t in tree.targets)

    # -- the multiplication ------------------------------------------------------------------
    def forward(self, a: Sequence[int], ctr: Cost | None = None) -> tuple[list[int], ...]:
        """The leaves' parts of ``a`` (at most p coefficients, any ints)."""
        return self.tree.forward(pad(a, self.p, self.q), ctr)

    def base_multiply(
        self, x: Sequence[Sequence[int]], y: Sequence[Sequence[int]], ctr: Cost | None = None
    ) -> list[list[int]]:
        """Leafwise products x_i * y_i mod leaf modulus i."""
        return [b.mul(u, v, ctr) for b, u, v in zip(self.bases, x, y, strict=True)]

    def inverse(self, parts: Sequence[Sequence[int]], ctr: Cost | None = None) -> list[int]:
        """The element of Z_q[x]/(g) (deg g coefficients) whose leaves are ``parts``; valid for
        products of forward images (the tree may contain embeddings)."""
        return self.tree.inverse(parts, ctr)

    def polymul(self, a: Sequence[int], b: Sequence[int], ctr: Cost | None = None) -> list[int]:
        """a * b mod (q, x^p - x - 1) for a, b of at most p coefficients (lowest first, any
        ints): p coefficients, centred in [-(q-1)/2, (q-1)/2]."""
        c = self.inverse(self.base_multiply(self.forward(a, ctr), self.forward(b, ctr), ctr), ctr)
        if any(c[2 * self.p - 1 :]):  # pragma: no cover - would mean a wrong map
            raise FactorisationError(f"{self.name}: product has degree >= 2p-1")
        return centred_list(reduce_ntru(c[: 2 * self.p - 1], self.p, self.q, ctr), self.q)

    def polymul_small(
        self, a: Sequence[int], s: Sequence[int], ctr: Cost | None = None
    ) -> list[int]:
        """a * s mod (q, x^p - x - 1) for s with coefficients in {-1, 0, 1} (at most p of them;
        raises :class:`InputShapeError` otherwise); same result and layout as :meth:`polymul`.

        Everything is shared with :meth:`polymul`: the same maps, constants, leaves, base
        multiplications and reduction, hence the same :meth:`cost`. None of these maps exploits
        small inputs in its operation count (a vectorised program can use that the forward
        image of s has smaller bounds, which affects reductions, not counts)."""
        if any(x not in (-1, 0, 1) for x in s):
            raise InputShapeError(f"{self.name}: polymul_small needs s with coefficients in -1..1")
        return self.polymul(a, s, ctr)

    # -- cost and description ----------------------------------------------------------------
    def cost_breakdown(self) -> dict[str, dict[str, int]]:
        """Operation counts per part: "forward" (one operand), "base" (all leaf products),
        "inverse", "reduce" (mod x^p - x - 1) and "total" = 2 forward + base + inverse +
        reduce."""
        fwd, inv = self.tree.forward_cost(), self.tree.inverse_cost()
        base = Cost()
        for b in self.bases:
            base = base + b.cost()
        red = Cost()
        reduce_ntru([0] * (2 * self.p - 1), self.p, self.q, red)
        total = fwd * 2 + base + inv + red
        return {
            "forward": fwd.as_dict(),
            "base": base.as_dict(),
            "inverse": inv.as_dict(),
            "reduce": red.as_dict(),
            "total": total.as_dict(),
        }

    def cost(self) -> dict[str, int]:
        """Total operation counts of one :meth:`polymul` (see :meth:`cost_breakdown`)."""
        return self.cost_breakdown()["total"]

    def leaf_histogram(self) -> dict[int, int]:
        """{leaf degree: number of leaves}."""
        out: dict[int, int] = {}
        for t in self.tree.targets:
            out[len(t) - 1] = out.get(len(t) - 1, 0) + 1
        return dict(sorted(out.items()))

    def describe(self) -> str:
        """A multi-line summary: plan note, map tree and leaves."""
        leaves = ", ".join(f"{n} x degree {d}" for d, n in self.leaf_histogram().items())
        return (
            f"{self.name} for p={self.p}, q={self.q}: g = {self.plan.modulus}\n"
            f"{self.plan.note}\nleaves: {leaves} ({self.method})\n{self.tree.describe()}"
        )


def _good_schoenhage_bruun(plan: PipelinePlan) -> RingMap:
    q, m, ell = plan.q, plan.sizes["m"], plan.sizes["l"]
    root = SchoenhageMap(q, m, ell, odd=plan.sizes["odd"])
    leaf = bruun_tree(q, 2 * m, 0, 1, 8)  # x^2m + 1 = x^2m + 0 x^m + 1
    return MapTree(root, [leaf] * len(root.targets), name=f"{GSB}(p={plan.p})")


def _good_rader_bruun(plan: PipelinePlan, split_dc: bool = False) -> RingMap:
    q, m, r = plan.q, plan.sizes["m"], plan.sizes["r"]
    root: GoodThomasMap | CyclotomicGoodThomasMap
    if plan.sizes["cyclotomic"]:
        root = CyclotomicGoodThomasMap(q, m, (r, 3, 2))
    else:
        root = GoodThomasMap(q, m, (r, 3, 2))
    kids: list[RingMap | None] = []
    for k, t in root.points:
        if k[0] == 0 and not split_dc:
            kids.append(None)  # Rader's DC term: x^16 - (6th root of unity), kept whole
        elif is_square(t, q):
            kids.append(CooleyTukeyMap.binomial(q, m // 2, t))
        else:
            kids.append(BruunMap(q, m, 0, -t))  # x^16 - t = x^16 + 0 x^8 + (-t)
    return MapTree(root, kids, name=f"{GRB}(p={plan.p})")


def _schoenhage_nussbaumer(plan: PipelinePlan) -> RingMap:
    q, s = plan.q, plan.sizes
    root: RingMap
    if s["truncated"]:
        root = TruncatedSchoenhageMap(q, s["m"], s["l"])
    else:
        root = SchoenhageMap(q, s["m"], s["l"])
    leaf = NussbaumerMap(q, s["k"], s["r"])
    return MapTree(root, [leaf] * len(root.targets), name=f"{SN}(p={plan.p})")


@cache
def build_pipeline(
    name: str, p: int, q: int, method: Method = "schoolbook", split_dc: bool = False
) -> Pipeline:
    """The pipeline ``name`` for Z_q[x]/(x^p - x - 1), with base multiplications by ``method``
    ("schoolbook" or "karatsuba"). ``split_dc`` (Good–Rader–Bruun only) also splits the 6
    degree-16 DC pieces. Raises the typed error of the first rule broken (see
    :func:`~.choose.plan_pipeline`); a rule of one of its maps comes with the pipeline's name,
    p, q and g. Cached."""
    plan = plan_pipeline(name, p, q)
    try:
        if name == GSB:
            tree = _good_schoenhage_bruun(plan)
        elif name == GRB:
            tree = _good_rader_bruun(plan, split_dc)
        else:
            tree = _schoenhage_nussbaumer(plan)
        return Pipeline(plan, tree, method)
    except MapError as exc:
        # a map's own rule ("truncated Schönhage needs l >= 4") names the map's sizes, which
        # the user never chose: say which pipeline, (p, q) and g met it, keeping the type
        raise type(exc)(f"{name} for p={p}, q={q} (g = {plan.modulus}): {exc}") from exc


def leaf_moduli(pipeline: Pipeline) -> list[str]:
    """The leaves' moduli as text, in leaf order."""
    return [describe(t, pipeline.q) for t in pipeline.tree.targets]
