"""The interval analysis is proven, and confronted with the worst inputs we can find.

* Every transfer-function application made while analysing every kernel nttgen ships (every
  preset on every ISA and pipeline) and the portable C of every test ring is proven:
  exhaustively for 16-bit lanes, with z3 for 32-bit lanes (see nttgen.proofs).
* The provers reject false claims (negative controls for each method), and a transfer function
  made unsound by the smallest amount fails the proofs of the shipped kernels.
* Inputs built to maximise growth never make the checked evaluator overflow, stay inside the
  proven bounds, and come close to them (the analysis is tight, not merely safe).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from conftest import ALL_RINGS, ring_id
from nttgen.adversary import maximise_growth
from nttgen.dsl import semantics
from nttgen.dsl import transfer as dsl_transfer
from nttgen.emit.files import CFileWriter
from nttgen.emit.isa import ISAS
from nttgen.emit.ntru_files import NTRU_PIPELINES
from nttgen.families import all_presets, family_of, usable_isas
from nttgen.generate import kernel_set
from nttgen.interp import transfer
from nttgen.interp.bounds import Application
from nttgen.interp.transfer import Range
from nttgen.lanes import I16, I32, LaneType
from nttgen.plan.constants import Arith
from nttgen.proofs import (
    applications,
    enumerated_product_range,
    montgomery_exact_16,
    montgomery_range_16,
    prove,
    unproven,
    z3_montgomery_exact,
    z3_product_range,
)
from nttgen.rings import PRESETS


@pytest.mark.parametrize("ring", ALL_RINGS, ids=ring_id)
def test_every_transfer_application_is_proven(ring) -> None:  # type: ignore[no-untyped-def]
    ks = kernel_set(ring, "c")
    count, failed = unproven(ks.functions.values(), ks.arith)
    assert count
    assert not failed, failed[:3]


def shipped_kernel_sets() -> list[tuple[str, str, str | None]]:
    """(preset, ISA, pipeline) of every kernel set nttgen ships: each preset ring once (a
    scheme alias shares its ring), on every ISA it is generated for, through every pipeline
    (None: the ring family has one program)."""
    sets, rings = [], set()
    for name, ring in all_presets().items():
        if repr(ring) in rings:
            continue
        rings.add(repr(ring))
        family = family_of(ring)
        for isa in usable_isas(ring, list(ISAS)):
            sets.extend((name, isa, v) for v in family.variants(ring) or [None])
    return sets


def _writer(name: str, isa: str, variant: str | None) -> CFileWriter:
    ring = all_presets()[name]
    return family_of(ring).writer(ring, isa, variant)


SHIPPED = shipped_kernel_sets()
SHIPPED_IDS = ["-".join(filter(None, s)) for s in SHIPPED]


@pytest.mark.parametrize("name,isa,variant", SHIPPED, ids=SHIPPED_IDS)
def test_shipped_kernels_are_proven(name: str, isa: str, variant: str | None) -> None:
    """Every application of the analysis of a shipped kernel set: the bounds its reductions
    were placed by, and the output contracts its header states, hold for every input."""
    w = _writer(name, isa, variant)
    count, failed = unproven(w.functions.values(), w.arith)
    assert count
    assert not failed, failed[:3]
    # and an unsound version of each transfer function it applies is caught (below)
    applied = {transfer_function_of(a.kind) for a in applications(w.functions.values(), w.arith)}
    assert applied <= {fn for fn, *_ in MUTATED}, applied


def test_every_isa_and_pipeline_is_shipped() -> None:
    """The list above is not quietly short: all five ring families' presets, every ISA, the
    three NTRU Prime pipelines."""
    isas = {isa for _, isa, _ in SHIPPED}
    assert isas == set(ISAS), isas
    assert {v for _, _, v in SHIPPED} == {None, *NTRU_PIPELINES}
    assert {n for n, _, _ in SHIPPED} >= {"mlkem", "mldsa", "sntrup761"}


def _narrowed(sound: Callable[..., Range]) -> Callable[..., Range]:
    """``sound`` with its upper bound claimed one lower: the smallest unsound change."""

    def unsound(*args: Any) -> Range:
        lo, hi = sound(*args)
        return lo, hi - 1

    return unsound


# each transfer function the shipped kernels apply, with a kernel set that applies it
MUTATED = [
    ("add", "mlkem", "c", None),
    ("sub", "mlkem", "avx2", None),
    ("montmul", "mlkem", "c", None),
    ("montmul", "mldsa", "c", None),
    ("montmul_var", "mldsa", "avx2", None),
    ("montmul_twist", "newhope512", "avx2", None),
    ("montmul_twist", "kyber-r1", "avx512", None),
    ("shoupmul", "mldsa", "avx2", None),
    ("shoupmul", "mlkem", "neon", None),
    ("barrett", "mlkem", "c", None),
    ("barrett", "mldsa", "avx2", None),
    ("cond_add_q", "mlkem", "c", None),
    ("cond_add_q", "mldsa", "c", None),
    ("mullo", "mlkem", "avx2", None),
    ("madd", "sntrup761", "avx2", "good-rader-bruun"),
    ("mredw", "sntrup761", "avx2", "good-rader-bruun"),
    ("mulw", "mldsa", "avx2", None),
    ("mredw", "mldsa", "neon", None),
    ("barrett_coarse", "sntrup761", "avx2", "good-rader-bruun"),
    ("barrett_coarse", "mldsa", "avx2", None),
]


def transfer_function_of(kind: str) -> str:
    """The transfer function (in nttgen.dsl.transfer) an application of ``kind`` used."""
    return {"addw": "add"}.get(kind, kind.split(":")[0])


@pytest.mark.parametrize("fn,name,isa,variant", MUTATED, ids=lambda v: v or "")
def test_an_unsound_transfer_function_fails_the_proofs(
    monkeypatch: pytest.MonkeyPatch, fn: str, name: str, isa: str, variant: str | None
) -> None:
    """With one transfer function claiming one value less than it can reach, the analysis of a
    shipped kernel set that applies it makes a false claim, and the proof of that claim fails:
    the proofs above catch an unsound analysis wherever it is applied, not only where a random
    or extreme input happens to reach the missing value."""
    w = _writer(name, isa, variant)
    count, failed = unproven(w.functions.values(), w.arith)
    assert count and not failed
    monkeypatch.setattr(dsl_transfer, fn, _narrowed(getattr(dsl_transfer, fn)))
    _, failed = unproven(w.functions.values(), w.arith)
    assert fn in {transfer_function_of(p.application.kind) for p in failed}, failed[:3]


def test_montgomery_exactness() -> None:
    for q in (3329, 7681, 12289, 32257):
        assert montgomery_exact_16(q)
    assert z3_montgomery_exact(8380417, 32)
    assert z3_montgomery_exact(2147483137, 32)


@pytest.mark.parametrize("arith", [Arith(3329, I16), Arith(8380417, I32)], ids=["16", "32"])
def test_false_claims_are_refuted(arith: Arith) -> None:
    q = arith.q
    top = arith.lane.max
    bad = [
        Application("add", ((0, 10), (0, 10)), (0, 19)),
        Application("sub", ((0, 10), (0, 10)), (-9, 10)),
        Application("barrett", ((-top, top),), (-(q // 4), q // 4)),
        Application("cond_add_q", ((-q, q - 1),), (1, q - 1)),
        Application("montmul", ((-top, top), (q // 2, q // 2)), (-(q // 4), q // 4)),
        Application("montmul_var", ((-q, q), (-q, q)), (-(q // 8), q // 8)),
    ]
    # the coarse reduction's range is wider than the centred one (2160 for q = 3329, 0.75q
    # for ML-DSA's q from the whole room its rounding leaves)
    room = arith.coarse_room
    bad.append(Application("barrett_coarse", ((-room, room),), (-(q // 2), q // 2)))
    for app in bad:
        assert not prove(app, arith).ok, app


@pytest.mark.parametrize("isa", ["c", "avx2"])
@pytest.mark.parametrize("name", ["mlkem", "kyber-r1", "mldsa", "newhope512"])
def test_worst_case_inputs(name: str, isa: str) -> None:
    """On SIMD ISAs ``ntt`` is a call of ``ntt_from``: the search sees the callee's values."""
    ks = kernel_set(PRESETS[name], isa)
    for op in ("ntt", "intt", "basemul", "reduce"):
        w = maximise_growth(ks.functions[op], ks.arith, sweeps=2)  # checked: raises on overflow
        assert w.peak <= w.bound, (op, w.peak, w.bound)
        if op == "ntt" and ks.ring.lane.bits == 16:
            # the forward transform is linear in its inputs until the first reduction, so the
            # search steers it well: the bound must be near what it finds (tight, not just safe)
            assert w.peak >= 0.6 * w.bound, (op, w.peak, w.bound)


@pytest.mark.parametrize("ring", [r for r in ALL_RINGS if r.lane.bits == 32], ids=ring_id)
def test_shoup_kernels_are_proven(ring) -> None:  # type: ignore[no-untyped-def]
    """x86 builds 32-bit rings with q < 2^27 with Shoup products by constants: every
    application their analysis makes is proven too, Shoup products among them. Larger q keep
    Montgomery products (Shoup's results, up to 1.25q, would not leave the sums room)."""
    ks = kernel_set(ring, "avx2")
    if ring.q >= 1 << 27:
        assert ks.arith.const_mul == "montgomery"
        return
    assert ks.arith.const_mul == "shoup"
    assert any(a.kind == "shoupmul" for a in applications(ks.functions.values(), ks.arith))
    _, failed = unproven(ks.functions.values(), ks.arith)
    assert not failed, failed[:3]


@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=ring_id)
def test_neon_shoup2_kernels_are_proven(ring) -> None:  # type: ignore[no-untyped-def]
    """NEON builds ML-KEM and ML-DSA with Shoup products for the doubling high product
    (sqdmulh): every application of their analysis is proven, those products among them."""
    ks = kernel_set(ring, "neon")
    assert ks.arith.const_mul == "shoup2"
    assert any(a.kind == "shoupmul" for a in applications(ks.functions.values(), ks.arith))
    _, failed = unproven(ks.functions.values(), ks.arith)
    assert not failed, failed[:3]


@pytest.mark.parametrize(
    "arith",
    [Arith(3329, I16), Arith(8380417, I32), Arith(3329, I16, "shoup2"),
     Arith(8380417, I32, "shoup2")],
    ids=["16", "32", "16-doubling", "32-doubling"],
)  # fmt: skip
def test_false_shoup_claims_are_refuted(arith: Arith) -> None:
    """The transfer function's range of a full-range Shoup product is proven; a claim that it
    stays in [0, q), or a range one shorter at either end, is refuted."""
    q, lane = arith.q, arith.lane
    full, z = (lane.min, lane.max), (q // 2, q // 2)
    lo, hi = transfer.shoupmul(full, arith)
    assert prove(Application("shoupmul", (full, z), (lo, hi)), arith).ok
    for bad in ((0, q - 1), (lo + 1, hi), (lo, hi - 1)):
        assert not prove(Application("shoupmul", (full, z), bad), arith).ok, bad


@pytest.mark.parametrize("q", [3329, 7681, 12289, 4591])
def test_the_16_bit_montgomery_range_is_exact(q: int) -> None:
    """montgomery_range_16 (every m at the ends of its residue class) equals the range of the
    reduction evaluated on every product of random ranges, wide and narrow."""
    arith = Arith(q, I16)
    rng = np.random.default_rng(q)
    for width in (1, 7, 300, 70_000, 3_000_000):
        lo = int(rng.integers(-(q << 15), (q << 15) - width))
        x = np.arange(lo, lo + width, dtype=np.int64)
        m = semantics.mullo(semantics.wrap(x, arith.lane), np.int64(arith.qinv), arith.lane)
        r = (x - m * q) >> 16
        assert montgomery_range_16((lo, lo + width - 1), arith) == (int(r.min()), int(r.max()))


def test_product_ranges_are_exact_and_false_claims_refuted() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        a = sorted(int(v) for v in rng.integers(-40_000, 40_000, 2))
        b = sorted(int(v) for v in rng.integers(-40_000, 40_000, 2))
        x = np.arange(a[0], a[1] + 1, dtype=np.int64)[:, None]
        y = np.arange(b[0], b[1] + 1, dtype=np.int64)[None, :: max(1, (b[1] - b[0]) // 300)]
        y = np.concatenate([y, [[b[1]]]], axis=1)
        lo, hi = enumerated_product_range((a[0], a[1]), (b[0], b[1]))
        assert (lo, hi) == (int((x * y).min()), int((x * y).max()))
        assert z3_product_range((a[0], a[1]), (b[0], b[1]), (lo, hi))
        assert not z3_product_range((a[0], a[1]), (b[0], b[1]), (lo, hi - 1))
        assert not z3_product_range((a[0], a[1]), (b[0], b[1]), (lo + 1, hi))
    wide = (-(1 << 40), 1 << 40)  # beyond enumeration: z3 at both ends of one operand
    assert z3_product_range(wide, (-3, 5), (-(5 << 40), 5 << 40))
    assert not z3_product_range(wide, (-3, 5), (-(5 << 40) + 1, 5 << 40))
    lanes32 = Arith(8380417, LaneType(32))
    big = (-(1 << 30), 1 << 30)
    claim = Application("montmul_var", (big, big), transfer.montmul_var(big, big, lanes32))
    ok = prove(claim, lanes32)
    assert ok.ok and "z3" in ok.method
