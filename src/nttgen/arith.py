"""Exact integer arithmetic used to compute and check constants at generation time.

Everything here works on Python integers (arbitrary precision); nothing depends on lane widths.
"""

from __future__ import annotations

from functools import cache
from math import gcd


def is_prime(m: int) -> bool:
    """Return whether ``m`` is prime (deterministic Miller–Rabin, exact for all m < 3.3e24)."""
    if m < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in small:
        if m % p == 0:
            return m == p
    d, s = m - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in small:
        x = pow(a, d, m)
        if x in (1, m - 1):
            continue
        for _ in range(s - 1):
            x = x * x % m
            if x == m - 1:
                break
        else:
            return False
    return True


FACTORIZE_LIMIT = 1 << 40
"""Largest m (exclusive) :func:`factorize` accepts: trial division takes up to sqrt(m) steps, at
most 2^20 (well under a second) below 2^40. The numbers factored are q - 1 for a q that the
lanes admit (q < 2^31) and DFT lengths, so callers validate q before factoring; this bound
turns a caller that forgot into an error instead of a hang."""


def factorize(m: int) -> dict[int, int]:
    """Return the prime factorisation of ``m``, 1 <= m < :data:`FACTORIZE_LIMIT`, as
    {prime: exponent} (trial division). Raises ValueError for m outside that range."""
    if m < 1:
        raise ValueError(f"factorize needs m >= 1, got {m}")
    if m >= FACTORIZE_LIMIT:
        raise ValueError(f"factorize: m={m} is not below 2^40 (trial division would not end soon)")
    out: dict[int, int] = {}
    p = 2
    while p * p <= m:
        while m % p == 0:
            out[p] = out.get(p, 0) + 1
            m //= p
        p += 1 if p == 2 else 2
    if m > 1:
        out[m] = out.get(m, 0) + 1
    return out


def nearest_prime_in_progression(
    start: int, step: int, lo: int, hi: int, *, window: int, skip: int | None = None
) -> int | None:
    """The first prime among start, start + step, start + 2*step, ... (``step`` != 0, either
    sign) that lies in [lo, hi) and is not ``skip``; None when none of the first ``window``
    terms is one, or the progression leaves [lo, hi) first.

    At most ``window`` Miller–Rabin tests (each a few microseconds for values below 2^64), so
    callers that suggest a nearby prime answer at once whatever the value they start from."""
    x = start
    for _ in range(window):
        if not lo <= x < hi:
            return None
        if x != skip and is_prime(x):
            return x
        x += step
    return None


def is_power_of_two(m: int) -> bool:
    """Return whether ``m`` is a positive power of two."""
    return m > 0 and m & (m - 1) == 0


def log2_exact(m: int) -> int:
    """Return k with 2^k == m; raise ValueError when m is not a power of two."""
    if not is_power_of_two(m):
        raise ValueError(f"{m} is not a power of two")
    return m.bit_length() - 1


def bitrev(x: int, bits: int) -> int:
    """Reverse the low ``bits`` bits of ``x`` (0 <= x < 2^bits)."""
    out = 0
    for _ in range(bits):
        out = (out << 1) | (x & 1)
        x >>= 1
    return out


def multiplicative_order(x: int, q: int) -> int:
    """Return the order of ``x`` in the unit group of Z_q, q prime, x not divisible by q."""
    if x % q == 0:
        raise ValueError(f"{x} is not a unit mod {q}")
    order = q - 1
    for p, e in factorize(q - 1).items():
        for _ in range(e):
            if pow(x, order // p, q) == 1:
                order //= p
            else:
                break
    return order


@cache
def smallest_generator(q: int) -> int:
    """Return the smallest generator of the cyclic group (Z/q)^* for prime ``q`` (1 for q = 2).

    Generators are dense (phi(q-1) of the q-1 units), so the scan stops after a few steps."""
    if q == 2:
        return 1
    primes = list(factorize(q - 1))
    for g in range(2, q):
        if all(pow(g, (q - 1) // p, q) != 1 for p in primes):
            return g
    raise ValueError(f"no generator mod {q}: {q} is not prime")


@cache
def smallest_root_of_unity(order: int, q: int) -> int:
    """Return the smallest integer r in [1, q) whose multiplicative order mod prime ``q`` is
    exactly ``order`` (>= 1). Raise ValueError when ``order`` does not divide q - 1.

    For (256, 3329) this is 17 and for (512, 8380417) it is 1753: the roots FIPS 203 and
    FIPS 204 fix, so one rule reproduces both standards.

    The elements of order n are w^k for w = g^((q-1)/n) and k prime to n. For a small order
    the minimum over those phi(n) powers is cheap; for a large one, elements of that order are
    dense and scanning upwards from 2 finds the first after about q/phi(n) steps. Either way
    the result is the exact minimum."""
    if order < 1 or (q - 1) % order:
        raise ValueError(f"no element of order {order} mod {q}: {order} does not divide q-1")
    if order == 1:
        return 1
    if order * order <= 4 * q:
        w = pow(smallest_generator(q), (q - 1) // order, q)
        return min(pow(w, k, q) for k in range(1, order) if gcd(k, order) == 1)
    for r in range(2, q):
        if pow(r, order, q) == 1 and multiplicative_order(r, q) == order:
            return r
    raise ValueError(f"no element of order {order} mod {q}")  # unreachable for prime q


def centred(x: int, m: int) -> int:
    """Return the representative of x mod m in [-(m-1)//2, m//2] (m odd: symmetric,
    [-(m-1)/2, (m-1)/2])."""
    r = x % m
    return r - m if r > m // 2 else r


def signed_mod_pow2(x: int, bits: int) -> int:
    """Return x mod 2^bits as a signed value in [-2^(bits-1), 2^(bits-1))."""
    half = 1 << (bits - 1)
    return ((x + half) % (1 << bits)) - half
