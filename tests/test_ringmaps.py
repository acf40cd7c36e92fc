"""Tests of the NTRU Prime ring-map layer (nttgen.plan.maps).

Every map alone: round trips, the homomorphism (CRT pieces multiply correctly), its constants
and its refusals. Every pipeline: against an exact-integer schoolbook reference and against
``galois`` polynomial arithmetic over GF(q), on random, extreme and sparse inputs. The chooser:
which pipelines exist for the three NTRU Prime parameter sets, and its refusal messages.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from nttgen.errors import UnknownNameError
from nttgen.plan.maps import (
    PIPELINE_NAMES,
    BaseMul,
    BruunMap,
    CooleyTukey3Map,
    CooleyTukeyMap,
    Cost,
    CyclotomicGoodThomasMap,
    FactorisationError,
    GoodThomasMap,
    InputShapeError,
    MapError,
    MapTree,
    NoRootOfUnityError,
    NoSquareRootError,
    NussbaumerMap,
    ParameterError,
    RaderDFT,
    RingMap,
    SchoenhageMap,
    SizeError,
    TruncatedSchoenhageMap,
    auto_split,
    bruun_tree,
    build_pipeline,
    choose_pipelines,
    explain_pipelines,
    plan_pipeline,
)
from nttgen.plan.maps.basecase import ConstMul
from nttgen.plan.maps.dft import DirectDFT, FieldAction, Radix2DFT, ShiftAction
from nttgen.plan.maps.good_thomas import fold_phi, index_map, index_unmap
from nttgen.plan.maps.modarith import is_primitive_root_of_unity, sqrt_mod

Q = 4591
PARAMS = [(761, 4591), (653, 4621), (857, 5167)]
GSB, GRB, SN = PIPELINE_NAMES


# -- independent references ------------------------------------------------------------------


def ref_mod(a: Sequence[int], f: Sequence[int], q: int) -> list[int]:
    """a * 1 mod (f, q) by numpy-free long division (f monic, ascending)."""
    n = len(f) - 1
    r = [x % q for x in a] + [0] * max(0, n - len(a))
    for i in range(len(r) - 1, n - 1, -1):
        c = r[i]
        if c:
            for t in range(n + 1):
                r[i - n + t] = (r[i - n + t] - c * f[t]) % q
    return r[:n]


def ref_mulmod(a: Sequence[int], b: Sequence[int], f: Sequence[int], q: int) -> list[int]:
    """a * b mod (f, q): exact int64 convolution (entries < q < 2^13, so sums stay < 2^63)."""
    c = np.convolve(np.array([x % q for x in a], dtype=np.int64), np.array(b, dtype=np.int64))
    return ref_mod([int(x) % q for x in c], f, q)


def ref_ntru(a: Sequence[int], b: Sequence[int], p: int, q: int) -> list[int]:
    """a * b mod (q, x^p - x - 1) by an exact-integer convolution and integer reduction
    (x^p = x + 1), then centred mod q. The convolution runs in int64 where no sum can reach
    2^62 (every ring here), else on Python integers."""
    big = max(map(abs, a), default=0) * max(map(abs, b), default=0) * min(len(a), len(b))
    dtype = np.int64 if big < 1 << 62 else object
    c = np.zeros(2 * p - 1, dtype=dtype)
    if len(a) and len(b):
        prod = np.convolve(np.array(a, dtype=dtype), np.array(b, dtype=dtype))
        c[: len(prod)] = prod
    # x^i = x^(i-p) * (x + 1) for p <= i <= 2p - 2 lands below p: one fold of the top half
    low = c[:p].copy()
    low[: p - 1] += c[p:]
    low[1:p] += c[p:]
    r = low % q
    return [int(x) for x in np.where(r > q // 2, r - q, r)]


@pytest.fixture(scope="module")
def galois_mod():
    """galois, imported once (its first use compiles)."""
    return pytest.importorskip("galois")


def galois_ntru(galois, a: Sequence[int], b: Sequence[int], p: int, q: int) -> list[int]:
    """a * b mod (x^p - x - 1) with galois.Poly over GF(q), centred."""
    gf = galois.GF(q)
    pa = galois.Poly([x % q for x in a], field=gf, order="asc")
    pb = galois.Poly([x % q for x in b], field=gf, order="asc")
    f = galois.Poly.Degrees([p, 1, 0], [1, q - 1, q - 1], field=gf)
    c = (pa * pb) % f
    coeffs = [int(x) for x in c.coeffs[::-1]] + [0] * p
    return [x - q if x > q // 2 else x for x in coeffs[:p]]


def rand_poly(rng: random.Random, n: int, q: int) -> list[int]:
    return [rng.randrange(q) for _ in range(n)]


# -- maps alone --------------------------------------------------------------------------------

MAPS: dict[str, Callable[[], RingMap]] = {
    "ct2-binomial-1": lambda: CooleyTukeyMap.binomial(Q, 8, 1),
    "ct2-binomial-t": lambda: CooleyTukeyMap.binomial(Q, 8, pow(3, 6, Q)),
    "ct2-general": lambda: CooleyTukeyMap(Q, 4, 5, 7),
    "ct3": lambda: CooleyTukey3Map(Q, 4, 5),
    "bruun-x32+1": lambda: BruunMap(Q, 32, 0, 1),
    "bruun-x16+c": lambda: BruunMap(Q, 16, 0, 9),
    "bruun-trinomial": lambda: BruunMap(Q, 16, sqrt_mod(2, Q), 1),
    "bruun-tree": lambda: bruun_tree(Q, 32, 0, 1, 8),
    "auto-split-x16-1": lambda: auto_split(Q, (Q - 1, *[0] * 15, 1), 1),
    "good-thomas-17x3x2": lambda: GoodThomasMap(Q, 16, (17, 3, 2)),
    "good-thomas-5x3": lambda: GoodThomasMap(Q, 2, (5, 3)),
    "good-thomas-17": lambda: GoodThomasMap(Q, 1, (17,)),
    "good-thomas-phi17-x96": lambda: CyclotomicGoodThomasMap(Q, 16, (17, 3, 2)),
    "good-thomas-phi5-x6": lambda: CyclotomicGoodThomasMap(Q, 2, (5, 3)),
    "schoenhage-3x32": lambda: SchoenhageMap(Q, 16, 32, odd=3),
    "schoenhage-small": lambda: SchoenhageMap(Q, 4, 8),
    "schoenhage-l=4m": lambda: SchoenhageMap(Q, 4, 16, odd=5),
    "trunc-schoenhage-32": lambda: TruncatedSchoenhageMap(Q, 32, 32),
    "trunc-schoenhage-small": lambda: TruncatedSchoenhageMap(Q, 8, 8),
    "nussbaumer-8x8": lambda: NussbaumerMap(Q, 8, 8),
    "nussbaumer-4x16": lambda: NussbaumerMap(Q, 4, 16),
}

_built: dict[str, RingMap] = {}


def get_map(name: str) -> RingMap:
    if name not in _built:
        _built[name] = MAPS[name]()
    return _built[name]


@pytest.mark.parametrize("name", sorted(MAPS))
def test_map_round_trip(name: str) -> None:
    m = get_map(name)
    rng = random.Random(name)
    for _ in range(2):
        a = rand_poly(rng, m.source_degree, Q)
        parts = m.forward(a)
        assert len(parts) == len(m.targets)
        assert [len(p) for p in parts] == list(m.target_degrees)
        assert all(0 <= x < Q for p in parts for x in p)
        assert m.inverse(parts) == a
    # any ints are accepted and reduced mod q
    big = [rng.randrange(-(10**9), 10**9) for _ in range(m.source_degree)]
    assert m.inverse(m.forward(big)) == [x % Q for x in big]


@pytest.mark.parametrize("name", sorted(MAPS))
def test_map_is_homomorphism(name: str) -> None:
    """inverse(forward(a) * forward(b) mod targets) == a * b mod source (dense random and
    sparse/extreme inputs)."""
    m = get_map(name)
    rng = random.Random("hom" + name)
    n = m.source_degree
    cases = [(rand_poly(rng, n, Q), rand_poly(rng, n, Q))]
    top = [0] * n
    top[-1] = Q - 1
    cases.append((top, [Q - 1] * n))
    for a, b in cases:
        fa, fb = m.forward(a), m.forward(b)
        prods = [ref_mulmod(u, v, t, Q) for u, v, t in zip(fa, fb, m.targets, strict=True)]
        assert m.inverse(prods) == ref_mulmod(a, b, m.source, Q)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_crt_maps_factor_their_source(name: str) -> None:
    m = get_map(name)
    if m.kind != "crt":
        assert m.kind == "embedding"
        assert sum(m.target_degrees) == 2 * m.source_degree  # Schönhage/Nussbaumer blow-up 2
        return
    prod = [1]
    for t in m.targets:
        prod = [int(x) % Q for x in np.convolve(prod, np.array(t, dtype=np.int64))]
    assert tuple(prod) == m.source


@pytest.mark.parametrize("name", sorted(MAPS))
def test_cost_is_data_independent_and_matches_a_real_run(name: str) -> None:
    m = get_map(name)
    rng = random.Random("cost" + name)
    fwd, inv = Cost(), Cost()
    parts = m.forward(rand_poly(rng, m.source_degree, Q), fwd)
    m.inverse(parts, inv)
    assert fwd.as_dict() == m.cost()["forward"]
    assert inv.as_dict() == m.cost()["inverse"]
    assert set(m.cost()["forward"]) == {"add", "mul_const", "scale", "mul_var", "shift"}


def test_shift_only_maps_multiply_by_nothing() -> None:
    for name in ("schoenhage-small", "trunc-schoenhage-32", "nussbaumer-8x8"):
        c = get_map(name).cost()
        assert c["forward"]["mul_const"] == 0 and c["forward"]["shift"] > 0
        assert c["inverse"]["mul_const"] == 0
    # the Good–Thomas 3 x 32 Schönhage multiplies only on the odd axis: one per coefficient of
    # the 32 radix-3 butterflies (each over 32-coefficient blocks)
    assert get_map("schoenhage-3x32").cost()["forward"]["mul_const"] == 32 * 32


def test_corrupted_map_fails_its_construction_check() -> None:
    class Broken(CooleyTukeyMap):
        def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
            u, v = super()._forward(a, ctr)
            return [u, [(x + 1) % self.q for x in v]]

    with pytest.raises(FactorisationError, match="inverse\\(forward\\(a\\)\\) != a"):
        Broken(Q, 4, 5, 7)

    class NotMultiplicative(CooleyTukeyMap):
        """A linear bijection (part 1 doubled, halved back): round trips, but does not
        multiply correctly."""

        def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
            u, v = super()._forward(a, ctr)
            return [u, [2 * x % self.q for x in v]]

        def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
            half = pow(2, -1, self.q)
            return super()._inverse([parts[0], [half * x % self.q for x in parts[1]]], ctr)

    with pytest.raises(FactorisationError, match="not a ring homomorphism"):
        NotMultiplicative(Q, 4, 5, 7)


# -- constants -------------------------------------------------------------------------------


def test_good_thomas_constants() -> None:
    m = get_map("good-thomas-17x3x2")
    assert isinstance(m, GoodThomasMap)
    for n, w in zip(m.axes, m.omegas, strict=True):
        assert is_primitive_root_of_unity(w, n, Q)
        assert pow(w, n, Q) == 1 and all(pow(w, k, Q) != 1 for k in range(1, n))
    # the t_k are exactly the 102 distinct 102nd roots of unity
    ts = {t for _, t in m.points}
    assert len(ts) == 102 and all(pow(t, 102, Q) == 1 for t in ts)
    # the index map is a bijection onto row-major positions and is undone by CRT
    for j in range(102):
        assert index_unmap(index_map(j, (17, 3, 2)), (17, 3, 2)) == j
    assert sorted(m.in_perm) == list(range(102))
    # the Rader axis
    rader = m.dfts[0]
    assert isinstance(rader, RaderDFT)
    g = rader.generator
    assert sorted(pow(g, k, 17) for k in range(16)) == list(range(1, 17))
    assert rader.perm_out == [pow(g, a, 17) for a in range(16)]
    assert all(rader.perm_in[b] * pow(g, b, 17) % 17 == 1 for b in range(16))
    assert rader.kernel == [pow(rader.w, pow(g, c, 17), Q) for c in range(16)]


def test_rader_matches_the_defining_sum_on_blocks() -> None:
    gen = next(g for g in range(2, Q) if all(pow(g, 4590 // r, Q) != 1 for r in (2, 3, 5, 17)))
    w = pow(gen, 3 * 4590 // 17, Q)  # not the smallest 17th root: any primitive one works
    assert is_primitive_root_of_unity(w, 17, Q)
    rader = RaderDFT(Q, 17, w)
    direct = DirectDFT(FieldAction(Q, w, 17))
    rng = random.Random(17)
    line = [rand_poly(rng, 5, Q) for _ in range(17)]
    for inverse in (False, True):
        assert rader.apply(line, inverse, Cost()) == direct.apply(line, inverse, Cost())
    # Rader folds its normalisations into the kernel: no scale operations
    c = Cost()
    rader.apply(line, False, c)
    assert c["scale"] == 0


@pytest.mark.parametrize("paired", [True, False])
def test_rader_leaves_both_ways(paired: bool) -> None:
    """Rader's quadratic leaves (x^2 + 1 and the Bruun factors x^2 +- a x + 1) in the paired
    form (three constant multiplications) or as the 2 x 2 matrix (four): both give the
    defining sum, on random and extreme (0, +-1, q - 1) lines, and the paired form saves one
    multiplication per quadratic leaf."""
    w = next(x for x in range(2, Q) if is_primitive_root_of_unity(x, 17, Q))
    rader = RaderDFT(Q, 17, w, paired_leaves=paired)
    direct = DirectDFT(FieldAction(Q, w, 17))
    rng = random.Random(f"leaves{paired}")
    lines = [[rand_poly(rng, 4, Q) for _ in range(17)]]
    lines += [[[x] * 4 for _ in range(17)] for x in (0, 1, Q - 1, (Q - 1) // 2)]
    lines.append([[Q - 1 if (i + j) % 2 else 1 for j in range(4)] for i in range(17)])
    for line in lines:
        for inverse in (False, True):
            assert rader.apply(line, inverse, Cost()) == direct.apply(line, inverse, Cost())
    quadratic = [m for m in rader.kernel_hat if m.n == 2]
    assert len(quadratic) == 7
    assert all((m.paired() is not None) == paired for m in quadratic)
    c = Cost()
    rader.apply([[1]] * 17, False, c)
    assert c["mul_const"] == (47 if paired else 54)


def test_const_mul_paired_form() -> None:
    """ConstMul of degree 2: the paired form equals the matrix product for every modulus
    x^2 + a x + b with b = +-1 and random constants, on all-extreme and random inputs; other
    moduli, and matrices with a trivial entry, keep the matrix."""
    rng = random.Random("paired")
    for b in (1, Q - 1):
        for a in (0, 58, 1229, Q - 58):
            g = (b, a, 1)
            for _ in range(20):
                k = [rng.randrange(2, Q - 1), rng.randrange(2, Q - 1)]
                fast, plain = ConstMul(Q, g, k), ConstMul(Q, g, k, paired=False)
                assert fast.paired() is not None and plain.paired() is None
                inputs = [rand_poly(rng, 2, Q) for _ in range(8)]
                inputs += [[x, y] for x in (0, 1, Q - 1) for y in (0, 1, Q - 1)]
                for x in inputs:
                    want = ref_mulmod(x, k, g, Q)
                    assert fast.mul(x) == plain.mul(x) == want
                c = Cost()
                fast.mul([1, 1], c)
                assert c["mul_const"] <= 3
    assert ConstMul(Q, (5, 58, 1), [7, 9]).paired() is None  # b = 5: M[0][1] != +-M[1][0]
    assert ConstMul(Q, (1, 0, 1), [1, 9]).paired() is None  # an entry of +-1: matrix is cheaper


def test_schoenhage_twiddles_are_shifts_by_powers_of_x() -> None:
    m = get_map("schoenhage-3x32")
    assert isinstance(m, SchoenhageMap)
    consts = m.constants()
    assert consts["shift_unit"] == 2  # x^2 is a principal 32nd root of unity in x^32 + 1
    shifts = consts["shift_dft"]["shifts"]
    assert shifts[0] == [2 * j for j in range(16)]  # first stage: x^(2j), j < 16
    assert [len(s) for s in shifts] == [16, 8, 4, 2, 1]
    # x^2 has order 32 in Z_q[x]/(x^32 + 1): (x^2)^16 = x^32 = -1
    act = ShiftAction(Q, 32, 2, 32)
    one = [1] + [0] * 31
    assert act.mul(one, 16, Cost()) == [Q - 1] + [0] * 31
    with pytest.raises(NoRootOfUnityError, match="principal"):
        ShiftAction(Q, 32, 2, 64)


def test_bruun_factors_of_x32_plus_1(galois_mod) -> None:
    """The four Bruun leaves are x^8 + alpha x^4 + 1 (as in the slides), multiply to x^32 + 1
    in galois, and each is a product of two irreducible quartics x^4 +- gamma x^2 - 1."""
    galois = galois_mod
    tree = get_map("bruun-tree")
    leaves = tree.targets
    assert len(leaves) == 4
    alphas = set()
    for f in leaves:
        assert f[0] == 1 and f[8] == 1 and all(f[i] == 0 for i in (1, 2, 3, 5, 6, 7))
        alphas.add(f[4])
    assert alphas == {58, Q - 58, 2116, Q - 2116}
    gf = galois.GF(Q)
    prod = galois.Poly([1], field=gf)
    for f in leaves:
        prod *= galois.Poly(list(f), field=gf, order="asc")
    assert prod == galois.Poly.Degrees([32, 0], [1, 1], field=gf)
    for f in leaves:
        gamma = sqrt_mod(-f[4] - 2, Q)  # x^8 + a x^4 + 1 = (x^4 + g x^2 - 1)(x^4 - g x^2 - 1)
        assert gamma is not None
        for sign in (1, -1):
            quartic = galois.Poly.Degrees([4, 2, 0], [1, sign * gamma % Q, Q - 1], field=gf)
            # a quartic is irreducible iff it has no factor of degree 1 or 2, i.e. no common
            # factor with x^(q^2) - x (the product of all monic irreducibles of degree 1 and 2)
            xq2 = pow(galois.Poly.Identity(gf), Q * Q, quartic)
            assert galois.gcd(xq2 - galois.Poly.Identity(gf), quartic) == galois.Poly([1], gf)
            assert galois.Poly(list(f), field=gf, order="asc") % quartic == galois.Poly(
                [0], field=gf
            )


def test_bruun_constants_satisfy_their_equations() -> None:
    m = get_map("bruun-x16+c")
    assert isinstance(m, BruunMap)
    assert m.f * m.f % Q == 9 and m.e * m.e % Q == (2 * m.f - 0) % Q
    for p in ("ct2-binomial-t", "ct2-general"):
        ct = get_map(p)
        assert isinstance(ct, CooleyTukeyMap)
        r1, r2 = ct.r1, ct.r2
        assert ct.source[0] == r1 * r2 % Q and ct.source[ct.m] == (-(r1 + r2)) % Q


def test_radix2_dft_against_definition() -> None:
    act = ShiftAction(Q, 8, 1, 16)
    rng = random.Random(2)
    line = [rand_poly(rng, 8, Q) for _ in range(16)]
    fast = Radix2DFT(act).apply(line, False, Cost())
    assert fast == DirectDFT(act).apply(line, False, Cost())
    back = Radix2DFT(act).apply(fast, True, Cost())
    assert back == [[16 * x % Q for x in blk] for blk in line]


# -- map refusals ----------------------------------------------------------------------------


def test_map_refusals_name_the_rule() -> None:
    with pytest.raises(NoRootOfUnityError, match=r"4 does not divide q-1=4590"):
        GoodThomasMap(Q, 16, (4, 3))
    with pytest.raises(SizeError, match=r"pairwise coprime sizes: gcd\(6, 3\) = 3"):
        GoodThomasMap(Q, 16, (6, 3))
    with pytest.raises(NoRootOfUnityError, match=r"no primitive 7-th root of unity"):
        GoodThomasMap(Q, 4, (7,))
    nonsquare = next(x for x in range(2, Q) if sqrt_mod(x, Q) is None)
    with pytest.raises(NoSquareRootError, match="Cooley–Tukey split of x\\^16 - c needs sqrt"):
        CooleyTukeyMap.binomial(Q, 8, nonsquare)
    with pytest.raises(NoSquareRootError, match=r"q = 1 mod 4"):
        BruunMap(4621, 32, 0, 1)
    with pytest.raises(NoSquareRootError, match=r"needs f = sqrt\(d\)"):
        BruunMap(Q, 16, 0, nonsquare)
    with pytest.raises(NoRootOfUnityError, match=r"needs l=32 to divide 16"):
        SchoenhageMap(Q, 4, 32)
    with pytest.raises(NoRootOfUnityError, match=r"k \| r"):
        NussbaumerMap(Q, 16, 8)
    with pytest.raises(NoRootOfUnityError, match="cube root of unity"):
        CooleyTukey3Map(4583, 4)
    with pytest.raises(InputShapeError):
        get_map("ct2-general").forward([1] * 9)
    with pytest.raises(InputShapeError):
        get_map("ct2-general").inverse([[1] * 4])
    assert issubclass(MapError, ValueError)


def test_map_tree_checks_its_children() -> None:
    root = CooleyTukeyMap.binomial(Q, 8, 1)
    with pytest.raises(FactorisationError, match="child 0"):
        MapTree(root, [CooleyTukeyMap.binomial(Q, 4, 4), None])
    with pytest.raises(FactorisationError, match="children"):
        MapTree(root, [None])


# -- pipelines -------------------------------------------------------------------------------

PIPELINE_CASES = [(GSB, 761, 4591), (GRB, 761, 4591), (SN, 761, 4591), (SN, 653, 4621)] + [
    (name, 857, 5167) for name in PIPELINE_NAMES
]


def input_pairs(p: int, q: int, seed: str) -> list[tuple[str, list[int], list[int]]]:
    rng = random.Random(seed)
    h = (q - 1) // 2
    top = [0] * (p - 1) + [1]
    sparse_a = [0] * p
    sparse_b = [0] * p
    for i in rng.sample(range(p), 4):
        sparse_a[i] = rng.choice([1, -1, q - 1, h])
    for i in rng.sample(range(p), 3):
        sparse_b[i] = rng.randrange(-q, q)
    return [
        ("random", rand_poly(rng, p, q), [rng.randrange(-(10**6), 10**6) for _ in range(p)]),
        ("all q-1 / -(q-1)", [q - 1] * p, [-(q - 1)] * p),
        ("alternating +-(q-1)", [(q - 1) * (-1) ** i for i in range(p)], [q - 1] * p),
        ("all (q-1)/2", [h] * p, [-h if i % 3 else h for i in range(p)]),
        ("x^(p-1) * x^(p-1)", top, top),
        ("x^(p-1) * random", top, rand_poly(rng, p, q)),
        ("sparse", sparse_a, sparse_b),
        ("short inputs", [3, -1, 4], [1, 5]),
    ]


@pytest.mark.parametrize(("name", "p", "q"), PIPELINE_CASES)
def test_pipeline_against_schoolbook_and_galois(name: str, p: int, q: int, galois_mod) -> None:
    pipe = build_pipeline(name, p, q)
    assert pipe.tree.source_degree >= 2 * p - 1
    for label, a, b in input_pairs(p, q, f"{name}/{p}"):
        got = pipe.polymul(a, b)
        want = ref_ntru(a, b, p, q)
        assert len(got) == p and all(-(q - 1) // 2 <= x <= (q - 1) // 2 for x in got)
        assert got == want, label
        if label in ("random", "all q-1 / -(q-1)", "x^(p-1) * x^(p-1)"):
            assert got == galois_ntru(galois_mod, a, b, p, q), label


@pytest.mark.parametrize(("name", "p", "q"), PIPELINE_CASES)
def test_polymul_small(name: str, p: int, q: int) -> None:
    pipe = build_pipeline(name, p, q)
    rng = random.Random(f"small/{name}/{p}")
    a = [rng.randrange(-(q // 2), q // 2 + 1) for _ in range(p)]
    s = [rng.choice((-1, 0, 1)) for _ in range(p)]
    assert pipe.polymul_small(a, s) == ref_ntru(a, s, p, q) == pipe.polymul(a, s)
    with pytest.raises(InputShapeError, match=r"-1\.\.1"):
        pipe.polymul_small(a, [2, *s[1:]])


@pytest.mark.parametrize("p", [11, 31])
def test_pipelines_for_small_p(p: int) -> None:
    """Sizes are derived from p: small rings get small pipelines that are still exact."""
    plans = choose_pipelines(p, Q)
    assert [c.name for c in plans] == ([GRB, SN] if p == 11 else [GSB, GRB, SN])
    rng = random.Random(p)
    for plan in plans:
        pipe = build_pipeline(plan.name, p, Q)
        assert pipe.tree.source_degree == plan.degree >= 2 * p - 1
        a, b = rand_poly(rng, p, Q), [rng.randrange(-Q, Q) for _ in range(p)]
        assert pipe.polymul(a, b) == ref_ntru(a, b, p, Q)
    with pytest.raises(ParameterError, match="too small"):
        plan_pipeline(GSB, 11, Q)


def test_pipeline_rejects_too_long_inputs() -> None:
    pipe = build_pipeline(SN, 761, 4591)
    with pytest.raises(InputShapeError):
        pipe.polymul([1] * 762, [1])


def test_pipeline_shapes_match_the_slides() -> None:
    gsb = build_pipeline(GSB, 761, 4591)
    assert gsb.tree.source_degree == 1536
    assert gsb.leaf_histogram() == {8: 384}  # 96 x (x^32 + 1) -> Bruun -> 4 x degree 8 each
    assert len(gsb.tree.root.targets) == 96
    assert {t[4] for t in gsb.tree.targets} == {58, Q - 58, 2116, Q - 2116}
    # Phi_17(x^96) = (x^1632 - 1)/(x^96 - 1): the 6 pieces at Rader's zero frequency left out
    grb = build_pipeline(GRB, 761, 4591)
    assert grb.tree.source_degree == 1536 and grb.plan.modulus == "Phi_17(x^96)"
    assert grb.leaf_histogram() == {8: 192}
    kinds = [type(c).__name__ if c is not None else None for c in grb.tree.children]
    assert kinds.count("CooleyTukeyMap") == 48 and kinds.count("BruunMap") == 48
    # where the product does not fit below deg Phi_17(x^96) (2p - 1 = 1573), the whole
    # x^1632 - 1 with its 6 DC pieces of degree 16 ("192 size-8 + 6 size-16")
    whole = build_pipeline(GRB, 787, 4591)
    assert whole.tree.source_degree == 1632 and whole.plan.modulus == "x^1632 - 1"
    assert whole.leaf_histogram() == {8: 192, 16: 6}
    kinds = [type(c).__name__ if c is not None else None for c in whole.tree.children]
    assert kinds.count(None) == 6
    rng = random.Random("787")
    a, b = rand_poly(rng, 787, Q), rand_poly(rng, 787, Q)
    assert whole.polymul(a, b) == ref_ntru(a, b, 787, Q)
    sn = build_pipeline(SN, 761, 4591)
    assert sn.tree.source_degree == 1536 and sn.plan.modulus == "(x^1024 + 1)(x^512 - 1)"
    assert sn.leaf_histogram() == {8: 768}  # 48 x 16 = 768 x (y^8 + 1)


def test_pipeline_costs() -> None:
    for name in PIPELINE_NAMES:
        pipe = build_pipeline(name, 761, 4591)
        br = pipe.cost_breakdown()
        total = Cost(br["forward"]) * 2 + Cost(br["base"]) + Cost(br["inverse"])
        assert pipe.cost() == (total + Cost(br["reduce"])).as_dict()
        assert br["reduce"] == {
            "add": 2 * 760,
            "mul_const": 0,
            "scale": 0,
            "mul_var": 0,
            "shift": 0,
        }
        # a counted real run equals the static count
        ctr = Cost()
        rng = random.Random(name)
        pipe.polymul(rand_poly(rng, 761, Q), rand_poly(rng, 761, Q), ctr)
        assert ctr.as_dict() == pipe.cost()
    assert build_pipeline(GSB, 761, Q).cost_breakdown()["base"]["mul_var"] == 384 * 64
    assert build_pipeline(GRB, 761, Q).cost_breakdown()["base"]["mul_var"] == 192 * 64
    assert build_pipeline(GRB, 787, Q).cost_breakdown()["base"]["mul_var"] == 192 * 64 + 6 * 256
    assert build_pipeline(SN, 761, Q).cost_breakdown()["base"]["mul_var"] == 768 * 64
    # no Schönhage shifts: only the negations the pruned forward makes (0 - x where a zero top
    # block is subtracted), 2 per coefficient position in each forward
    assert build_pipeline(GRB, 761, Q).cost()["shift"] == 2 * 2 * 16
    assert build_pipeline(GRB, 787, Q).cost()["shift"] == 0
    assert build_pipeline(SN, 761, Q).cost()["mul_const"] == 0  # shifts only


def test_cyclotomic_good_thomas_counts_what_it_computes() -> None:
    """Phi_17(x^96): the forward counts the Good–Thomas DFT without what only the 6 left-out
    pieces and the zero top blocks need (the trace pruned), the inverse the DFT on the 96
    pieces plus one subtraction and one n^-1 per output coefficient; both below the whole
    map's, and the map's own checks hold (a CRT map: the kept pieces multiply to the source)."""
    cyc, whole = CyclotomicGoodThomasMap(Q, 16, (17, 3, 2)), GoodThomasMap(Q, 16, (17, 3, 2))
    assert len(cyc.targets) == 96 and cyc.source_degree == 1536
    assert all(k[0] != 0 for k, _ in cyc.points)
    f, i = cyc.forward_cost(), cyc.inverse_cost()
    assert (
        f["add"] < whole.forward_cost()["add"]
        and f["mul_const"] < whole.forward_cost()["mul_const"]
    )
    assert i["scale"] == 1536 and i["add"] < whole.inverse_cost()["add"]
    # a counted run ticks the static count
    ctr = Cost()
    rng = random.Random("phi17")
    cyc.inverse(cyc.forward(rand_poly(rng, 1536, Q), ctr), ctr)
    assert ctr == f + i
    assert cyc.constants()["modulus"] == "Phi_17(x^96)" and len(cyc.constants()["kept"]) == 96
    with pytest.raises(SizeError, match="Rader's prime first"):
        CyclotomicGoodThomasMap(Q, 16, (3, 17, 2))


@pytest.mark.parametrize(("r", "width", "m"), [(17, 6, 1), (17, 6, 16), (5, 3, 4), (41, 2, 3)])
def test_fold_phi_is_the_remainder_modulo_phi(r: int, width: int, m: int) -> None:
    """fold_phi against long division by Phi_r(x^(m*width)) over the integers (Phi is monic):
    random and extreme blocks, the whole remainder and a prefix of it; more blocks than the
    remainder has are refused."""
    n, top = r * width, (r - 1) * width
    deg = m * top  # degree of Phi_r(x^(m*width))
    phi = [0] * (deg + 1)
    for e in range(r):
        phi[e * m * width] = 1

    def remainder(c: list[int]) -> list[int]:
        c = list(c)
        for d in range(len(c) - 1, deg - 1, -1):
            lead = c[d]
            for e, coeff in enumerate(phi):
                c[d - deg + e] -= lead * coeff
        return c[:deg]

    rng = random.Random(f"phi{r}")
    for c in (
        [rng.randrange(-(10**6), 10**6) for _ in range(n * m)],
        [2**15 - 1] * (n * m),
        [(-1) ** i * 2**15 for i in range(n * m)],
    ):
        blocks = [c[j * m : (j + 1) * m] for j in range(n)]
        got = fold_phi(blocks, width, top)
        assert [x for block in got for x in block] == remainder(c)
        assert fold_phi(blocks, width, top - 1) == got[:-1]
    with pytest.raises(SizeError, match="blocks asked"):
        fold_phi([[0] * m for _ in range(n)], width, top + 1)


def test_karatsuba_base_multiplication() -> None:
    kara = build_pipeline(GRB, 761, 4591, "karatsuba")
    rng = random.Random("kara")
    a, b = rand_poly(rng, 761, Q), rand_poly(rng, 761, Q)
    assert kara.polymul(a, b) == ref_ntru(a, b, 761, Q)
    school = build_pipeline(GRB, 761, 4591)
    assert kara.cost()["mul_var"] < school.cost()["mul_var"]
    for g in [(Q - 3, 0, 0, 0, 0, 0, 0, 0, 1), (1, 0, 0, 0, 58, 0, 0, 0, 1)]:
        x, y = rand_poly(rng, 8, Q), rand_poly(rng, 8, Q)
        want = ref_mulmod(x, y, g, Q)
        assert BaseMul(Q, g, "schoolbook").mul(x, y) == want
        assert BaseMul(Q, g, "karatsuba").mul(x, y) == want
    assert BaseMul(Q, (1, *[0] * 15, 1), "karatsuba").cost()["mul_var"] == 3 * 3 * 16


# -- chooser ---------------------------------------------------------------------------------


def test_chooser_for_the_three_parameter_sets() -> None:
    names = {pq: [c.name for c in choose_pipelines(*pq)] for pq in PARAMS}
    assert names[(761, 4591)] == [GSB, GRB, SN]
    assert names[(653, 4621)] == [SN]
    assert names[(857, 5167)] == [GSB, GRB, SN]
    for pq in PARAMS:
        for plan in choose_pipelines(*pq):
            assert plan.degree >= 2 * pq[0] - 1 and plan.note
    big = {c.name: c for c in choose_pipelines(857, 5167)}
    # Phi_41(x^96): x^3936 - 1 without its 96 DC coefficients
    assert big[GSB].degree == 3072 and big[GRB].sizes["r"] == 41 and big[GRB].degree == 3840
    assert big[SN].modulus == "x^2048 - 1"
    small = {c.name: c for c in choose_pipelines(761, 4591)}
    assert small[GRB].sizes["r"] == 17 and small[GSB].sizes == {"m": 16, "l": 32, "odd": 3}


def test_chooser_refusals_name_the_rule() -> None:
    why = explain_pipelines(653, 4621)
    assert "q = 3 (mod 4)" in why[GSB] and why[GSB].startswith("refused")
    assert "needs a prime r >= 5 dividing q-1 = 4620" in why[GRB]
    assert not why[SN].startswith("refused")
    with pytest.raises(NoSquareRootError, match=r"q=4621 = 1 \(mod 4\)"):
        build_pipeline(GSB, 653, 4621)
    with pytest.raises(NoRootOfUnityError, match=r"primes >= 5 dividing q-1: 5, 7, 11"):
        plan_pipeline(GRB, 653, 4621)
    # q = 4583 is prime, = 3 mod 4, and 3 does not divide q - 1 = 4582
    with pytest.raises(
        NoRootOfUnityError,
        match=r"q=4583 has no cube root of unity \(3 does not divide q-1=4582\)",
    ):
        plan_pipeline(GSB, 761, 4583)
    with pytest.raises(NoRootOfUnityError, match="no cube root of unity"):
        build_pipeline(GRB, 761, 4583)
    assert [c.name for c in choose_pipelines(761, 4583)] == [SN]
    # q = 4603 = 3 (mod 8): Bruun stops at x^16 +- e x^8 - 1
    with pytest.raises(NoSquareRootError, match=r"3 \(mod 8\)"):
        plan_pipeline(GSB, 761, 4603)
    with pytest.raises(ParameterError, match=r"p=760 is not prime"):
        choose_pipelines(760, 4591)
    with pytest.raises(ParameterError, match=r"p=763 is not prime"):
        build_pipeline(SN, 763, 4591)
    with pytest.raises(ParameterError, match=r"q=4592 is not an odd prime"):
        choose_pipelines(761, 4592)
    with pytest.raises(UnknownNameError, match="unknown pipeline"):
        build_pipeline("good-thomas", 761, 4591)
