"""Exact polynomial helpers over Z_q.

A polynomial is a list of Python ints, lowest degree first (``[a0, a1, ...]`` is
a0 + a1 x + ...). A *modulus* is a tuple of ints in [0, q), lowest degree first, monic (its last
entry is 1); ``deg(f) = len(f) - 1``. None of these helpers count operations: they are the
reference arithmetic that maps are checked against (the counted kernels live in :mod:`.ops`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...errors import InputShapeError
from .modarith import centred

Poly = list[int]
Modulus = tuple[int, ...]


def normalise(a: Iterable[int], q: int) -> Poly:
    """The coefficients of ``a`` reduced into [0, q), same length."""
    return [x % q for x in a]


def pad(a: Sequence[int], n: int, q: int) -> Poly:
    """``a`` reduced mod q and zero-extended to length n; raises :class:`InputShapeError` when
    ``a`` has more than n coefficients."""
    if len(a) > n:
        raise InputShapeError(f"polynomial has {len(a)} coefficients, at most {n} allowed")
    return [x % q for x in a] + [0] * (n - len(a))


def trim(a: Sequence[int]) -> Poly:
    """``a`` without trailing zero coefficients (the zero polynomial becomes ``[]``)."""
    n = len(a)
    while n and a[n - 1] == 0:
        n -= 1
    return list(a[:n])


def degree(a: Sequence[int], q: int) -> int:
    """Degree of ``a`` mod q (-1 for the zero polynomial)."""
    return len(trim(normalise(a, q))) - 1


def poly_add(a: Sequence[int], b: Sequence[int], q: int) -> Poly:
    """(a + b) mod q, length max(len a, len b)."""
    n = max(len(a), len(b))
    return [((a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0)) % q for i in range(n)]


def poly_sub(a: Sequence[int], b: Sequence[int], q: int) -> Poly:
    """(a - b) mod q, length max(len a, len b)."""
    n = max(len(a), len(b))
    return [((a[i] if i < len(a) else 0) - (b[i] if i < len(b) else 0)) % q for i in range(n)]


def poly_mul(a: Sequence[int], b: Sequence[int], q: int) -> Poly:
    """The full product a * b mod q (schoolbook, skipping zero coefficients of ``a``), length
    len(a) + len(b) - 1 (``[]`` when either is empty)."""
    if not a or not b:
        return []
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x % q:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return [x % q for x in out]


def poly_mod(a: Sequence[int], f: Modulus, q: int) -> Poly:
    """``a`` mod (f, q) for monic ``f``: a list of exactly deg(f) coefficients in [0, q).

    Top-down elimination that only touches the nonzero low terms of f (fast for the sparse moduli
    used here: binomials, trinomials, products of a few)."""
    n = len(f) - 1
    if n < 0 or f[-1] % q != 1:
        raise ValueError(f"modulus {f} is not monic mod {q}")
    terms = [(t, c % q) for t, c in enumerate(f[:-1]) if c % q]
    out = [x % q for x in a] + [0] * max(0, n - len(a))
    for i in range(len(out) - 1, n - 1, -1):
        c = out[i] % q
        if c:
            for t, g in terms:
                out[i - n + t] -= c * g
        out[i] = 0
    return [x % q for x in out[:n]]


def poly_mulmod(a: Sequence[int], b: Sequence[int], f: Modulus, q: int) -> Poly:
    """a * b mod (f, q), length deg(f)."""
    return poly_mod(poly_mul(a, b, q), f, q)


def poly_prod(fs: Iterable[Sequence[int]], q: int) -> Poly:
    """The product of the polynomials ``fs`` mod q (``[1]`` for none)."""
    out: Poly = [1]
    for f in fs:
        out = poly_mul(f, out, q)  # f is the sparse factor: iterate over its nonzero terms
    return trim(out) or [0]


def poly_divmod(a: Sequence[int], f: Sequence[int], q: int) -> tuple[Poly, Poly]:
    """(quotient, remainder) of a by f over Z_q (f with invertible leading coefficient); the
    remainder has length deg(f) (zero-padded)."""
    f = trim(normalise(f, q))
    if not f:
        raise ZeroDivisionError("division by the zero polynomial")
    n = len(f) - 1
    inv = pow(f[-1], -1, q)
    r = normalise(a, q)
    quo = [0] * max(0, len(r) - n)
    for i in range(len(r) - 1, n - 1, -1):
        c = r[i] * inv % q
        if c:
            quo[i - n] = c
            for t in range(n + 1):
                r[i - n + t] = (r[i - n + t] - c * f[t]) % q
    return quo, (r[:n] + [0] * max(0, n - len(r)))


def poly_gcd(a: Sequence[int], b: Sequence[int], q: int) -> Poly:
    """Monic gcd of a and b over the field Z_q (``[]`` when both are zero)."""
    a, b = trim(normalise(a, q)), trim(normalise(b, q))
    while b:
        _, r = poly_divmod(a, b, q)
        a, b = b, trim(r)
    if not a:
        return []
    inv = pow(a[-1], -1, q)
    return [x * inv % q for x in a]


def binomial(n: int, c: int, q: int) -> Modulus:
    """The modulus x^n - c (n >= 1)."""
    if n < 1:
        raise ValueError(f"binomial degree must be >= 1, got {n}")
    return tuple([(-c) % q] + [0] * (n - 1) + [1])


def cyclotomic_of_power(r: int, e: int, q: int) -> Modulus:
    """Phi_r(x^e) = 1 + x^e + ... + x^((r-1)e) for a prime r (the factor of x^(re) - 1 left
    when x^e - 1 is divided out)."""
    if r < 2 or e < 1:
        raise ValueError(f"Phi_r(x^e) needs r >= 2 and e >= 1, got r={r}, e={e}")
    f = [0] * ((r - 1) * e + 1)
    for i in range(r):
        f[i * e] = 1 % q
    return tuple(f)


def trinomial(n: int, c: int, d: int, q: int) -> Modulus:
    """The modulus x^n + c x^(n/2) + d (n even, n >= 2)."""
    if n < 2 or n % 2:
        raise ValueError(f"trinomial degree must be even and >= 2, got {n}")
    f = [0] * (n + 1)
    f[0], f[n // 2], f[n] = d % q, c % q, 1
    return tuple(f)


def from_terms(terms: dict[int, int], q: int) -> Poly:
    """The polynomial sum c x^e over ``terms`` {e: c}, reduced mod q (trailing zeros trimmed)."""
    if not terms:
        return []
    out = [0] * (max(terms) + 1)
    for e, c in terms.items():
        out[e] = (out[e] + c) % q
    return trim(out)


def ntru_prime_modulus(p: int, q: int) -> Modulus:
    """NTRU Prime's x^p - x - 1 as a modulus."""
    f = [0] * (p + 1)
    f[0], f[1], f[p] = q - 1, q - 1, 1
    return tuple(f)


def as_binomial(f: Modulus, q: int) -> tuple[int, int] | None:
    """(n, c) when f = x^n - c, else None."""
    n = len(f) - 1
    if n >= 1 and all(x % q == 0 for x in f[1:n]):
        return n, (-f[0]) % q
    return None


def as_trinomial(f: Modulus, q: int) -> tuple[int, int, int] | None:
    """(n, c, d) when f = x^n + c x^(n/2) + d with n even (c may be 0), else None."""
    n = len(f) - 1
    if n < 2 or n % 2:
        return None
    if all(f[i] % q == 0 for i in range(1, n) if i != n // 2):
        return n, f[n // 2] % q, f[0] % q
    return None


def describe(f: Sequence[int], q: int, var: str = "x") -> str:
    """``f`` as readable text with centred coefficients, highest degree first, e.g.
    ``x^8 + 1234*x^4 - 1``."""
    parts: list[str] = []
    for e in range(len(f) - 1, -1, -1):
        c = centred(f[e], q)
        if c == 0:
            continue
        mono = "1" if e == 0 else (var if e == 1 else f"{var}^{e}")
        mag = abs(c)
        body = mono if (mag == 1 and e > 0) else (str(mag) if e == 0 else f"{mag}*{mono}")
        if not parts:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append(("- " if c < 0 else "+ ") + body)
    return " ".join(parts) if parts else "0"


def centred_list(a: Iterable[int], q: int) -> list[int]:
    """Each coefficient as its representative in [-(q-1)/2, (q-1)/2] (q odd)."""
    return [centred(x, q) for x in a]
