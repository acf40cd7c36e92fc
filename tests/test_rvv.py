"""RISC-V Vector backends under QEMU at VLEN 128, 256 and 512: the VLEN-agnostic strip-mined
code and the VLEN-specialised code (on cores of their VLEN and longer), both shuffle styles and
larger LMULs, each checked against the evaluator, the portable C compiled for RV64GC and the
exact product; and the refusals (a VLEN too short, bad names)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nttgen
from conftest import ALL_RINGS, require_isa, require_tool
from nttgen import IsaUnavailableError, UnknownNameError
from nttgen.api import _LOADED
from nttgen.dsl.ir import Loop, walk
from nttgen.emit.isa import isa_class
from nttgen.emit.isa.rvv_backends import FIXED_PLAN_REGISTERS
from nttgen.emit.strip_emit import vector_loops
from nttgen.families import clear_caches
from nttgen.generate import generate, kernel_set
from nttgen.reference import schoolbook
from nttgen.rings import PRESETS
from nttgen.verify import coefficient_cases, verify_kernel

GENERATED = Path(__file__).resolve().parent.parent / "generated"
GENERATED_PRESETS = ("mlkem", "mldsa", "kyber-r1", "newhope512", "newhope1024")

# (ISA, VLEN) beyond each ISA at its own VLEN, which every ISA test already covers
VLEN_CASES = [("rvv", 256), ("rvv", 512), ("rvv128", 256), ("rvv128", 512), ("rvv256", 512)]


def _cases() -> list:  # type: ignore[type-arg]
    out = []
    for isa, vlen in VLEN_CASES:
        for r in ALL_RINGS:
            if isa_class(isa).unsupported(r.n, r.lane) is None:
                out.append(pytest.param(r, isa, vlen, id=f"{r.name}-{isa}-vlen{vlen}"))
    return out


@pytest.mark.parametrize("ring,isa,vlen", _cases())
def test_verify_at_every_vlen(ring, isa: str, vlen: int) -> None:  # type: ignore[no-untyped-def]
    """The full differential check (exact product, evaluation at the roots, round trips,
    every entry point bit for bit against the checked evaluator) on a core of another VLEN."""
    require_isa(isa)
    k = nttgen.load(ring, isa, vlen=vlen)
    assert k.target.emulated_vlen == vlen
    results = verify_kernel(k, trials=3, seed=ring.q % 1000 + vlen)
    failures = [f"{r.name}: {r.failure}" for r in results if not r.ok]
    assert not failures


def _against_portable(ring, isa: str, vlen: int) -> None:  # type: ignore[no-untyped-def]
    """polymul, ntt and intt of ``isa`` equal the portable C on RV64GC and the exact product."""
    k = nttgen.load(ring, isa, vlen=vlen)
    portable = nttgen.load(ring, "c", arch="riscv64")
    rng = np.random.default_rng(vlen)
    cases = [a for _, a in coefficient_cases(ring.n, ring.q, rng, 2)]
    for a, b in zip(cases, cases[1:] + cases[:1], strict=True):
        prod = k.polymul(a, b)
        assert np.array_equal(prod, portable.polymul(a, b))
        assert np.array_equal(prod, schoolbook(a, b, ring.q))
        ah = k.ntt(a)
        assert np.array_equal(ah, portable.ntt(a))
        assert np.array_equal(k.intt(ah), portable.intt(ah))


@pytest.mark.parametrize(
    "isa", ["rvv128m1", "rvv128m4", "rvv128m8", "rvvm2", "rvvm8", "rvv256m1", "rvv256m4"]
)
@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=lambda r: r.name)
def test_lmul_variants(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """LMUL is a plan parameter: register groups of 1, 2, 4 or 8 registers (the presets'
    ``rvv128`` and ``rvv256`` take 2, ``rvv`` 1) give the same results; the planner fills 24
    of the 32 registers in VLEN-specialised code (the rest hold lane offsets, twiddles and
    constants), all of them in strip-mined code.
    At LMUL 8, which has no double-width groups, the inner products sum in lanes."""
    require_isa("rvv")
    cls = isa_class(isa)
    if cls.unsupported(ring.n, ring.lane):
        pytest.skip(cls.unsupported(ring.n, ring.lane))
    budget = 32 if cls.strip_mined else FIXED_PLAN_REGISTERS
    assert cls.registers == budget // cls.lmul  # type: ignore[attr-defined]
    assert cls.has_wide_values(ring.lane) == (cls.lmul <= 4)  # type: ignore[attr-defined]
    vlen = max(cls.min_vlen, 128)  # type: ignore[attr-defined]
    _against_portable(ring, isa, vlen)
    k = nttgen.load(ring, isa, vlen=vlen)
    rng = np.random.default_rng(7)
    a = rng.integers(-(ring.q - 1), ring.q, size=(3, ring.n))
    b = np.stack([k.ntt(rng.integers(0, ring.q, size=ring.n)) for _ in range(3)])
    want = sum(k.basemul(a[i], b[i]).astype(object) for i in range(3))
    got = k.basemul_acc_cached(a, b, k.basemul_cache(b))
    assert np.array_equal(np.mod(got.astype(object) - want, ring.q), np.zeros(ring.n, object))


@pytest.mark.parametrize("vlen", [128, 256])
def test_complete_ntt_products_run_on_larger_register_groups(vlen: int) -> None:
    """A complete NTT's base multiplications (element-wise, in any memory order) are built for
    and emitted by the backend with register groups of four (``nttgen.tuning.PRODUCT_GROUPS``)
    inside the LMUL-2 file: their own helpers, their own vector types, the same results as the
    portable C; the unfused polymul keeps calling the file's own basemul. Degree-2 factors
    (ML-KEM) keep theirs: the pairs' roots follow the memory order."""
    require_isa("rvv")
    isa = f"rvv{vlen}"
    ring = PRESETS["mldsa"]
    ks = kernel_set(ring, isa)
    ops = ("basemul", "basemul_acc", "basemul_cache", "basemul_acc_cached")
    assert ks.guests == dict.fromkeys(ops, f"{isa}m4")
    assert not kernel_set(PRESETS["mlkem"], isa).guests
    src = generate(ring, isa).source
    body = src.split(f"void nttgen_mldsa_{isa}_basemul(", 1)[1].split("\n}\n", 1)[0]
    assert "vint32m4_t" in body and f"nttgen_mldsa_{isa}_{isa}m4_montmul_var(" in body
    assert "vint32m2_t" not in body
    assert f"nttgen_mldsa_{isa}_basemul_inner(" in src.split(f"void nttgen_mldsa_{isa}_polymul(")[1]
    k = nttgen.load(ring, isa, vlen=vlen)
    portable = nttgen.load(ring, "c", arch="riscv64")
    rng = np.random.default_rng(vlen)
    a = rng.integers(-(ring.q - 1), ring.q, size=(5, ring.n))
    b = np.stack([k.ntt(rng.integers(0, ring.q, size=ring.n)) for _ in range(5)])
    for got, want in (
        (k.basemul(a[0], b[0]), portable.basemul(a[0], b[0])),
        (k.basemul_acc(a, b), portable.basemul_acc(a, b)),
        (k.basemul_acc_cached(a, b, k.basemul_cache(b)), portable.basemul_acc(a, b)),
    ):
        assert np.array_equal(np.mod(got - want, ring.q), np.zeros(ring.n, dtype=got.dtype))


SPILLS = re.compile(r"\bv(s\d+r\.v|l\d+re\d+\.v)\b")


@pytest.mark.parametrize("isa", ["rvv128", "rvv256"])
@pytest.mark.parametrize("ring", [PRESETS[n] for n in GENERATED_PRESETS], ids=lambda r: r.name)
def test_specialised_preset_files_do_not_spill(ring, isa: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The checked-in VLEN-specialised files, compiled by clang-19 -O3, never save or restore
    a vector register group on the stack (whole-register ``vs<n>r.v``/``vl<n>re<e>.v``): the
    planner's register budget leaves room for what the passes keep live besides data."""
    clang, objdump = require_tool("clang-19"), require_tool("llvm-objdump-19")
    stem = f"nttgen_{ring.name.replace('-', '_')}_{isa}"
    src = GENERATED / ring.name / f"{stem}.c"
    obj = tmp_path / f"{stem}.o"
    flags = ["--target=riscv64-linux-gnu", "-march=rv64gcv", "-O3", "-c"]
    subprocess.run([clang, *flags, str(src), "-o", str(obj)], check=True)
    text = subprocess.run(
        [objdump, "-d", "--mattr=+v", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    assert re.search(r"\bvseti?vli\b", text)  # the disassembly shows the vector code
    spills = [line.strip() for line in text.splitlines() if SPILLS.search(line)]
    assert not spills, spills[:5]


STYLE_MARKS = {"slide": "__riscv_vslideup_vx", "gather": "__riscv_vrgather_vv"}


@pytest.mark.parametrize("style", ["slide", "gather"])
@pytest.mark.parametrize("ring", [PRESETS["mlkem"], PRESETS["mldsa"]], ids=lambda r: r.name)
def test_in_register_shuffle_styles(ring, style: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The presets load by gathers (the measured default, see :mod:`nttgen.tuning`); the
    in-register shuffle styles (masked slides, or vrgather by vid -+ d under the same lane
    masks) compute the same kernels."""
    require_isa("rvv128")
    import nttgen.generate as gen

    default = generate(ring, "rvv128").source
    assert "__riscv_vluxei" in default and "__riscv_vsuxei" in default
    assert not any(mark in default for mark in STYLE_MARKS.values())
    monkeypatch.setitem(gen.TUNED, (ring.name, "rvv128"), {"shuffles": style})
    clear_caches()
    _LOADED.clear()
    try:
        text = generate(ring, "rvv128").source
        assert STYLE_MARKS[style] in text and "__riscv_vluxei" not in text
        assert all(m not in text for s, m in STYLE_MARKS.items() if s != style)
        _against_portable(ring, "rvv128", 128)
    finally:
        clear_caches()
        _LOADED.clear()


@pytest.mark.parametrize("ring", [PRESETS["kyber-r1"], PRESETS["newhope512"]], ids=lambda r: r.name)
def test_indexed_loads_at_a_longer_vlen(ring) -> None:  # type: ignore[no-untyped-def]
    """The gathered code of VLEN 128 on a core of VLEN 256 (it uses the low part of each
    register; the lane offsets come from vid over the constant vector length)."""
    require_isa("rvv128")
    assert "__riscv_vluxei" in generate(ring, "rvv128").source
    _against_portable(ring, "rvv128", 256)


def test_lane_offsets_must_be_a_bit_permutation() -> None:
    """The RVV lane offsets are computed from vid, which needs offsets additive in the lane
    bits, each a power of two (as every exchange of lane and slot bits gives)."""
    from nttgen.emit.isa.base import EmitContext
    from nttgen.plan.constants import Arith

    isa = isa_class("rvv128")(EmitContext(Arith(3329, PRESETS["mlkem"].lane), "p"))
    isa.lane_offsets("ok", (0, 64, 128, 192, 1, 65, 129, 193))
    with pytest.raises(ValueError, match="not additive in lane bits"):
        isa.lane_offsets("bad", (0, 1, 2, 4, 3, 5, 6, 7))
    with pytest.raises(ValueError, match="not a power of two"):
        isa.lane_offsets("bad", (0, 3, 6, 9, 12, 15, 18, 21))


def test_specialised_code_refuses_a_shorter_vlen() -> None:
    with pytest.raises(IsaUnavailableError, match=r"rvv256 code needs VLEN >= 256.*VLEN = 128"):
        nttgen.load("mlkem", "rvv256", vlen=128)
    with pytest.raises(UnknownNameError, match="LMUL must be 1, 2, 4 or 8"):
        isa_class("rvv128m3")
    with pytest.raises(UnknownNameError, match="VLEN must be 128, 256, 512 or 1024"):
        isa_class("rvv96")
    with pytest.raises(UnknownNameError, match="rvv<VLEN>m<LMUL>"):
        isa_class("sve")


def test_strip_mining_takes_the_longest_loop() -> None:
    """In every loop nest one loop is strip-mined: the loop within a block in the first
    layers, the loop over blocks in the last ones (then the accesses are strided)."""
    fn = kernel_set(PRESETS["mlkem"], "rvv").functions["ntt"]
    chosen = vector_loops(fn.body)
    loops = [s for s in walk(fn.body) if isinstance(s, Loop)]
    assert chosen and all(
        min(s.count.const, 1 << 30) >= 8 for s in loops if s.var in chosen
    )  # never a loop of 2 or 4
    text = generate(PRESETS["mlkem"], "rvv").source
    assert "__riscv_vsetvl_e16m1" in text and "__riscv_vlse16_v_i16m1" in text
    assert "__riscv_vsse16_v_i16m1" in text


def test_agnostic_code_runs_any_ring_size() -> None:
    """Strip-mining has no minimum size: a ring smaller than one register of a long VLEN."""
    from nttgen.rings import make_ring

    require_isa("rvv")
    ring = make_ring(16, 97)
    assert isa_class("rvv").unsupported(ring.n, ring.lane) is None
    assert isa_class("rvv256").unsupported(ring.n, ring.lane)
    _against_portable(ring, "rvv", 1024)


def test_rvv_instruction_counts() -> None:
    """RVV instruction counts per call are exact (the same for every input, at each VLEN) and
    the variant the front end picks is below the portable C's count on RV64GC by the issue's
    factors (1/4 at VLEN 128, 1/7 at 256) for ML-DSA, the ring with the fewest lanes."""
    from nttgen.bench.icount import build_counter, count_call, count_ring
    from nttgen.cross import Target

    require_isa("rvv")
    ring = PRESETS["mldsa"]
    for vlen, picked, factor in ((128, "rvv128", 4), (256, "rvv256", 7)):
        target = Target("riscv64", vlen)
        res = count_ring(ring, [picked, "rvv", "c"], target, ["ntt", "intt"], scalar=False)
        by = {(r.isa, r.op): r.instructions for r in res}
        for op in ("ntt", "intt"):
            assert by[(picked, op)] * factor <= by[("c", op)], (vlen, op, by)
            assert by[("rvv", op)] < by[("c", op)]
        exe, _ = build_counter(ring, ["rvv", picked], target)
        for index in (0, 1):
            counts = {count_call(exe, target, index, "ntt", seed=s) for s in (0, 1, 2)}
            assert len(counts) == 1, counts
