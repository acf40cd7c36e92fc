"""Proofs of the interval analysis: every transfer-function application the analysis of a kernel
made is proven to contain every result the op's exact semantics can produce.

For 16-bit lanes the proofs are exhaustive: a one-operand op (Barrett, the sign-mask correction,
shifts) is evaluated on every input of its interval; the range of a product x*y is found by
evaluating every x of the narrower operand's interval at both ends of the other's (x*y is linear
in y); a Montgomery reduction of a product p is the exact quotient (p - m*q) / beta, with m the
one signed lane value that makes it exact, so evaluating every m (all 2^16) at the smallest and
largest p of its residue class inside p's range gives the exact range of the results. For 32-bit
lanes the same facts are proven with z3 (bit-vector models of the exact semantics, or integer
arithmetic where they are linear), over all inputs in the stated ranges; products whose narrower
operand spans at most 2^20 values are enumerated as for 16-bit lanes, wider ones proven at
both ends of one operand (x*b0 and x*b1, linear in x), of which x*y is a convex combination.
A sum or difference of two independent intervals is monotone in each operand, so its exact
range is that of the corners. A Shoup product's range is proven for every constant with a
correctly rounded quotient at once (linear arithmetic with the two products as unknowns).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np

from .dsl import semantics
from .dsl.ir import Function
from .interp import transfer
from .interp.bounds import Application, analyse
from .lanes import LaneType
from .plan.constants import Arith


@dataclass(frozen=True)
class Proof:
    """The outcome of proving one application: how, and a counterexample if it failed."""

    application: Application
    method: str
    ok: bool
    detail: str = ""


def applications(functions: Iterable[Function], arith: Arith) -> set[Application]:
    """Every distinct transfer-function application the analysis of these functions makes."""
    log: set[Application] = set()
    for fn in functions:
        analyse(fn, arith, log)
    return log


def unproven(functions: Iterable[Function], arith: Arith) -> tuple[int, list[Proof]]:
    """Prove every application the analysis of ``functions`` makes: (how many there are, the
    failed proofs, empty when all hold)."""
    apps = applications(functions, arith)
    return len(apps), [p for p in (prove(a, arith) for a in apps) if not p.ok]


# --------------------------------------------------------------------------- 16-bit: exhaustive
def _exhaustive_unary(app: Application, arith: Arith) -> Proof:
    ((lo, hi),) = app.inputs
    a = np.arange(lo, hi + 1, dtype=np.int64)
    if app.kind in ("barrett", "barrett_coarse"):
        r = transfer.reduction_exact(app.kind, a, arith)
    elif app.kind == "cond_add_q":
        r = semantics.cond_add_q(a, arith.lane, arith.q)
    elif app.kind.startswith("sra:"):
        r = semantics.sra(a, int(app.kind[4:]))
    else:  # pragma: no cover
        raise ValueError(app.kind)
    ok = bool(r.min() >= app.output[0] and r.max() <= app.output[1])
    detail = "" if ok else f"results reach [{int(r.min())}, {int(r.max())}]"
    return Proof(app, f"exhaustive over {hi - lo + 1} inputs", ok, detail)


@cache
def montgomery_exact_16(q: int) -> bool:
    """For every low half u of a 32-bit product, m = lo(u*q^-1) gives lo(m*q) = u, so
    (p - m*q) / 2^16 is exact for every p and m lies in the signed 16-bit lane."""
    ar = Arith(q, LaneType(16))
    u = np.arange(1 << 16, dtype=np.int64)
    m = semantics.mullo(semantics.wrap(u, ar.lane), np.int64(ar.qinv), ar.lane)
    return bool(np.all(((m * q) - u) % (1 << 16) == 0))


def montgomery_range_16(p: tuple[int, int], arith: Arith) -> tuple[int, int]:
    """The exact range of the 16-bit Montgomery reduction r = (x - m*q) / 2^16 over every x in
    ``p``. m is the one signed lane value with m*q = x (mod 2^16) (:func:`montgomery_exact_16`;
    q is odd, so each m owns one residue class of x), so r is largest at the largest x of m's
    class and smallest at the smallest: every m is evaluated at both."""
    beta, q = arith.beta, arith.q
    mq = np.arange(-(beta // 2), beta // 2, dtype=np.int64) * q
    lowest = p[0] + (mq - p[0]) % beta  # the smallest x >= p[0] with x = m*q (mod beta)
    highest = p[1] - (p[1] - mq) % beta
    present = lowest <= p[1]
    r_lo = (lowest[present] - mq[present]) // beta
    r_hi = (highest[present] - mq[present]) // beta
    return int(r_lo.min()), int(r_hi.max())


def _montgomery_in(p: tuple[int, int], out: tuple[int, int], arith: Arith) -> tuple[bool, str]:
    """Whether the Montgomery reduction of every product in ``p`` lies in ``out`` (with the
    exactness fact it rests on), and how that was shown."""
    if arith.lane.bits == 16:
        lo, hi = montgomery_range_16(p, arith)
        ok = out[0] <= lo and hi <= out[1] and montgomery_exact_16(arith.q)
        return ok, "exhaustive over 2^16 m"
    ok = z3_montgomery_range(p, out, arith) and z3_montgomery_exact(arith.q, arith.lane.bits)
    return ok, "z3 (range, exactness over all 2^32 low halves)"


# --------------------------------------------------------------------------- z3 models
def _z3():  # type: ignore[no-untyped-def]
    import z3

    return z3


def _unsat(solver) -> bool:  # type: ignore[no-untyped-def]
    return str(solver.check()) == "unsat"


def _sum_range(app: Application) -> tuple[int, int]:
    """The exact range of a + b (or a - b) over two independent intervals: the sum is
    increasing in each operand (a difference decreasing in the second), so its extremes are
    at the corners."""
    (alo, ahi), (blo, bhi) = app.inputs
    if app.kind == "sub":
        return alo - bhi, ahi - blo
    return alo + blo, ahi + bhi


# products whose narrower operand spans at most this many values are enumerated
ENUMERATED_PRODUCT = 1 << 20


def enumerated_product_range(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The exact range of x*y for x in a, y in b: every x of the narrower interval times both
    ends of the other (x*y is linear in y, so its extremes over y are at the ends). Only for
    intervals of at most :data:`ENUMERATED_PRODUCT` values and |x*y| < 2^63."""
    if a[1] - a[0] > b[1] - b[0]:
        a, b = b, a
    x = np.arange(a[0], a[1] + 1, dtype=np.int64)
    ends = np.concatenate([x * b[0], x * b[1]])
    return int(ends.min()), int(ends.max())


def _product_in(a: tuple[int, int], b: tuple[int, int], p: tuple[int, int]) -> tuple[bool, str]:
    """Whether x*y lies in p for every x in a, y in b, and how that was shown."""
    narrow = min(a[1] - a[0], b[1] - b[0]) + 1
    wide = max(abs(v) for v in (*a, *b))
    if narrow <= ENUMERATED_PRODUCT and wide < 1 << 31:
        lo, hi = enumerated_product_range(a, b)
        return p[0] <= lo and hi <= p[1], f"enumerated over {narrow} values"
    return z3_product_range(a, b, p), "z3 (linear at both ends of one operand)"


def z3_product_range(a: tuple[int, int], b: tuple[int, int], p: tuple[int, int]) -> bool:
    """x*y lies in p for every x in a, y in b. For y = (1-t)*b0 + t*b1 with t in [0, 1],
    x*y = (1-t)*(x*b0) + t*(x*b1) lies between x*b0 and x*b1, so it is enough that both lie
    in p for every x in a: two linear integer problems."""
    z3 = _z3()
    for end in b:
        s = z3.Solver()
        x = z3.Int("x")
        s.add(a[0] <= x, x <= a[1], z3.Or(x * end < p[0], x * end > p[1]))
        if not _unsat(s):
            return False
    return True


@cache
def z3_montgomery_exact(q: int, bits: int) -> bool:
    """For every low half u (all 2^bits of them), m = lo(u*q^-1) satisfies lo(m*q) = u."""
    z3 = _z3()
    ar = Arith(q, LaneType(bits))
    u = z3.BitVec("u", bits)
    m = u * z3.BitVecVal(ar.qinv, bits)
    s = z3.Solver()
    s.add(m * z3.BitVecVal(q, bits) != u)
    return _unsat(s)


def z3_montgomery_range(p: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """With p in its range, m a signed lane and p - m*q divisible by beta (the exactness fact),
    r = (p - m*q) / beta lies in ``out``."""
    z3 = _z3()
    beta = arith.beta
    pv, m, r = z3.Ints("p m r")
    s = z3.Solver()
    s.add(p[0] <= pv, pv <= p[1], -(beta // 2) <= m, m <= beta // 2 - 1)
    s.add(pv - m * arith.q == r * beta)
    s.add(z3.Or(r < out[0], r > out[1]))
    return _unsat(s)


def z3_shoup_range(a: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """shoupmul(x, z, zs) = x*z - floor(k*x*zs/beta)*q lies in ``out`` for every x in ``a`` and
    every constant z whose quotient is zs = round(z*beta/(k*q)), i.e. |2*k*q*zs - 2*beta*z| <=
    k*q, with k = 2^shoup_shift.
    Linear over the integers in the products P = x*z and R = x*zs: multiplying that fact by x
    gives |2*q*R - 2*beta*P| <= q*M with M = max |x|, and t = floor(R/beta). These constraints
    hold for every actual (x, z), so no r outside ``out`` satisfying them means none exists."""
    z3 = _z3()
    beta, q, k = arith.beta, arith.q, 1 << arith.shoup_shift
    m = max(abs(a[0]), abs(a[1]))
    P, R, t = z3.Ints("P R t")
    s = z3.Solver()
    # zs = round(z*beta/(q*k)): |2*q*k*zs - 2*beta*z| <= q*k, times x
    s.add(2 * q * k * R - 2 * beta * P <= q * k * m, 2 * beta * P - 2 * q * k * R <= q * k * m)
    s.add(beta * t <= k * R, beta * (t + 1) > k * R)
    r = P - t * q
    s.add(z3.Or(r < out[0], r > out[1]))
    return _unsat(s)


@cache
def z3_barrett_rounding(bits: int, k: int) -> bool:
    """The Barrett estimate's two steps (high half of a*v, then a rounding shift by k) equal one
    rounding shift of the full product by bits + k, for every product x (|x| < 2^62)."""
    z3 = _z3()
    x, h, t1, t2 = z3.Ints("x h t1 t2")
    w, s = 1 << bits, 1 << (bits + k)
    sv = z3.Solver()
    sv.add(x >= -(1 << 62), x < 1 << 62)
    sv.add(w * h <= x, x < w * (h + 1))  # h = floor(x / 2^bits)
    sv.add((1 << k) * t1 <= h + (1 << (k - 1)), h + (1 << (k - 1)) < (1 << k) * (t1 + 1))
    sv.add(s * t2 <= x + s // 2, x + s // 2 < s * (t2 + 1))
    sv.add(t1 != t2)
    return _unsat(sv)


def _z3_rounded_estimate(
    a: tuple[int, int], out: tuple[int, int], q: int, v: int, shift: int
) -> bool:
    """r = a - t*q with t = floor((a*v + 2^(shift-1)) / 2^shift) stays in ``out`` for every a
    in range: linear integer arithmetic, since v, q and the shift are constants."""
    z3 = _z3()
    two_s = 1 << shift
    x, t = z3.Ints("x t")
    sv = z3.Solver()
    sv.add(a[0] <= x, x <= a[1])
    num = x * v + two_s // 2
    sv.add(two_s * t <= num, num < two_s * (t + 1))
    r = x - t * q
    sv.add(z3.Or(r < out[0], r > out[1]))
    return _unsat(sv)


def z3_barrett(a: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """Barrett reduction stays in ``out`` for every a in range: t = floor((a*v + 2^(s-1)) /
    2^s) is the exact estimate (see :func:`z3_barrett_rounding`), r = a - t*q."""
    s = arith.lane.bits + arith.barrett_k
    return _z3_rounded_estimate(a, out, arith.q, arith.barrett_v, s) and z3_barrett_rounding(
        arith.lane.bits, arith.barrett_k
    )


def z3_barrett_coarse(a: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """The coarse reduction of a 32-bit lane stays in ``out`` for every a in range (t =
    floor((a*v + 2^(shift-1)) / 2^shift), r = a - t*q), and a leaves room for the rounding
    constant, so the lane computes t exactly."""
    room = arith.coarse_room
    if not -room <= a[0] <= a[1] <= room:
        return False
    v, shift = arith.barrett_coarse_v, arith.barrett_coarse_shift
    return _z3_rounded_estimate(a, out, arith.q, v, shift)


def z3_cond_add_q(a: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """a + (q AND (a >> (bits-1))) stays in ``out`` for every a in range (bit-vector model)."""
    z3 = _z3()
    bits = arith.lane.bits
    x = z3.BitVec("x", bits + 1)  # one spare bit: a + q is computed exactly
    r = x + (z3.BitVecVal(arith.q, bits + 1) & (x >> bits))
    s = z3.Solver()
    s.add(x >= a[0], x <= a[1])
    s.add(z3.Or(r < out[0], r > out[1]))
    return _unsat(s)


# --------------------------------------------------------------------------- dispatcher
def _corners(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The range of x*y spanned by the corners of a and b (which z3 then proves)."""
    return min(x * y for x in a for y in b), max(x * y for x in a for y in b)


def prove(app: Application, arith: Arith) -> Proof:
    """Prove one application (see the module docstring for the methods)."""
    bits = arith.lane.bits
    kind = app.kind
    if kind in ("add", "sub", "addw"):
        lo, hi = _sum_range(app)
        ok = app.output[0] <= lo and hi <= app.output[1]
        return Proof(app, "monotone in each operand: the corners", ok)
    if kind == "madd":
        # two product ranges, then their sum (monotone in each)
        a0, b0, a1, b1 = app.inputs
        p0, p1 = _corners(a0, b0), _corners(a1, b1)
        inside = app.output[0] <= p0[0] + p1[0] and p0[1] + p1[1] <= app.output[1]
        (ok0, how), (ok1, _) = _product_in(a0, b0, p0), _product_in(a1, b1, p1)
        return Proof(app, f"two product ranges ({how}) + their sum", ok0 and ok1 and inside)
    if kind == "mulw":
        a, b = app.inputs
        p = _corners(a, b)
        ok, how = _product_in(a, b, p)
        return Proof(app, f"product {how}", ok and app.output[0] <= p[0] and p[1] <= app.output[1])
    if kind == "mredw":
        ok, how = _montgomery_in(app.inputs[0], app.output, arith)
        return Proof(app, how, ok)
    if kind in ("montmul", "montmul_var"):
        a, b = app.inputs
        p = _corners(a, b)
        (ok_p, how_p), (ok_r, how_r) = _product_in(a, b, p), _montgomery_in(p, app.output, arith)
        return Proof(app, f"product {how_p}; reduction {how_r}", ok_p and ok_r)
    if kind == "montmul_twist":
        # hi(a*b) - hi(m*q) for any m in the lane: floor is monotone, so the product's ends
        # and m's ends bound it (no exactness needed: the twist may be any value)
        a, b = app.inputs
        p = _corners(a, b)
        ok_p, how_p = _product_in(a, b, p)
        beta, q = arith.beta, arith.q
        need = (
            p[0] // beta - ((beta // 2 - 1) * q) // beta,
            p[1] // beta - (-(beta // 2) * q) // beta,
        )
        ok = ok_p and app.output[0] <= need[0] and need[1] <= app.output[1]
        return Proof(app, f"product {how_p}; monotone high halves for any twist", ok)
    if kind == "shoupmul":
        return Proof(
            app,
            "z3 (integers, products as unknowns)",
            z3_shoup_range(app.inputs[0], app.output, arith),
        )
    if kind in ("mullo", "mulhi"):
        # standalone products: the result is the exact product's low half (the product itself
        # where every product fits the lane; else any lane value may occur) or its high half,
        # floor(p / beta), increasing in p
        a, b = app.inputs
        p = _corners(a, b)
        ok, how = _product_in(a, b, p)
        lane = arith.lane
        if kind == "mulhi":
            need = (p[0] >> bits, p[1] >> bits)
        else:
            need = p if lane.fits(*p) else (lane.min, lane.max)
        ok = ok and app.output[0] <= need[0] and need[1] <= app.output[1]
        return Proof(app, f"product range {how}", ok)
    if bits == 16:
        return _exhaustive_unary(app, arith)
    if kind == "barrett":
        return Proof(app, "z3 (bit-vectors)", z3_barrett(app.inputs[0], app.output, arith))
    if kind == "barrett_coarse":
        proof = z3_barrett_coarse(app.inputs[0], app.output, arith)
        return Proof(app, "z3 (integers)", proof)
    if kind == "cond_add_q":
        return Proof(app, "z3 (bit-vectors)", z3_cond_add_q(app.inputs[0], app.output, arith))
    if kind.startswith("sra:"):
        k = int(kind[4:])
        ((lo, hi),) = app.inputs
        ok = app.output == (lo >> k, hi >> k)  # floor division is monotone
        return Proof(app, "monotonicity", ok)
    raise ValueError(f"no proof method for {kind}")
