"""One contract per ring: every ISA's entry points accept and leave the ranges the portable C
publishes, and those ranges chain along the schemes' flows (FIPS 203's K-PKE for 16-bit
lanes, FIPS 204's products for 32-bit lanes), for every ISA alone and for the front end over
all of them. Checked from the manifests, as a user's tool would read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import extreme_custom_rings
from nttgen.emit.isa import ISAS
from nttgen.flows import (
    Contract,
    check_flow,
    contracts_of_manifest,
    flows_for,
    front_end_contracts,
    intt_bound,
    kpke_flows,
)
from nttgen.generate import generate, kernel_set
from nttgen.rings import PRESETS, Ring

ROOT = Path(__file__).resolve().parents[1]
NTT_PRESETS = [name for name in PRESETS if (ROOT / "generated" / name).is_dir()]


def _lane(ring: Ring) -> tuple[int, int]:
    return ring.lane.min, ring.lane.max


@pytest.mark.parametrize("name", NTT_PRESETS)
def test_the_checked_in_contracts_chain_on_every_isa_and_the_front_end(name: str) -> None:
    ring = PRESETS[name]
    directory = ROOT / "generated" / name
    front = json.loads((directory / f"nttgen_{ring.c_name}.json").read_text())
    per_isa = []
    for isa in front["isas"]:
        manifest = json.loads((directory / f"{isa['stem']}.json").read_text())
        contracts = contracts_of_manifest(manifest)
        per_isa.append(contracts)
        for flow in flows_for(ring.name, ring.q, ring.lane.bits):
            assert check_flow(flow, contracts, _lane(ring)) == [], (name, isa["name"])
    assert len(per_isa) >= 6  # c, avx2, avx512, neon and the RVV variants
    for flow in flows_for(ring.name, ring.q, ring.lane.bits):
        assert check_flow(flow, front_end_contracts(per_isa), _lane(ring)) == [], name


@pytest.mark.parametrize("name", NTT_PRESETS)
def test_every_isa_meets_the_published_contract(name: str) -> None:
    """Each ISA's proven ranges lie inside the ring's contract: inputs accept at least, and
    outputs leave at most, what the portable C publishes; the inverse NTT's output is within
    the flows' bound."""
    ring = PRESETS[name]
    published = kernel_set(ring, "c").published
    assert published is not None
    bound = intt_bound(ring.name, ring.q, ring.lane.bits)
    if bound is not None:
        assert published.outputs["intt"]["a"] == (-bound, bound)
    for isa in ISAS:
        ks = kernel_set(ring, isa)
        for op, fn in ks.functions.items():
            if fn.internal or op in ("to_standard", "from_standard"):
                continue  # the order conversions take and leave any lane values
            for buf, (lo, hi) in fn.contract.inputs.items():
                want = published.input(op, buf)
                assert want is not None and lo <= want[0] and want[1] <= hi, (isa, op, buf)
            for buf, (lo, hi) in fn.contract.outputs.items():
                want = published.output(op, buf)
                if want is None:  # no step constrains it: each ISA keeps its own range
                    assert op in ("intt", "intt_vec", "tomont", "frommont"), (isa, op, buf)
                    continue
                assert want[0] <= lo and hi <= want[1], (isa, op, buf)


@pytest.mark.parametrize("ring", extreme_custom_rings(), ids=lambda r: r.name)
def test_custom_rings_chain_on_the_portable_c_and_avx2(ring: Ring) -> None:
    per_isa = []
    for isa in [i for i in ("c", "avx2") if ring.n >= 2 * ISAS[i].lanes_for(ring.lane)]:
        contracts = contracts_of_manifest(json.loads(generate(ring, isa).manifest))
        per_isa.append(contracts)
        for flow in flows_for(ring.name, ring.q, ring.lane.bits):
            assert check_flow(flow, contracts, _lane(ring)) == [], (ring.name, isa)
    for flow in flows_for(ring.name, ring.q, ring.lane.bits):
        assert check_flow(flow, front_end_contracts(per_isa), _lane(ring)) == [], ring.name


def test_the_checker_reports_contracts_that_do_not_chain() -> None:
    """ML-KEM's NEON contracts as they were before every ISA met one contract: its ntt left
    [-31874, 31874], so KeyGen's t_hat = tomont(p) + e_hat left int16; and a front end over
    it and AVX2 promised an ntt output that AVX2's basemul_acc did not accept."""
    q, lane = 3329, (-32768, 32767)
    hat = {"a": (-31874, 31874), "b": (-31874, 31874)}
    neon = {
        "ntt": Contract({"a": (-3328, 3328)}, {"a": (-31874, 31874)}),
        "basemul_acc": Contract(hat, {"r": (-1664, 1664)}),
        "intt": Contract({"a": (-18830, 21366)}, {"a": (-924, 4253)}),
        "tomont": Contract({"a": lane}, {"a": (-1664, 4993)}),
        "reduce": Contract({"a": lane}, {"a": (0, q - 1)}),
    }
    keygen = kpke_flows(q)[0]
    problems = check_flow(keygen, neon, lane)
    assert any("t_hat = p + e_hat" in p and "leaves the lanes" in p for p in problems), problems
    avx2 = dict(neon)
    avx2["basemul_acc"] = Contract(
        {"a": (-16180, 16179), "b": (-16180, 16179)}, {"r": (-9129, 9130)}
    )
    avx2["ntt"] = Contract({"a": (-3328, 3328)}, {"a": (-16180, 16179)})
    front = front_end_contracts([avx2, neon])
    problems = check_flow(keygen, front, lane)
    assert any("outside basemul_acc's input" in p for p in problems), problems
