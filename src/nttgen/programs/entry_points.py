"""What each entry point of an x^n + 1 ring's kernel set computes, in which order and domain:
the words the headers and manifests use (:data:`OP_INFO`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpInfo:
    """What an entry point computes, in which order and domain (for headers and manifests)."""

    summary: str
    input: str
    output: str


OP_INFO: dict[str, OpInfo] = {
    "ntt": OpInfo(
        "forward NTT, in place",
        "a: coefficients in the standard order (index i holds the coefficient of x^i)",
        "a: NTT domain in this ISA's native order (normal domain, not reduced)",
    ),
    "intt": OpInfo(
        "inverse NTT times beta, in place: a <- beta * NTT^-1(a)",
        "a: NTT domain, native order",
        "a: coefficients, standard order, times beta (cancels basemul's beta^-1)",
    ),
    "ntt_vec": OpInfo(
        "forward NTT of k >= 1 polynomials stored one after another, in place",
        "a: k polynomials, coefficients in the standard order",
        "a: k polynomials, NTT domain in this ISA's native order (as ntt leaves each)",
    ),
    "intt_vec": OpInfo(
        "inverse NTT times beta of k >= 1 polynomials stored one after another, in place",
        "a: k polynomials, NTT domain, native order",
        "a: k polynomials, coefficients, standard order, times beta (as intt leaves each)",
    ),
    "ntt_pair": OpInfo(
        "forward NTT of two polynomials at once, in place (ntt_vec's helper)",
        "a, b: coefficients in the standard order",
        "a, b: NTT domain in this ISA's native order",
    ),
    "intt_pair": OpInfo(
        "inverse NTT times beta of two polynomials at once, in place (intt_vec's helper)",
        "a, b: NTT domain, native order",
        "a, b: coefficients, standard order, times beta",
    ),
    "basemul": OpInfo(
        "base multiplication: r = a o b * beta^-1",
        "a, b: NTT domain, native order",
        "r: NTT domain, native order, times beta^-1 (Montgomery)",
    ),
    "basemul_acc": OpInfo(
        "r = sum_{i<k} a_i o b_i * beta^-1 for k >= 1 pairs of polynomials stored one after "
        "another",
        "a, b: k polynomials each, NTT domain, native order",
        "r: NTT domain, native order, times beta^-1 (Montgomery)",
    ),
    "basemul_cache": OpInfo(
        "multiplication cache of b, for basemul_acc_cached: what every product by b would "
        "recompute (degree-2 factors: g_j * b1 mod q; complete NTT: b * q^-1 mod beta)",
        "b: NTT domain, native order",
        "cache: this ISA's layout (n/2 entries for degree-2 factors, n for a complete NTT)",
    ),
    "basemul_acc_cached": OpInfo(
        "r = sum_{i<k} a_i o b_i * beta^-1 for k >= 1 pairs, given the caches of the b_i "
        "(basemul_cache), stored one after another",
        "a, b: k polynomials each, NTT domain, native order; cache: their k caches",
        "r: NTT domain, native order, times beta^-1 (Montgomery)",
    ),
    "reduce": OpInfo(
        "full reduction, in place: every coefficient to its representative in [0, q)",
        "a: any lane values",
        "a: the same residues in [0, q)",
    ),
    "reduce_centred": OpInfo(
        "centred reduction, in place: every coefficient to its representative in "
        "[-(q-1)/2, (q-1)/2]",
        "a: any lane values",
        "a: the same residues in [-(q-1)/2, (q-1)/2]",
    ),
    "reduce_partial": OpInfo(
        "partial reduction, in place: every coefficient to a representative in (-q, q)",
        "a: any lane values",
        "a: the same residues, each in (-q, q)",
    ),
    "tomont": OpInfo(
        "into Montgomery form, in place: a <- a * beta mod q",
        "a: any lane values",
        "a: times beta (mod q)",
    ),
    "frommont": OpInfo(
        "out of Montgomery form, in place: a <- a * beta^-1 mod q",
        "a: any lane values",
        "a: times beta^-1 (mod q)",
    ),
    "ntt_from": OpInfo(
        "forward NTT from a to r (polymul's helper)",
        "a: coefficients in the standard order",
        "r: NTT domain in this ISA's native order",
    ),
    "basemul_inner": OpInfo(
        "r <- a o b in this ISA's own register groups (polymul's helper where the entry point"
        " runs on larger ones)",
        "a, b: NTT domain, native order",
        "r: NTT domain, native order, times beta^-1",
    ),
    "intt_reduce": OpInfo(
        "inverse NTT times beta, reduced to [0, q) (polymul's helper)",
        "a: NTT domain, native order",
        "a: coefficients, standard order, times beta, in [0, q)",
    ),
    "to_standard": OpInfo(
        "in place: NTT domain from this ISA's native order to the ring's standard order",
        "a: NTT domain, native order (any lane values)",
        "a: the same values, standard order",
    ),
    "from_standard": OpInfo(
        "in place: NTT domain from the ring's standard order to this ISA's native order",
        "a: NTT domain, standard order (any lane values)",
        "a: the same values, native order",
    ),
    "mul_core": OpInfo(
        "r <- NTT^-1(r o NTT(b)) reduced to [0, q) (polymul's fused helper)",
        "r: a_hat, NTT domain, native order; b: coefficients, standard order",
        "r: coefficients, standard order, in [0, q)",
    ),
    "mul_both": OpInfo(
        "r <- NTT^-1(NTT(a) o NTT(b)) reduced to [0, q) (polymul's fused helper)",
        "a, b: coefficients, standard order",
        "r: coefficients, standard order, in [0, q)",
    ),
    "polymul": OpInfo(
        "r = a * b mod (q, x^n + 1)",
        "a, b: coefficients, standard order",
        "r: coefficients, standard order, in [0, q)",
    ),
}
