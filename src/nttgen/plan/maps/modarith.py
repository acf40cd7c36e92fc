"""Number theory in Z_q that the maps need: roots of unity, square roots, generators.

Every function works on exact Python integers and either returns a checked value or raises a typed
error whose message names the rule broken.
"""

from __future__ import annotations

from functools import cache

from ...arith import centred, factorize, is_prime, smallest_generator, smallest_root_of_unity
from ...errors import NoRootOfUnityError, NoSquareRootError, ParameterError

_ROOT_NAMES = {2: "square root of unity", 3: "cube root of unity"}


def require_prime_modulus(q: int) -> None:
    """Raise :class:`ParameterError` unless ``q`` is an odd prime (Z_q must be a field in which 2
    is invertible)."""
    if not (isinstance(q, int) and q > 2 and is_prime(q)):
        raise ParameterError(f"q={q} is not an odd prime: Z_q must be a field with 2 invertible")


def is_primitive_root_of_unity(w: int, n: int, q: int) -> bool:
    """Whether ``w`` has multiplicative order exactly ``n`` modulo the prime ``q``.

    For a field this is the same as being a *principal* n-th root of unity: w^n = 1 and
    w^(n/r) != 1 for every prime r dividing n."""
    if n < 1 or w % q == 0:
        return False
    if pow(w, n, q) != 1:
        return False
    return all(pow(w, n // r, q) != 1 for r in factorize(n))


def root_name(n: int) -> str:
    """Human name of a primitive n-th root of unity, e.g. ``cube root of unity``."""
    return _ROOT_NAMES.get(n, f"primitive {n}-th root of unity")


@cache
def primitive_root_of_unity(n: int, q: int) -> int:
    """The smallest integer w in [1, q) of multiplicative order exactly ``n`` mod prime ``q``.

    Raises :class:`NoRootOfUnityError` (naming the rule n | q-1) when none exists. The result is
    re-checked with :func:`is_primitive_root_of_unity` before it is returned."""
    require_prime_modulus(q)
    if n < 1:
        raise NoRootOfUnityError(f"root of unity order must be >= 1, got {n}")
    if (q - 1) % n:
        raise NoRootOfUnityError(f"q={q} has no {root_name(n)} ({n} does not divide q-1={q - 1})")
    best = smallest_root_of_unity(n, q)
    if not is_primitive_root_of_unity(best, n, q):  # pragma: no cover - defensive
        raise NoRootOfUnityError(f"internal: {best} is not of order {n} mod {q}")
    return best


@cache
def multiplicative_generator(m: int) -> int:
    """The smallest generator of the cyclic group (Z/m)^*, m prime (used as Rader's generator and
    to find roots of unity)."""
    if not is_prime(m):
        raise ParameterError(f"m={m} is not prime: (Z/m)^* is cyclic of order m-1 only for primes")
    return smallest_generator(m)


def is_square(a: int, q: int) -> bool:
    """Whether ``a`` is a square mod the odd prime ``q`` (0 counts as a square)."""
    a %= q
    return a == 0 or pow(a, (q - 1) // 2, q) == 1


def sqrt_mod(a: int, q: int) -> int | None:
    """A square root of ``a`` mod the odd prime ``q``, or None when ``a`` is not a square.

    Of the two roots r and q - r the smaller one is returned (a deterministic choice). Uses
    Tonelli–Shanks; the result is checked by squaring."""
    a %= q
    if a == 0:
        return 0
    if not is_square(a, q):
        return None
    if q % 4 == 3:
        r = pow(a, (q + 1) // 4, q)
    else:
        s, t = 0, q - 1
        while t % 2 == 0:
            s, t = s + 1, t // 2
        z = next(z for z in range(2, q) if not is_square(z, q))
        c, r, u, k = pow(z, t, q), pow(a, (t + 1) // 2, q), pow(a, t, q), s
        while u != 1:
            i, uu = 0, u
            while uu != 1:
                uu, i = uu * uu % q, i + 1
            b = pow(c, 1 << (k - i - 1), q)
            c, r, u, k = b * b % q, r * b % q, u * b * b % q, i
    if r * r % q != a:  # pragma: no cover - defensive
        raise NoSquareRootError(f"internal: sqrt({a}) mod {q} failed")
    return min(r, q - r)


def require_sqrt(a: int, q: int, why: str) -> int:
    """:func:`sqrt_mod` or raise :class:`NoSquareRootError` with ``why`` (the rule) in it."""
    r = sqrt_mod(a, q)
    if r is None:
        raise NoSquareRootError(f"{why}: {centred(a, q)} is not a square mod q={q}")
    return r


def inverse_mod(x: int, q: int) -> int:
    """x^-1 mod prime q; raises :class:`ParameterError` when x = 0 mod q."""
    if x % q == 0:
        raise ParameterError(f"{x} is not invertible mod q={q}")
    return pow(x, -1, q)
