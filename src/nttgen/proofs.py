"""Proofs of the interval analysis: every transfer-function application the analysis of a kernel
made is proven to contain every result the op's exact semantics can produce.

For 16-bit lanes the proofs are exhaustive: a one-operand op (Barrett, the sign-mask correction,
shifts) is evaluated on every input of its interval; a Montgomery product is split into (a) the
range of the product p of its operands and (b) the reduction of p, whose only non-linear part,
m = lo(p * q^-1), depends on the low half of p alone: all 2^16 low halves are checked, which
proves the reduction for every p. For 32-bit lanes the same facts are proven with z3 (bit-vector
models of the exact semantics, or integer arithmetic where they are linear), over all inputs in
the stated ranges. A Shoup product's range is proven for every constant with a correctly
rounded quotient at once (linear arithmetic with the two products as unknowns).
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


# --------------------------------------------------------------------------- z3 models
def _z3():  # type: ignore[no-untyped-def]
    import z3

    return z3


def _unsat(solver) -> bool:  # type: ignore[no-untyped-def]
    return str(solver.check()) == "unsat"


def _z3_linear(app: Application) -> bool:
    """add/sub and the product range of a Montgomery multiplication, over the integers."""
    z3 = _z3()
    s = z3.Solver()
    (alo, ahi), (blo, bhi) = app.inputs
    a, b = z3.Ints("a b")
    s.add(alo <= a, a <= ahi, blo <= b, b <= bhi)
    r = {"add": a + b, "addw": a + b, "sub": a - b}[app.kind]
    s.add(z3.Or(r < app.output[0], r > app.output[1]))
    return _unsat(s)


def z3_product_range(a: tuple[int, int], b: tuple[int, int], p: tuple[int, int]) -> bool:
    """x*y lies in p for every x in a, y in b (non-linear integer arithmetic)."""
    z3 = _z3()
    s = z3.Solver()
    x, y = z3.Ints("x y")
    s.add(a[0] <= x, x <= a[1], b[0] <= y, y <= b[1])
    s.add(z3.Or(x * y < p[0], x * y > p[1]))
    return _unsat(s)


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


def z3_barrett(a: tuple[int, int], out: tuple[int, int], arith: Arith) -> bool:
    """Barrett reduction stays in ``out`` for every a in range: with t = floor((a*v + 2^(s-1))
    / 2^s) (the exact estimate, see :func:`z3_barrett_rounding`), r = a - t*q; linear integer
    arithmetic since v, q and s are constants."""
    z3 = _z3()
    s = arith.lane.bits + arith.barrett_k
    two_s = 1 << s
    x, t = z3.Ints("x t")
    sv = z3.Solver()
    sv.add(a[0] <= x, x <= a[1])
    num = x * arith.barrett_v + two_s // 2
    sv.add(two_s * t <= num, num < two_s * (t + 1))
    r = x - t * arith.q
    sv.add(z3.Or(r < out[0], r > out[1]))
    return _unsat(sv) and z3_barrett_rounding(arith.lane.bits, arith.barrett_k)


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
        return Proof(app, "z3 (integers)", _z3_linear(app))
    if kind == "madd":
        # two proven product ranges, then their sum (linear)
        a0, b0, a1, b1 = app.inputs
        p0, p1 = _corners(a0, b0), _corners(a1, b1)
        inside = app.output[0] <= p0[0] + p1[0] and p0[1] + p1[1] <= app.output[1]
        steps = [z3_product_range(a0, b0, p0), z3_product_range(a1, b1, p1), inside]
        return Proof(app, "z3 (two product ranges) + their sum", all(steps))
    if kind == "mredw":
        steps = [z3_montgomery_range(app.inputs[0], app.output, arith)]
        steps.append(montgomery_exact_16(arith.q) if bits == 16 else False)
        return Proof(app, "z3 (range) + exhaustive over 2^16 low halves", all(steps))
    if kind in ("montmul", "montmul_var"):
        a, b = app.inputs
        p = _corners(a, b)
        steps = [z3_product_range(a, b, p), z3_montgomery_range(p, app.output, arith)]
        if bits == 16:
            steps.append(montgomery_exact_16(arith.q))
            method = "z3 (product, range) + exhaustive over 2^16 low halves"
        else:
            steps.append(z3_montgomery_exact(arith.q, bits))
            method = "z3 (product, range, exactness over all 2^32 low halves)"
        return Proof(app, method, all(steps))
    if kind == "shoupmul":
        return Proof(
            app,
            "z3 (integers, products as unknowns)",
            z3_shoup_range(app.inputs[0], app.output, arith),
        )
    if kind in ("mullo", "mulhi"):
        # standalone products: the result is the exact product's low or high half, so the
        # product range (proven) determines it
        a, b = app.inputs
        p = _corners(a, b)
        return Proof(app, "z3 (product range)", z3_product_range(a, b, p))
    if bits == 16:
        return _exhaustive_unary(app, arith)
    if kind == "barrett":
        return Proof(app, "z3 (bit-vectors)", z3_barrett(app.inputs[0], app.output, arith))
    if kind == "cond_add_q":
        return Proof(app, "z3 (bit-vectors)", z3_cond_add_q(app.inputs[0], app.output, arith))
    if kind.startswith("sra:"):
        k = int(kind[4:])
        ((lo, hi),) = app.inputs
        ok = app.output == (lo >> k, hi >> k)  # floor division is monotone
        return Proof(app, "monotonicity", ok)
    raise ValueError(f"no proof method for {kind}")
