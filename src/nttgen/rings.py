"""Ring specifications Z_q[x]/(x^n + 1): validation, presets and custom rings.

A ring spec is plain validated data. Everything derived from it (twiddles, Montgomery and Barrett
constants, orders) is computed by :mod:`nttgen.plan`.

Rules a negacyclic NTT ring must satisfy (each broken rule raises a :class:`RingError` naming it:
the ring-map layer's :class:`~nttgen.errors.ParameterError`, :class:`~nttgen.errors.SizeError` or
:class:`~nttgen.errors.NoRootOfUnityError`, the errors every ring family shares):

1. n is a power of two with 16 <= n <= 4096;
2. q is an odd prime;
3. q ≡ 1 (mod 2n): a *complete* NTT (depth log2 n, n linear factors) exists; otherwise q ≡ 1 (mod n)
   gives an *incomplete* NTT of depth log2(n) - 1 whose base case is degree 2 (as in ML-KEM);
   otherwise there is no NTT of either kind;
4. lanes: 16-bit when q < 2^15 (signed Montgomery needs q < beta/2), else 32-bit up to q < 2^31.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .aliases import SCHEME_ALIASES, resolve_alias
from .arith import (
    bitrev,
    is_power_of_two,
    is_prime,
    log2_exact,
    nearest_prime_in_progression,
    smallest_root_of_unity,
)
from .errors import NoRootOfUnityError, ParameterError, SizeError, UnknownNameError
from .lanes import I16, I32, LANE_TYPES, LaneType
from .reference import schoolbook

MIN_N = 16
MAX_N = 4096


def c_identifier(name: str) -> str:
    """A ring name as a C identifier fragment: every character other than a letter, a digit or
    ``_`` becomes ``_`` (``kyber-r1`` -> ``kyber_r1``)."""
    return re.sub(r"[^0-9A-Za-z_]", "_", name)


@dataclass(frozen=True)
class Ring:
    """A validated ring Z_q[x]/(x^n + 1) together with the NTT that nttgen computes in it.

    ``depth`` Cooley–Tukey layers split x^n + 1 into 2^depth factors x^b - r^(2*brv(j)+1) of degree
    b = n / 2^depth, where ``root`` r has multiplicative order 2^(depth+1) and brv reverses
    ``depth`` bits. The NTT domain's *standard order* puts the b coefficients of factor j at
    positions b*j .. b*j + b - 1. For ML-KEM this is the FIPS 203 order and for ML-DSA the FIPS
    204 order."""

    name: str
    n: int
    q: int
    lane: LaneType
    depth: int
    root: int
    description: str = ""
    preset: bool = False

    @property
    def degree(self) -> int:
        """deg f = n: the number of coefficients of one ring element."""
        return self.n

    @property
    def degree_text(self) -> str:
        """``n = <n>``, as headers write the degree."""
        return f"n = {self.n}"

    @property
    def coefficient_range(self) -> tuple[int, int]:
        """[-(q-1), q-1]: the residues mod q the Python API accepts in either sign."""
        return -(self.q - 1), self.q - 1

    @property
    def output_range(self) -> tuple[int, int]:
        """[0, q-1]: products and transforms come back fully reduced."""
        return 0, self.q - 1

    def reference_product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a*b mod (q, x^n + 1) by the exact schoolbook product, in [0, q) (int64)."""
        return schoolbook(a, b, self.q)

    @property
    def algorithm(self) -> str:
        """How the ring multiplies, in a few words (``nttgen list``)."""
        ntt = (
            "complete NTT"
            if self.complete
            else (f"NTT of depth {self.depth}, degree-{self.base_degree} base")
        )
        return f"{ntt}, {self.lane.bits}-bit lanes"

    @property
    def log_n(self) -> int:
        """log2 of n."""
        return log2_exact(self.n)

    @property
    def base_degree(self) -> int:
        """Degree of the factors the NTT stops at: 1 (complete) or 2 (incomplete)."""
        return self.n >> self.depth

    @property
    def complete(self) -> bool:
        """Whether the NTT splits into linear factors."""
        return self.base_degree == 1

    @property
    def modulus_poly(self) -> str:
        """The modulus polynomial f as text, e.g. ``x^256 + 1``."""
        return f"x^{self.n} + 1"

    @property
    def c_name(self) -> str:
        """The ring's name as a C identifier fragment (``kyber-r1`` -> ``kyber_r1``)."""
        return c_identifier(self.name)

    def factor_root(self, j: int) -> int:
        """Return r^(2*brv(j)+1) mod q: factor j of the standard order is x^b - factor_root(j)."""
        return pow(self.root, 2 * bitrev(j, self.depth) + 1, self.q)

    @property
    def order_doc(self) -> str:
        """One sentence saying what the NTT domain's standard order is."""
        b = self.base_degree
        k = self.depth
        if b == 1:
            what = f"entry j holds a(r^(2*brv{k}(j)+1))"
        else:
            what = f"entries {b}j..{b}j+{b - 1} hold a mod (x^{b} - r^(2*brv{k}(j)+1))"
        std = {"mlkem": " (the FIPS 203 order)", "mldsa": " (the FIPS 204 order)"}.get(
            self.name, ""
        )
        return f"{what}, r = {self.root} of order {2 << k}{std}"

    def summary(self) -> dict[str, object]:
        """A JSON-friendly description of the ring (used in headers and manifests)."""
        return {
            "name": self.name,
            "n": self.n,
            "q": self.q,
            "f": self.modulus_poly,
            "lane_bits": self.lane.bits,
            "ntt_depth": self.depth,
            "base_degree": self.base_degree,
            "root": self.root,
            "root_order": 2 << self.depth,
            "order": self.order_doc,
        }


SUGGESTION_WINDOW = 4096
"""How many candidates q = 1 (mod m) each direction the "nearest valid q" hint of an error
tests at most. Primes in that progression have density about m/(phi(m) ln q) >= 1/22 below
2^31, so the nearest lies within a few dozen steps; the bound keeps a refusal instant (about
8,000 Miller–Rabin tests at worst) where walking from a huge q ran for minutes."""


def _nearest_primes(q: int, modulus: int, limit: int) -> list[int]:
    """Up to two primes p = 1 (mod modulus), 2 < p < limit, p != q: the nearest below and the
    nearest above q, each searched within :data:`SUGGESTION_WINDOW` steps of ``modulus``;
    sorted by distance to q (nearer first). Empty when neither is found."""
    base = min(q, limit - 1)
    below_start = base - (base - 1) % modulus  # the largest value = 1 (mod modulus) <= base
    found = [
        nearest_prime_in_progression(
            below_start, -modulus, 3, limit, window=SUGGESTION_WINDOW, skip=q
        ),
        nearest_prime_in_progression(
            below_start + modulus, modulus, 3, limit, window=SUGGESTION_WINDOW, skip=q
        ),
    ]
    return sorted((x for x in found if x is not None), key=lambda x: (abs(x - q), x))


def _hint(primes: list[int], modulus: int) -> str:
    """The primes as ``a, b``, or what the search covered when it found none."""
    if primes:
        return ", ".join(map(str, primes))
    return f"none within {SUGGESTION_WINDOW} steps of {modulus}"


MAX_Q = 1 << 31
"""q < 2^31: signed Montgomery arithmetic needs q < beta/2 and 32-bit lanes are the widest
nttgen emits."""


def _lane_limit(bits: int | None) -> int:
    """The bound q < beta/2 of the lanes ``bits`` forces (None: the widest, 32 bits)."""
    return MAX_Q if bits in (None, 32) else 1 << 15


def make_ring(
    n: int,
    q: int,
    *,
    lane_bits: int | None = None,
    complete: bool | None = None,
    name: str | None = None,
    description: str = "",
    preset: bool = False,
) -> Ring:
    """Validate (n, q) and return the ring Z_q[x]/(x^n + 1) with its NTT.

    ``n``: a power of two in [:data:`MIN_N`, :data:`MAX_N`]; ``q``: an odd prime below the
    lanes' bound (2^31, or 2^15 for ``lane_bits=16``) with q = 1 (mod n). ``lane_bits`` picks
    16 or 32-bit lanes (default: 16 when q < 2^15, else 32). ``complete`` forces a complete
    (True) or degree-2 incomplete (False) NTT; by default the complete one is taken when
    q = 1 (mod 2n). Raises :class:`RingError` naming the broken rule (and the nearest valid
    choice where one exists).

    The size and shape rules come before primality and the root's existence, and every
    suggestion is searched in a bounded window, so any (n, q), however large, is answered at
    once."""
    if not isinstance(n, int) or not isinstance(q, int):
        raise ParameterError(f"n and q must be integers, got n={n!r}, q={q!r}")
    if not MIN_N <= n <= MAX_N:
        raise SizeError(f"n={n} is outside the supported range {MIN_N} <= n <= {MAX_N}")
    if not is_power_of_two(n):
        lo = 1 << (n.bit_length() - 1)
        raise SizeError(
            f"n={n} is not a power of two: x^n+1 splits by radix-2 NTT layers only when n is "
            f"a power of two; nearest: {lo} or {lo * 2}"
        )
    if lane_bits not in (None, 16, 32):
        raise ParameterError(f"lane_bits={lane_bits} is not supported: lanes are 16 or 32 bits")
    if q >= MAX_Q:
        near = _nearest_primes(MAX_Q - 1, n, MAX_Q)[:1]
        raise ParameterError(
            f"q={q} is too large: signed Montgomery arithmetic needs q < beta/2 = 2^31 "
            f"(32-bit lanes are the widest nttgen emits); largest q with an NTT for n={n}: "
            f"{_hint(near, n)}"
        )
    if lane_bits == 16 and q >= 1 << 15:
        raise ParameterError(
            f"q={q} does not fit 16-bit lanes: signed Montgomery needs "
            f"q < beta/2 = 2^15; use 32-bit lanes"
        )
    if q < 3 or not is_prime(q):
        hint = _nearest_primes(max(q, 3), n, _lane_limit(lane_bits))
        raise ParameterError(
            f"q={q} is not an odd prime: Z_q must be a field for the NTT to be invertible; "
            f"nearest primes with an NTT for n={n}: {_hint(hint, n)}"
        )
    lane = (I16 if q < 1 << 15 else I32) if lane_bits is None else LANE_TYPES[lane_bits]
    log_n = log2_exact(n)
    can_complete = (q - 1) % (2 * n) == 0
    can_incomplete = (q - 1) % n == 0
    if complete is True and not can_complete:
        hint = ""
        if can_incomplete:
            hint = f"; use an incomplete NTT of depth {log_n - 1}"
        raise NoRootOfUnityError(
            f"q={q} is not ≡ 1 (mod 2n={2 * n}): a complete negacyclic NTT needs a primitive "
            f"{2 * n}th root of unity{hint}"
        )
    if not can_incomplete:
        near = _nearest_primes(q, n, lane.beta // 2)
        raise NoRootOfUnityError(
            f"q={q} is not ≡ 1 (mod n={n}): neither a primitive {2 * n}th root (complete NTT) "
            f"nor a primitive {n}th root (degree-2 incomplete NTT) exists mod q; nearest "
            f"valid q: {_hint(near, n)}"
        )
    use_complete = can_complete if complete is None else complete
    depth = log_n if use_complete else log_n - 1
    root = smallest_root_of_unity(2 << depth, q)
    return Ring(
        name=name or f"n{n}_q{q}",
        n=n,
        q=q,
        lane=lane,
        depth=depth,
        root=root,
        description=description,
        preset=preset,
    )


def _preset(name: str, n: int, q: int, complete: bool, description: str) -> Ring:
    return make_ring(n, q, complete=complete, name=name, description=description, preset=True)


PRESETS: dict[str, Ring] = {
    r.name: r
    for r in (
        _preset("mlkem", 256, 3329, False, "ML-KEM (FIPS 203): degree-2 base multiplication"),
        _preset("mldsa", 256, 8380417, True, "ML-DSA (FIPS 204): complete NTT, 32-bit lanes"),
        _preset("kyber-r1", 256, 7681, True, "Kyber round 1 prime (Seiler 2018): complete NTT"),
        _preset("newhope512", 512, 12289, True, "NewHope-512: complete NTT"),
        _preset("newhope1024", 1024, 12289, True, "NewHope-1024: complete NTT"),
    )
}
"""One preset per arithmetic shape; scheme names that share one (Falcon's rings are
NewHope's) are :data:`nttgen.aliases.SCHEME_ALIASES`."""

# The roots the standards fix; the smallest-root rule must reproduce them (checked at import).
_STANDARD_ROOTS = {"mlkem": 17, "mldsa": 1753}
for _name, _root in _STANDARD_ROOTS.items():
    if PRESETS[_name].root != _root:  # pragma: no cover - a broken rule is a bug here
        raise AssertionError(f"{_name}: root {PRESETS[_name].root} != standard {_root}")

_CUSTOM = re.compile(r"^n(\d+)_q(\d+)(?:_l(16|32))?$")


def parse_ring(name: str) -> Ring | None:
    """The x^n + 1 ring ``name`` names: a preset (a scheme alias such as ``falcon512`` names its
    target's ring, ``newhope512``) or a custom name ``n<N>_q<Q>[_l<bits>]``; None when the name
    is neither. Raises :class:`RingError` when a custom name breaks a rule."""
    name = resolve_alias(name)
    if name in PRESETS:
        return PRESETS[name]
    m = _CUSTOM.match(name)
    if m:
        bits = int(m.group(3)) if m.group(3) else None
        n, q = name_number(m.group(1), "n"), name_number(m.group(2), "q")
        return make_ring(n, q, lane_bits=bits, name=name)
    return None


NAME_DIGITS = 40
"""Longest number a ring name may spell: far beyond every limit (n <= 4096, q < 2^31, p <=
1277), and short enough that reading it is instant (Python refuses to read ints of more
than 4,300 digits at all, with an error that is not the user's rule)."""


def name_number(digits: str, what: str) -> int:
    """The number a custom ring name spells for ``what`` (``n``, ``q``, ``p``), from the
    decimal ``digits``; raises :class:`SizeError` naming the value and the rule when it has
    more than :data:`NAME_DIGITS` digits (every such value is far beyond the limits)."""
    if len(digits) > NAME_DIGITS:
        raise SizeError(
            f"{what}={digits[:12]}... ({len(digits)} digits) is too large: custom ring names "
            f"spell numbers of at most {NAME_DIGITS} digits, far beyond every size limit"
        )
    return int(digits)


def get_ring(name: str) -> Ring:
    """:func:`parse_ring`, or :class:`UnknownNameError` listing the presets when the name is
    not an x^n + 1 ring's (:func:`nttgen.families.get_ring` reads every family's names)."""
    ring = parse_ring(name)
    if ring is None:
        raise UnknownNameError(
            f"unknown x^n + 1 ring {name!r}: presets are {', '.join([*PRESETS, *_aliases()])}; "
            f"a custom ring is written {NAME_SYNTAX} (e.g. n256_q7681) or given with --n/--q"
        )
    return ring


NAME_SYNTAX = "n<N>_q<Q>"
"""How a custom x^n + 1 ring is named."""


def _aliases() -> list[str]:
    """The scheme aliases of the x^n + 1 presets."""
    return [a.name for a in SCHEME_ALIASES.values() if a.target in PRESETS]


def custom_ring(n: int, q: int, lane_bits: int | None = None) -> Ring:
    """Return the custom ring x^n+1 over Z_q, named ``n<N>_q<Q>`` (``_l32`` when 32-bit lanes
    are forced for a q that would get 16-bit lanes)."""
    name = f"n{n}_q{q}"
    if lane_bits == 32 and q < 1 << 15:
        name += "_l32"
    return make_ring(n, q, lane_bits=lane_bits, name=name)
