"""Which pipelines exist for an NTRU Prime ring Z_q[x]/(x^p - x - 1), and with which sizes.

Every pipeline multiplies in a larger ring Z_q[x]/(g) with deg g >= 2p - 1 (so the product of two
polynomials of degree < p is computed exactly) and then reduces mod x^p - x - 1. The sizes are
derived from p; the rules come from q:

``good-schoenhage-bruun`` (g = x^N - 1, N = 3 * 2^k, the smallest such N >= 2p - 1)
    Schönhage with blocks of m = 16 (more if 2^k > 1024) and l = 2^k/m, Good–Thomas 3 x l on the
    block index, then Bruun from x^2m + 1 to degree 8. Needs a cube root of unity (3 | q - 1) and
    Bruun's splits: q = 3 (mod 4) [BGM93] and, to reach degree 8 from x^32 + 1, q = 7 (mod 8).
``good-rader-bruun`` (g = x^N - 1, N = 16 * 6 * r)
    Good–Thomas 16 x (r x 3 x 2) with Rader's algorithm on the r-axis; r is the smallest prime
    >= 5 dividing q - 1 with N >= 2p - 1 (r = 17 for q = 4591). Needs a cube root of unity and a
    primitive r-th root; the 102 (in general 6r) pieces x^16 - t split into degree 8 by
    Cooley–Tukey when t is a square and by Bruun otherwise, which always works: t has order
    dividing 6r, so if q = 1 (mod 4) every t is a square, and if q = 3 (mod 4) then -t is a square
    and one of +-2 sqrt(-t) is a square. The 6 pieces of the Rader DC term (t a 6th root of
    unity) stay degree 16, as in the slides.
``schoenhage-nussbaumer`` (the [BBCT22] baseline)
    g = (x^1024 + 1)(x^512 - 1) (truncated Schönhage, m = l = 32) when 1536 >= 2p - 1, and in
    general the smaller of the truncated size 1.5 * 4^j and the cyclic size 2^k (full Schönhage,
    e.g. x^2048 - 1 for p = 857, because 1536 < 2p - 1 = 1713 and the next truncated size is
    6144); then Nussbaumer from x^2m + 1 to y^r + 1 (x^64 + 1 -> 16 x (y^8 + 1)). Needs nothing
    but 2 invertible: it exists for every odd prime q.

Common rules: 3 <= p <= :data:`MAX_P`, p prime (NTRU Prime's ring), q an odd prime below 2^31,
and deg g <= :func:`degree_bound` (p) (at most :data:`MAX_BLOWUP` times 2p - 1), so that every
plan, the checks of its maps and its programs stay proportionate to the product they compute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...arith import factorize, is_prime, nearest_prime_in_progression
from ...errors import (
    NoPipelineError,
    NoRootOfUnityError,
    NoSquareRootError,
    ParameterError,
    SizeError,
    UnknownNameError,
)
from .modarith import require_prime_modulus, root_name

GSB = "good-schoenhage-bruun"
GRB = "good-rader-bruun"
SN = "schoenhage-nussbaumer"
PIPELINE_NAMES: tuple[str, ...] = (GSB, GRB, SN)

BLOCK = 16
"""Block size of Good–Rader–Bruun and Schönhage's default block (gives x^32 + 1 pieces)."""
LEAF = 8
"""Degree of the base multiplications the Bruun and Nussbaumer stages split down to."""


@dataclass(frozen=True)
class PipelinePlan:
    """The sizes of one pipeline for (p, q): what :func:`~.pipelines.build_pipeline` builds.

    ``degree`` is deg g (>= 2p - 1), ``modulus`` g as text, ``sizes`` the parameters of the
    stages (names depend on the pipeline), ``note`` one paragraph for people."""

    name: str
    p: int
    q: int
    degree: int
    modulus: str
    sizes: dict[str, int] = field(default_factory=dict)
    note: str = ""


MAX_P = 1277
"""Largest p a plan is made for: sntrup1277's, the largest NTRU Prime parameter set. The plans
are checked by exact pure-Python runs of their maps, whose time grows with deg g (up to
:data:`MAX_BLOWUP` (2p - 1)) and, for Good–Rader–Bruun, with Rader's prime; up to this p every
plan is built in seconds, while an unbounded p (x^100003 - x - 1) ran for hours."""

MAX_PLAN_Q = 1 << 31
"""q < 2^31: what 32-bit lanes admit (the NTRU Prime rings themselves take q < 2^15); it also
keeps factoring q - 1 (trial division) instant."""

MAX_BLOWUP = 3
"""A pipeline is refused when deg g > MAX_BLOWUP * (2p - 1) (above :data:`SMALL_DEGREE`).

The product a pipeline computes has 2p - 1 coefficients; the ring it computes in is a means,
and its size bounds everything built from it: the pure-Python checks of the maps (quadratic in
Rader's prime), the plan's op counts and the generated program. Good–Rader–Bruun takes the
smallest suitable prime r dividing q - 1, which a q can make huge: q = 32749, p = 761 gives
r = 2729 and deg g = 96 * 2728 = 261,888, 172 times 2p - 1, whose check ran for minutes.

3 keeps every pipeline of sntrup761 (at most 1.01: Phi_17(x^96)) and of the other rings the
tests and docs use (p = 857, q = 5167: Good–Rader–Bruun on Phi_41(x^96), 2.24; the Schönhage
sizes are below 2 by construction, above SMALL_DEGREE). It refuses sntrup1277's
Good–Rader–Bruun (Phi_101(x^96), 3.76), which takes over 5 times the additions of its
Good–Schönhage–Bruun and 7 s to check: beyond 3 the larger ring costs more than Rader saves."""

SMALL_DEGREE = 2048
"""Below this degree any pipeline is admitted whatever its blow-up: a small p's smallest
Good–Rader–Bruun ring (96 (r - 1) for the smallest suitable r, 1536 for q = 4591) is many times
2p - 1 yet cheap to build and check (well under a second)."""


def degree_bound(p: int) -> int:
    """The largest deg g a pipeline for x^p - x - 1 may have: MAX_BLOWUP * (2p - 1), at least
    SMALL_DEGREE (see :data:`MAX_BLOWUP`)."""
    return max(MAX_BLOWUP * (2 * p - 1), SMALL_DEGREE)


def _check_degree(name: str, p: int, q: int, degree: int, why: str) -> None:
    """Raise :class:`SizeError` when ``degree`` (deg g of pipeline ``name``, made so by
    ``why``) exceeds :func:`degree_bound` (p)."""
    bound = degree_bound(p)
    if degree > bound:
        raise SizeError(
            f"{name}: for p={p}, q={q} {why} gives deg g = {degree}, "
            f"{degree / (2 * p - 1):.1f} times 2p-1 = {2 * p - 1}; a pipeline may compute in a "
            f"ring of degree at most max({MAX_BLOWUP}(2p-1), {SMALL_DEGREE}) = {bound}"
        )


def _nearest_primes_text(x: int, lo: int, hi: int) -> str:
    """The primes in [lo, hi) nearest to x below and above, other than x (a bounded search:
    at most 2,048 candidates each way), as text; ``none`` when there are none."""
    found = [
        nearest_prime_in_progression(min(x - 1, hi - 1), -1, lo, hi, window=2048),
        nearest_prime_in_progression(max(x + 1, lo), 1, lo, hi, window=2048),
    ]
    return ", ".join(str(y) for y in found if y is not None) or "none"


def check_p_size(p: int) -> None:
    """Raise :class:`SizeError` unless p <= :data:`MAX_P`: checked before any other rule, so
    that a huge p is refused at once (primality and plans of it would take long)."""
    if p > MAX_P:
        raise SizeError(
            f"p={p} is too large: NTRU Prime rings are planned for p <= {MAX_P} (sntrup1277, "
            f"the largest parameter set)"
        )


def check_parameters(p: int, q: int) -> None:
    """Raise :class:`ParameterError` or :class:`SizeError` naming the rule unless 3 <= p <=
    :data:`MAX_P`, p prime (x^p - x - 1 of NTRU Prime), and q an odd prime below
    :data:`MAX_PLAN_Q`. Sizes come before primality, so any (p, q) is answered at once."""
    if not isinstance(p, int):
        raise ParameterError(f"p={p!r} is not an integer: x^p - x - 1 needs p a prime")
    if not isinstance(q, int):
        raise ParameterError(f"q={q!r} is not an integer: Z_q needs q an odd prime")
    check_p_size(p)
    if q >= MAX_PLAN_Q:
        raise ParameterError(f"q={q} is too large: the ring maps' moduli are below 2^31")
    if p < 3:
        raise SizeError(f"p={p} is too small: NTRU Prime's ring x^p - x - 1 needs p a prime >= 3")
    if not is_prime(p):
        raise ParameterError(
            f"p={p} is not prime: NTRU Prime's ring x^p - x - 1 needs p prime; nearest: "
            f"{_nearest_primes_text(p, 3, MAX_P + 1)}"
        )
    require_prime_modulus(q)


def _factor_text(m: int) -> str:
    return " * ".join(f"{r}^{e}" if e > 1 else str(r) for r, e in sorted(factorize(m).items()))


def _xpow(e: int) -> str:
    return "x" if e == 1 else f"x^{e}"


def _need_root(name: str, n: int, q: int) -> None:
    if (q - 1) % n:
        raise NoRootOfUnityError(
            f"{name}: q={q} has no {root_name(n)} ({n} does not divide q-1={q - 1})"
        )


def _bruun_rule(name: str, q: int, source: str) -> None:
    if q % 4 == 1:
        raise NoSquareRootError(
            f"{name}: q={q} = 1 (mod 4), but Bruun's trinomial factorisation needs "
            f"q = 3 (mod 4) [BGM93] ({source} has no factors of degree {LEAF} of Bruun's form)"
        )
    if q % 8 == 3:
        raise NoSquareRootError(
            f"{name}: q={q} = 3 (mod 8): 2 is not a square mod q, so Bruun splits {source} only "
            f"into factors x^16 +- e x^8 - 1, which do not split further (needs q = 7 (mod 8))"
        )


def plan_good_schoenhage_bruun(p: int, q: int) -> PipelinePlan:
    """Sizes of Good–Schönhage–Bruun for (p, q), or the typed error of the first rule broken."""
    check_parameters(p, q)
    _need_root(GSB, 3, q)
    two_k = 1
    while 3 * two_k < 2 * p - 1:
        two_k *= 2
    m = BLOCK
    while two_k // m > 4 * m:
        m *= 2
    ell = two_k // m
    if ell < 2:
        raise ParameterError(
            f"{GSB}: p={p} is too small: N = 3*{two_k} gives fewer than 2 blocks of {m}"
        )
    _bruun_rule(GSB, q, f"x^{2 * m}+1")
    n = 3 * two_k
    _check_degree(GSB, p, q, n, f"N = 3*{two_k}")
    pieces = 3 * ell
    leaves = pieces * (2 * m // LEAF)
    note = (
        f"x^{n} - 1 (N = 3*{two_k} >= 2p-1 = {2 * p - 1}): Schönhage blocks of {m} into "
        f"x^{2 * m}+1 with the l={ell}-th root {_xpow(4 * m // ell)}, Good–Thomas 3 x {ell} "
        f"on the block index (radix-3 with omega_3 in Z_q, radix-2 by shifts) -> "
        f"{pieces} x (x^{2 * m}+1); "
        f"Bruun -> {leaves} size-{LEAF} base multiplications mod x^{LEAF} + a x^{LEAF // 2} + b; "
        f"blow-up {2 * n}/{n} = 2"
    )
    return PipelinePlan(GSB, p, q, n, f"x^{n} - 1", {"m": m, "l": ell, "odd": 3}, note)


def plan_good_rader_bruun(p: int, q: int) -> PipelinePlan:
    """Sizes of Good–Rader–Bruun for (p, q), or the typed error of the first rule broken."""
    check_parameters(p, q)
    _need_root(GRB, 3, q)
    primes = sorted(r for r in factorize(q - 1) if r >= 5)
    fitting = [r for r in primes if BLOCK * 6 * r >= 2 * p - 1]
    if not fitting:
        offered = ", ".join(map(str, primes)) or "none"
        raise NoRootOfUnityError(
            f"{GRB}: needs a prime r >= 5 dividing q-1 = {q - 1} = {_factor_text(q - 1)} with "
            f"{BLOCK}*6*r >= 2p-1 = {2 * p - 1} (r >= {-(-(2 * p - 1) // (6 * BLOCK))}) for "
            f"Rader's size-r transform; primes >= 5 dividing q-1: {offered}"
        )
    r = fitting[0]
    n = BLOCK * 6 * r
    # Phi_r(x^(6m)) = (x^(6rm) - 1) / (x^(6m) - 1) where the product still fits below its
    # degree (the blocks it occupies, 2p coefficients rounded up to blocks): then the 6
    # pieces at Rader's zero frequency are left out (Hwang 2023)
    cyclotomic = -(-2 * p // BLOCK) <= 6 * (r - 1)
    degree = BLOCK * 6 * (r - 1) if cyclotomic else n
    modulus = f"Phi_{r}(x^{6 * BLOCK})" if cyclotomic else f"x^{n} - 1"
    # the smallest fitting r gives the smallest g: when it is too large, every r is
    _check_degree(
        GRB, p, q, degree, f"Rader's prime r={r} (the smallest prime >= 5 dividing q-1 that fits)"
    )
    split = (
        "Cooley–Tukey on the pieces with t a square and Bruun on the others"
        if q % 4 == 3
        else "Cooley–Tukey on every piece (q = 1 mod 4: every t is a square; Bruun is not needed)"
    )
    whole = (
        f"Good–Thomas {r} x 3 x 2 on blocks of {BLOCK} (Rader on the {r}-axis, "
        f"generator-permuted length-{r - 1} cyclic convolution)"
    )
    if cyclotomic:
        note = (
            f"{modulus} = (x^{n} - 1)/(x^{6 * BLOCK} - 1) (degree {degree} >= 2p-1 = "
            f"{2 * p - 1}): {whole} without the 6 pieces at Rader's zero frequency -> "
            f"{6 * (r - 1)} x (x^{BLOCK} - t); {split} -> {2 * 6 * (r - 1)} size-{LEAF} base "
            f"multiplications; blow-up 1"
        )
    else:
        note = (
            f"x^{n} - 1 (N = {BLOCK}*{6 * r} >= 2p-1 = {2 * p - 1}): {whole} -> {6 * r} x "
            f"(x^{BLOCK} - t); {split} -> {2 * 6 * (r - 1)} size-{LEAF} and 6 size-{BLOCK} base "
            f"multiplications; blow-up 1"
        )
    sizes = {"m": BLOCK, "r": r, "cyclotomic": int(cyclotomic)}
    return PipelinePlan(GRB, p, q, degree, modulus, sizes, note)


def plan_schoenhage_nussbaumer(p: int, q: int) -> PipelinePlan:
    """Sizes of the Schönhage–Nussbaumer baseline for (p, q) (exists for every odd prime q)."""
    check_parameters(p, q)
    need = 2 * p - 1
    j = 2  # truncated Schönhage twists by x^(2m/l) with l = 2^j >= 4 (p = 3 would get l = 2)
    while 3 * 4**j // 2 < need:
        j += 1
    trunc = 3 * 4**j // 2
    k = 1
    while 2**k < need:
        k += 1
    if trunc <= 2**k:
        m = ell = 2**j
        n, truncated = trunc, 1
        _check_degree(SN, p, q, n, f"truncated Schönhage m = l = {m}")
        g = f"(x^{m * ell} + 1)(x^{m * ell // 2} - 1)"
        pieces = 3 * ell // 2
        why = f"truncated Schönhage m = l = {m}"
    else:
        m = 2 ** ((k - 1) // 2)  # smallest power of two with l = 2^k / m <= 4m
        ell = 2**k // m
        n, truncated = 2**k, 0
        _check_degree(SN, p, q, n, f"full Schönhage on x^{n} - 1")
        g = f"x^{n} - 1"
        pieces = ell
        below = (
            f"the truncated size below, {3 * 4 ** (j - 1) // 2}, is < 2p-1 = {need}"
            if j > 2
            else "the truncated sizes start at 24 (l >= 4)"
        )
        why = f"full Schönhage m={m}, l={ell} (the truncated size {trunc} > 2^{k}; {below})"
    r = 1  # Nussbaumer x^2m + 1 = x^(k*r) + 1 with k <= r, r as small as possible
    while (2 * m) // r > r:
        r *= 2
    kk = 2 * m // r
    note = (
        f"{g} (degree {n} >= 2p-1 = {need}): {why} -> {pieces} x (x^{2 * m}+1); Nussbaumer "
        f"k={kk}, r={r} -> {pieces * 2 * kk} x (y^{r}+1) base multiplications; blow-up 4"
    )
    sizes = {"m": m, "l": ell, "truncated": truncated, "k": kk, "r": r}
    return PipelinePlan(SN, p, q, n, g, sizes, note)


REFUSALS = (NoRootOfUnityError, NoSquareRootError, ParameterError, SizeError)
"""The errors by which a planner refuses its pipeline for (p, q) (each names its rule)."""

PLANNERS: dict[str, Callable[[int, int], PipelinePlan]] = {
    GSB: plan_good_schoenhage_bruun,
    GRB: plan_good_rader_bruun,
    SN: plan_schoenhage_nussbaumer,
}


def plan_pipeline(name: str, p: int, q: int) -> PipelinePlan:
    """The plan of the pipeline called ``name`` (one of :data:`PIPELINE_NAMES`) for (p, q);
    raises :class:`~nttgen.errors.UnknownNameError` for an unknown name and a
    :class:`~.errors.MapError` naming the rule when the pipeline does not exist for (p, q)."""
    if name not in PLANNERS:
        raise UnknownNameError(
            f"unknown pipeline {name!r}; expected one of {', '.join(PIPELINE_NAMES)}"
        )
    return PLANNERS[name](p, q)


def explain_pipelines(p: int, q: int) -> dict[str, str]:
    """For every pipeline name: its note when it exists for (p, q), else ``"refused: <rule>"``.
    Raises :class:`ParameterError` when p or q itself is unacceptable."""
    check_parameters(p, q)
    out: dict[str, str] = {}
    for name, planner in PLANNERS.items():
        try:
            out[name] = planner(p, q).note
        except REFUSALS as exc:
            out[name] = f"refused: {exc}"
    return out


def choose_pipelines(p: int, q: int) -> list[PipelinePlan]:
    """The plans of the pipelines that exist for Z_q[x]/(x^p - x - 1), in
    :data:`PIPELINE_NAMES` order, each with a ``note``.

    Raises :class:`ParameterError` when p is not prime or q not an odd prime, and
    :class:`NoPipelineError` (listing every pipeline's broken rule) when none exists."""
    check_parameters(p, q)
    plans: list[PipelinePlan] = []
    refusals: list[str] = []
    for planner in PLANNERS.values():
        try:
            plans.append(planner(p, q))
        except REFUSALS as exc:
            refusals.append(str(exc))
    if not plans:
        raise NoPipelineError(f"no pipeline exists for p={p}, q={q}: " + "; ".join(refusals))
    return plans
