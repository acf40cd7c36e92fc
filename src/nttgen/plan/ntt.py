"""The negacyclic NTT of a ring as an algorithm: layers, twiddles and the NTT-domain order.

The forward transform is the in-place Cooley–Tukey network of Seiler 2018 (Alg. 1): layer l
(0-based) pairs logical positions i and i + 2^t, t = log2(n) - 1 - l, with the twiddle
zeta_k = r^brv(k) for k = 2^l + (i >> (t+1)), where r is the ring's root of order 2^(depth+1)
and brv reverses ``depth`` bits. After ``depth`` layers, positions b*j .. b*j+b-1 hold
a mod (x^b - r^(2*brv(j)+1)): the ring's standard order (FIPS 203/204 for ML-KEM/ML-DSA).

Two inverse networks pair the same positions in the opposite layer order (so every pass plan
and shuffle of the forward transform serves both):

* ``gs``: Gentleman–Sande butterflies (a + b, (a - b) zeta_k^-1); the factor 2^-depth is folded
  into the last layer or applied to the inputs.
* ``dit``: Cooley–Tukey butterflies (a + w b, a - w b) of the cyclic inverse DFT with bit-reversed
  input (decimation in time). Write the factor index of position i as j = i >> log2(b). The
  forward NTT is the cyclic DFT of the twisted blocks r^j a_j with root w = r^2, read in
  bit-reversed order, so the inverse is that DFT's inverse followed by the *twist*
  r^-j 2^-depth of every output. Layer l (pairing factor bit s = depth - 1 - l) uses
  w^-(u * 2^(depth-1-s)) with u = j mod 2^s: it depends on the index bits *below* the pair
  bit, its first layer (s = 0) multiplies by 1 only, and sums grow by addition, not doubling,
  which needs fewer reductions than Gentleman–Sande where q leaves little headroom.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from ..arith import bitrev, multiplicative_order
from ..rings import Ring
from .constants import Arith, ConstMul

Network = Literal["ct", "gs", "dit"]
"""Which butterfly network a transform runs: the forward Cooley–Tukey network or one of the two
inverse networks (see the module docstring)."""

NETWORKS: tuple[Network, ...] = ("ct", "gs", "dit")


@dataclass(frozen=True)
class NttAlgebra:
    """Twiddles and checks for one ring's NTT."""

    ring: Ring
    const_mul: ConstMul = "montgomery"

    def __post_init__(self) -> None:
        r, q, d = self.ring.root, self.ring.q, self.ring.depth
        order = 2 << d
        if multiplicative_order(r, q) != order:
            raise AssertionError(f"root {r} does not have order {order} mod {q}")

    @cached_property
    def arith(self) -> Arith:
        """The lane arithmetic constants."""
        return Arith(self.ring.q, self.ring.lane, self.const_mul)

    def layer_bit(self, layer: int) -> int:
        """The index bit a forward layer pairs on: distance 2^bit."""
        return self.ring.log_n - 1 - layer

    def zeta_index(self, layer: int, i: int) -> int:
        """k = 2^layer + block, for the butterfly whose lower logical position is i."""
        return (1 << layer) + (i >> (self.layer_bit(layer) + 1))

    def zeta(self, layer: int, i: int) -> int:
        """The forward twiddle r^brv(k) (in [0, q)) used at logical position i of a layer."""
        k = self.zeta_index(layer, i)
        return pow(self.ring.root, bitrev(k, self.ring.depth), self.ring.q)

    def zeta_inv(self, layer: int, i: int) -> int:
        """The inverse twiddle (zeta_k)^-1 mod q."""
        return pow(self.zeta(layer, i), -1, self.ring.q)

    def dit_zeta(self, layer: int, i: int) -> int:
        """The ``dit`` inverse twiddle (in [0, q)) at logical position i of the inverse of
        forward layer ``layer``: r^-(u * 2^(depth - s)), s = depth - 1 - layer, u the factor
        index j = i >> log2(b) modulo 2^s."""
        s = self.ring.depth - 1 - layer
        u = (i >> self.base_bits) & ((1 << s) - 1)
        return pow(self.ring.root, -u << (self.ring.depth - s), self.ring.q)

    def twist(self, i: int) -> int:
        """r^-j mod q for the factor index j = i >> log2(b): the ``dit`` inverse's final
        multiplier of logical position i (before the factor 2^-depth)."""
        return pow(self.ring.root, -(i >> self.base_bits), self.ring.q)

    def twiddle(self, network: Network, layer: int, i: int) -> int:
        """The twiddle (in [0, q)) a network's butterfly of ``layer`` uses at logical position
        i (the lower position of the pair)."""
        if network == "ct":
            return self.zeta(layer, i)
        if network == "gs":
            return self.zeta_inv(layer, i)
        return self.dit_zeta(layer, i)

    def twiddle_depends(self, network: Network, index_bit: int, pair_bit: int) -> bool:
        """Whether a network's twiddles for butterflies on ``pair_bit`` vary with ``index_bit``:
        above the pair bit for ``ct``/``gs`` (the block number), between the base bits and the
        pair bit for ``dit`` (the position inside the block)."""
        if network == "dit":
            return self.base_bits <= index_bit < pair_bit
        return index_bit > pair_bit

    @property
    def base_bits(self) -> int:
        """log2 of the base degree b: the low index bits that number a factor's coefficients."""
        return self.ring.base_degree.bit_length() - 1

    def inverse_scale(self) -> int:
        """2^-depth mod q: the factor the inverse NTT owes after its layers."""
        return pow(2, -self.ring.depth, self.ring.q)

    def base_root(self, j: int) -> int:
        """r^(2*brv(j)+1) mod q: factor j of the NTT domain is x^b minus this."""
        return self.ring.factor_root(j)

    # ----------------------------------------------------------------- reference maths
    def reference_ntt(self, coeffs: list[int]) -> list[int]:
        """The NTT by definition: for each factor j of the standard order, the coefficients of
        a mod (x^b - root_j), in [0, q). Computed by Horner's rule in x^b = root_j for all
        factors at once (exact: every intermediate is below q^2 < 2^62)."""
        q, b, n = self.ring.q, self.ring.base_degree, self.ring.n
        roots = np.array([self.base_root(j) for j in range(n // b)], dtype=np.int64)
        a = np.mod(np.asarray(coeffs, dtype=np.int64), q).reshape(n // b, b)
        acc = np.zeros((n // b, b), dtype=np.int64)
        for m in range(n // b - 1, -1, -1):
            acc = (acc * roots[:, None] + a[m][None, :]) % q
        return [int(x) for x in acc.reshape(-1)]
