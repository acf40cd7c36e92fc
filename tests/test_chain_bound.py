"""scripts/chain_bound.py: the longest dependence path it follows through compiled code, with
loads free, copies eliminated, reloads after the store they read, and merging masks and
two-table permutations reading their destination."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "chain_bound.py"
# made-up latencies, so that every path's length is known exactly
LATENCY = {
    (name, reg): ticks
    for reg in ("ymm", "zmm")
    for name, ticks in {
        "add": 1.0,
        "mul": 3.0,
        "cross": 5.0,
        "perm2": 3.0,
        "permq": 4.0,
        "insert": 1.0,
        "insert4": 1.0,
        "spill": 7.0,
    }.items()
}


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chain_bound", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_longest_path_through_registers_and_a_spill() -> None:
    cb = load_script()
    asm = """
        vmovdqu (%rsi), %ymm0            # an input: free
        vpmullw %ymm1, %ymm0, %ymm2      # 3
        vpmulhw %ymm3, %ymm2, %ymm2      # 6
        vpaddw  %ymm0, %ymm0, %ymm4      # 1, off the long path
        vmovdqa %ymm2, %ymm5             # a copy: 6
        vmovdqu %ymm5, 32(%rsp)          # spilled at 6
        vmovdqu 32(%rsp), %ymm6          # read back: 6 + 7
        vpsubw  %ymm6, %ymm4, %ymm7      # 14
        addq    $64, %rsi                # scalar: not on the vector chain
    """.splitlines()
    chain = cb.chain_of(asm, LATENCY)
    assert (chain.instructions, chain.ticks, chain.loops) == (9, 14.0, False)


def test_merging_masks_and_permutations_read_their_destination() -> None:
    cb = load_script()
    merged = ["vpmulhw %zmm1, %zmm1, %zmm3", "vpaddw %zmm1, %zmm2, %zmm3{%k1}"]
    assert cb.chain_of(merged, LATENCY).ticks == 4.0
    zeroed = ["vpmulhw %zmm1, %zmm1, %zmm3", "vpaddw %zmm1, %zmm2, %zmm3{%k1}{z}"]
    assert cb.chain_of(zeroed, LATENCY).ticks == 3.0
    table = ["vpmulhw %zmm1, %zmm1, %zmm0", "vpermt2q %zmm1, %zmm2, %zmm0"]
    assert cb.chain_of(table, LATENCY).ticks == 8.0


def test_a_loop_has_no_bound() -> None:
    cb = load_script()
    chain = cb.chain_of([".L3:", "vpaddw %ymm1, %ymm0, %ymm0", "jne .L3"], LATENCY)
    assert chain.loops


@pytest.mark.parametrize(
    "mnemonic,reg,kind",
    [
        ("vpmullw", "ymm", "mul"),
        ("vpmaddwd", "zmm", "mul"),
        ("vpermt2q", "zmm", "cross"),
        ("vshufi64x2", "zmm", "cross"),
        ("vperm2i128", "ymm", "perm2"),
        ("vinserti128", "ymm", "insert"),
        ("vpermq", "ymm", "permq"),
        ("vpunpcklqdq", "zmm", "add"),
        ("vpsraw", "ymm", "add"),
    ],
)
def test_latency_classes(mnemonic: str, reg: str, kind: str) -> None:
    assert load_script().latency_class(mnemonic, reg) == kind


def test_an_entry_point_that_forwards_is_followed_to_its_helper() -> None:
    """ML-KEM's ntt only jumps to ntt_from: the bound is the helper's straight line."""
    cb = load_script()
    asm, stem = cb.assembly("mlkem", "avx512", "clang-19")
    lines = cb.resolve(asm, f"{stem}_ntt")
    assert lines != cb.function_lines(asm, f"{stem}_ntt")
    chain = cb.chain_of(lines, LATENCY)
    # seven layers of a Montgomery product (two multiplications in a row and a subtraction)
    # and an addition or subtraction each, at the least
    assert not chain.loops and chain.ticks >= 7 * (3 + 3 + 1 + 1)
