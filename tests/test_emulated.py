"""Other architectures' ISAs under QEMU: each SIMD kernel agrees with the portable C compiled
for the same machine (and both with the exact product), and the emulation layer refuses what
it cannot do with a message naming the rule."""

from __future__ import annotations

import numpy as np
import pytest

import nttgen
from conftest import EMULATED_ISAS, require_isa, ring_isa_cases
from nttgen import IsaUnavailableError
from nttgen.cross import Target
from nttgen.emit.isa import isa_class
from nttgen.reference import schoolbook
from nttgen.verify import coefficient_cases


@pytest.mark.parametrize("ring,isa", ring_isa_cases(EMULATED_ISAS))
def test_simd_matches_portable_c_on_the_same_machine(ring, isa: str) -> None:  # type: ignore[no-untyped-def]
    """Every public operation of the SIMD kernels equals the portable C compiled for the same
    architecture (both under QEMU), on extreme and random inputs; polymul also equals the
    schoolbook product over the integers."""
    require_isa(isa)
    arch = isa_class(isa).arch
    simd = nttgen.load(ring, isa)
    portable = nttgen.load(ring, "c", arch=arch, vlen=simd.target.vlen)
    assert simd.target == portable.target and not simd.target.native
    rng = np.random.default_rng(ring.q % 997)
    cases = [a for _, a in coefficient_cases(ring.n, ring.q, rng, 3)]
    for a, b in zip(cases, cases[1:] + cases[:1], strict=True):
        prod = simd.polymul(a, b)
        assert np.array_equal(prod, portable.polymul(a, b))
        assert np.array_equal(prod, schoolbook(a, b, ring.q))
        ah, bh = simd.ntt(a), simd.ntt(b)
        assert np.array_equal(ah, portable.ntt(a))
        assert np.array_equal(simd.basemul(ah, bh), portable.basemul(ah, bh))
        assert np.array_equal(simd.intt(ah), portable.intt(ah))
        stacked_a, stacked_b = np.stack([ah, bh, ah]), np.stack([bh, bh, ah])
        assert np.array_equal(
            simd.basemul_acc(stacked_a, stacked_b), portable.basemul_acc(stacked_a, stacked_b)
        )


def test_emulation_refuses_what_it_cannot_do() -> None:
    with pytest.raises(IsaUnavailableError, match="unknown architecture 'sparc64'"):
        Target("sparc64")
    with pytest.raises(IsaUnavailableError, match="vlen applies to riscv64 only"):
        Target("aarch64", vlen=256)
    with pytest.raises(IsaUnavailableError, match="vlen must be one of"):
        Target("riscv64", vlen=96)
    with pytest.raises(IsaUnavailableError, match="runs on aarch64, not on riscv64"):
        nttgen.load("mlkem", "neon", arch="riscv64")
    with pytest.raises(ValueError, match="isa='auto' picks among the host's ISAs"):
        nttgen.load("mlkem", "auto", arch="aarch64")


def test_missing_toolchain_is_named(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil

    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda cmd: None if "qemu" in cmd else real(cmd))
    with pytest.raises(IsaUnavailableError, match=r"needs qemu-aarch64 .*make toolchain"):
        nttgen.load(nttgen.rings.get_ring("kyber-r1"), "neon", arch="aarch64")


def test_server_survives_many_calls_and_reports_a_crash() -> None:
    """One QEMU process serves every call of a kernel object; a dead server is an error that
    names the program, not a hang or a wrong result."""
    require_isa("neon")
    k = nttgen.load("mlkem", "neon")
    a = np.arange(256) % 3329
    first = k.ntt(a)
    for _ in range(20):
        assert np.array_equal(k.ntt(a), first)
    lib = k._emulated
    assert lib is not None
    proc = lib._process()
    proc.kill()
    proc.wait()
    assert np.array_equal(k.ntt(a), first)  # a new server is started for the next call
