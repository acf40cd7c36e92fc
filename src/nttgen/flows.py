"""The flows of the lattice schemes that use a ring's entry points, and a check that the
entry points' contracts chain along them.

A flow is a short program over polynomials: each step calls an entry point (``ntt``,
``basemul_acc``, ``intt``, ``tomont``, ``reduce``, ...) or adds, subtracts or negates
coefficient-wise, as a scheme's reference code does between the calls. Inputs come with the
ranges the scheme gives them (secrets and errors small, matrices and decoded keys in [0, q)).
:func:`check_flow` follows the ranges through the steps with interval arithmetic: every call's
arguments must lie inside the range the entry point accepts, every sum inside the lanes. The
flows are a product through the NTT domain for every ring, and for the rings of a scheme
(:data:`SCHEMES`) FIPS 203's K-PKE or FIPS 204's products; the front end's header lists them,
with the calls that stand between the products (the same for every ISA).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Range = tuple[int, int]

CALLS = ("ntt", "intt", "basemul", "basemul_acc", "tomont", "frommont", "reduce",
         "reduce_centred", "reduce_partial")  # fmt: skip
"""The entry points a flow may call (each reads its first array argument, writes ``r`` or
its array in place)."""

ARITH = ("add", "sub")
"""Coefficient-wise steps between calls."""


@dataclass(frozen=True)
class Step:
    """``out = op(args...)``: a call of an entry point or a coefficient-wise sum."""

    out: str
    op: str
    args: tuple[str, ...]

    def text(self) -> str:
        """The step as a line of the front end's header."""
        if self.op == "add":
            return f"{self.out} = {' + '.join(self.args)}"
        if self.op == "sub":
            return f"{self.out} = {' - '.join(self.args)}"
        return f"{self.out} = {self.op}({', '.join(self.args)})"


@dataclass(frozen=True)
class Flow:
    """A scheme's sequence of steps over named inputs with their ranges, for modulus q."""

    name: str
    q: int
    inputs: tuple[tuple[str, Range], ...]
    steps: tuple[Step, ...]


def _s(line: str) -> Step:
    """A step from ``out = op(a, b)`` or ``out = a + b`` / ``out = a - b``."""
    out, _, rhs = (part.strip() for part in line.partition("="))
    if "(" in rhs:
        op, _, rest = rhs.partition("(")
        return Step(out, op.strip(), tuple(a.strip() for a in rest.rstrip(")").split(",")))
    op = "add" if "+" in rhs else "sub"
    return Step(out, op, tuple(a.strip() for a in rhs.replace("-", "+").split("+")))


def kpke_flows(q: int) -> list[Flow]:
    """FIPS 203's K-PKE KeyGen, Encrypt and Decrypt over the entry points, for modulus q:
    secrets and errors in [-3, 3] (eta1 <= 3, eta2 = 2), the matrix A and decoded keys and
    ciphertexts in [0, q), the message term mu in [0, (q + 1) / 2]. ``tomont`` stands between
    the inner product and the NTT-domain addition of KeyGen (the product leaves a factor
    beta^-1); ``reduce`` before encoding; nothing between the other steps."""
    small, full, mu = (-3, 3), (0, q - 1), (0, (q + 1) // 2)
    keygen = Flow(
        "KeyGen",
        q,
        (("s", small), ("e", small), ("A_hat", full)),
        tuple(
            map(
                _s,
                (
                    "s_hat = ntt(s)",
                    "e_hat = ntt(e)",
                    "p = basemul_acc(A_hat, s_hat)",
                    "p = tomont(p)",
                    "t_hat = p + e_hat",
                    "t_hat = reduce(t_hat)",
                    "s_hat = reduce(s_hat)",
                ),
            )
        ),
    )
    encrypt = Flow(
        "Encrypt",
        q,
        (("r", small), ("e1", small), ("e2", small), ("mu", mu), ("A_hat", full),
         ("t_hat", full)),
        tuple(map(_s, (
            "r_hat = ntt(r)",
            "p = basemul_acc(A_hat, r_hat)",
            "u = intt(p)",
            "u = u + e1",
            "u = reduce(u)",
            "p = basemul_acc(t_hat, r_hat)",
            "v = intt(p)",
            "v = v + e2",
            "v = v + mu",
            "v = reduce(v)",
        ))),
    )  # fmt: skip
    decrypt = Flow(
        "Decrypt",
        q,
        (("u", full), ("v", full), ("s_hat", full)),
        tuple(map(_s, (
            "u_hat = ntt(u)",
            "p = basemul_acc(s_hat, u_hat)",
            "w = intt(p)",
            "w = v - w",
            "w = reduce(w)",
        ))),
    )  # fmt: skip
    return [keygen, encrypt, decrypt]


def mldsa_flows(q: int) -> list[Flow]:
    """FIPS 204's products over the entry points, for modulus q: s1, s2 in [-4, 4] (eta <= 4),
    y in [-(2^19 - 1), 2^19] (gamma1 <= 2^19), the challenge c in [-1, 1], t1 * 2^d in
    [0, (2^10 - 1) * 2^13], A and decoded NTT-domain keys in [0, q). The scheme's own
    ``caddq`` (add q to a negative value) needs (-q, q): ``intt``'s output plus a secret must
    stay inside; ``reduce`` stands between the subtraction of Verify and ``intt``, as in the
    reference code."""
    full = (0, q - 1)
    secret, gamma1, c, t1d = (-4, 4), (-(2**19 - 1), 2**19), (-1, 1), (0, (2**10 - 1) << 13)
    keygen = Flow(
        "KeyGen",
        q,
        (("s1", secret), ("s2", secret), ("A_hat", full)),
        tuple(map(_s, (
            "s1_hat = ntt(s1)",
            "p = basemul_acc(A_hat, s1_hat)",
            "t = intt(p)",
            "t = t + s2",
            "t = caddq(t)",
        ))),
    )  # fmt: skip
    sign = Flow(
        "Sign",
        q,
        (("y", gamma1), ("c", c), ("s1_hat", full), ("s2_hat", full), ("A_hat", full)),
        tuple(map(_s, (
            "y_hat = ntt(y)",
            "p = basemul_acc(A_hat, y_hat)",
            "w = intt(p)",
            "w = caddq(w)",
            "c_hat = ntt(c)",
            "cs1 = basemul(c_hat, s1_hat)",
            "cs1 = intt(cs1)",
            "z = y + cs1",
            "cs2 = basemul(c_hat, s2_hat)",
            "cs2 = intt(cs2)",
            "r0 = w - cs2",
        ))),
    )  # fmt: skip
    verify = Flow(
        "Verify",
        q,
        (("z", gamma1), ("c", c), ("t1d", t1d), ("A_hat", full)),
        tuple(map(_s, (
            "z_hat = ntt(z)",
            "c_hat = ntt(c)",
            "t1_hat = ntt(t1d)",
            "p = basemul_acc(A_hat, z_hat)",
            "ct = basemul(c_hat, t1_hat)",
            "p = p - ct",
            "p = reduce(p)",
            "w = intt(p)",
        ))),
    )  # fmt: skip
    return [keygen, sign, verify]


def scheme_steps(q: int) -> dict[str, Range]:
    """Steps of the schemes' own code that the flows use, with the ranges they accept:
    ``caddq`` (x + q if x < 0) maps (-q, q) to [0, q)."""
    return {"caddq": (-(q - 1), q - 1)}


SCHEMES = {"mlkem": "K-PKE", "kyber-r1": "K-PKE", "mldsa": "ML-DSA"}
"""The presets whose rings a scheme's flows use: FIPS 203's K-PKE (and the Kyber of the first
round, on the same flows) and FIPS 204's ML-DSA."""


def intt_bound(ring: str, q: int, lane_bits: int) -> int | None:
    """The bound B the inverse NTT's output must keep to, [-B, B], for the flows of the
    scheme that uses the ring named ``ring`` to need no reduction between it and the next
    step (None: no scheme's flows): K-PKE's v - NTT^-1(...) with v in [0, q), and
    NTT^-1(...) + e2 + mu, must fit the lanes; ML-DSA's NTT^-1(...) + s2 (|s2| <= 4) must
    stay in (-q, q)."""
    scheme = SCHEMES.get(ring)
    if scheme == "K-PKE":
        return (1 << (lane_bits - 1)) - 1 - (q - 1)
    if scheme == "ML-DSA":
        return q - 1 - 4
    return None


def ntt_bound(ring: str, q: int, lane_bits: int) -> int:
    """The widest bound the NTT's output of the ring named ``ring`` may be promised, [-B, B]:
    where K-PKE's KeyGen adds it to a product brought into Montgomery form (within [-q, q]),
    B = lane max - q; elsewhere the lane max."""
    top = (1 << (lane_bits - 1)) - 1
    return top - q if SCHEMES.get(ring) == "K-PKE" else top


def tomont_bound(ring: str, lane_bits: int, ntt_bound: int) -> int | None:
    """The bound B ``tomont``'s output must keep to, [-B, B], where a scheme's flows add it to
    an NTT output within [-ntt_bound, ntt_bound] (K-PKE's KeyGen); None where no flow does."""
    if SCHEMES.get(ring) == "K-PKE":
        return (1 << (lane_bits - 1)) - 1 - ntt_bound
    return None


def product_flows(q: int) -> list[Flow]:
    """The flows every ring's contracts chain along: a product through the NTT domain, of
    two polynomials in [-(q-1), q-1], or of one and a polynomial stored in the NTT domain in
    [0, q), with one or several base products."""
    full, canonical = (0, q - 1), (-(q - 1), q - 1)
    product = Flow(
        "Product",
        q,
        (("a", canonical), ("b", canonical), ("B_hat", full)),
        tuple(map(_s, (
            "a_hat = ntt(a)",
            "b_hat = ntt(b)",
            "p = basemul(a_hat, b_hat)",
            "c = intt(p)",
            "c = reduce(c)",
            "p = basemul_acc(a_hat, b_hat)",
            "c = intt(p)",
            "p = basemul(B_hat, a_hat)",
            "c = intt(p)",
            "p = basemul_acc(B_hat, a_hat)",
            "c = intt(p)",
        ))),
    )  # fmt: skip
    return [product]


def flows_for(ring: str, q: int, lane_bits: int) -> list[Flow]:
    """The flows the ring named ``ring`` (modulus q, ``lane_bits``-bit lanes) is checked
    along: :func:`product_flows`, and for the rings of a scheme (:data:`SCHEMES`) its flows,
    K-PKE's or ML-DSA's."""
    scheme = SCHEMES.get(ring)
    if scheme == "K-PKE":
        return [*product_flows(q), *kpke_flows(q)]
    if scheme == "ML-DSA":
        return [*product_flows(q), *mldsa_flows(q)]
    return product_flows(q)


@dataclass(frozen=True)
class Contract:
    """One entry point's ranges: what each array accepts and what it leaves."""

    inputs: Mapping[str, Range]
    outputs: Mapping[str, Range]


def contracts_of_manifest(manifest: Mapping[str, object]) -> dict[str, Contract]:
    """The entry points' contracts as an ISA file's manifest (``.json``) states them."""
    out: dict[str, Contract] = {}
    functions = manifest["functions"]
    assert isinstance(functions, Mapping)
    for name, meta in functions.items():
        ins: dict[str, Range] = {}
        outs: dict[str, Range] = {}
        for p in meta["params"]:
            if p.get("kind") != "array":
                continue
            if p.get("in_range") is not None:
                ins[p["name"]] = (p["in_range"][0], p["in_range"][1])
            if p.get("out_range") is not None:
                outs[p["name"]] = (p["out_range"][0], p["out_range"][1])
        out[name] = Contract(ins, outs)
    return out


def front_end_contracts(per_isa: Sequence[Mapping[str, Contract]]) -> dict[str, Contract]:
    """The contracts a front end over ISAs with the contracts ``per_isa`` can promise: each
    input the narrowest of the ISAs', each output the widest."""
    out: dict[str, Contract] = {}
    for name in per_isa[0]:
        have = [c[name] for c in per_isa if name in c]
        ins = {
            b: (max(c.inputs[b][0] for c in have), min(c.inputs[b][1] for c in have))
            for b in have[0].inputs
        }
        outs = {
            b: (min(c.outputs[b][0] for c in have), max(c.outputs[b][1] for c in have))
            for b in have[0].outputs
        }
        out[name] = Contract(ins, outs)
    return out


def check_flow(flow: Flow, contracts: Mapping[str, Contract], lane: Range) -> list[str]:
    """The rules ``flow`` breaks under ``contracts`` in lanes of range ``lane`` (empty: the
    contracts chain along it): an argument outside what its entry point accepts, or a sum that
    can leave the lanes. Each problem is one line naming the flow, the step and the ranges."""
    ranges: dict[str, Range] = dict(flow.inputs)
    problems: list[str] = []
    for step in flow.steps:
        where = f"{flow.name}: {step.text()}"
        args = [ranges[a] for a in step.args]
        if step.op in ARITH:
            lo, hi = args[0]
            for r in args[1:]:
                lo, hi = (lo + r[0], hi + r[1]) if step.op == "add" else (lo - r[1], hi - r[0])
            if lo < lane[0] or hi > lane[1]:
                problems.append(f"{where}: [{lo}, {hi}] leaves the lanes {list(lane)}")
            ranges[step.out] = (lo, hi)
            continue
        accepted = scheme_steps(flow.q).get(step.op)
        if accepted is not None:
            (r,) = args
            if r[0] < accepted[0] or r[1] > accepted[1]:
                problems.append(f"{where}: [{r[0]}, {r[1]}] is outside {list(accepted)}")
            ranges[step.out] = (0, accepted[1])
            continue
        c = contracts[step.op]
        names = [b for b in c.inputs]
        for b, r in zip(names, args, strict=False):
            acc = c.inputs[b]
            if r[0] < acc[0] or r[1] > acc[1]:
                problems.append(
                    f"{where}: {b} in [{r[0]}, {r[1]}] is outside {step.op}'s input "
                    f"[{acc[0]}, {acc[1]}]"
                )
        written = "r" if "r" in c.outputs else next(iter(c.outputs))
        ranges[step.out] = c.outputs[written]
    return problems
