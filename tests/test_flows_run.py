"""The schemes' flows (:mod:`nttgen.flows`) run in C through the dispatching front end, on every
ISA, with worst-case inputs, and give exact results.

:mod:`nttgen.flows` proves from the manifests that the entry points' contracts chain along
FIPS 203's K-PKE, FIPS 204's products and a plain product through the NTT domain: every call's
argument inside what the entry point accepts, every sum inside the lanes, with no reduction
beyond those the flow lists. This test runs the same flows as C programs: a generator below
turns each :class:`~nttgen.flows.Flow` into calls of the front end (``basemul_acc`` over
k = 4 stacked polynomials for 16-bit lanes, ML-KEM's largest k, and k = 7 for 32-bit lanes,
ML-DSA's largest l), sums in the lane type with no reduction, and the schemes' ``caddq`` as a
branch-free add of q to negative values. Each ISA is forced with ``use_isa`` and fed every
input at the top of its range, at the bottom, the two alternating, split by input, at
random extremes and at random (fixed seeds).

Every step's output is printed (NTT-domain data through ``to_standard``) and compared:

* with the exact value, computed in Python over the integers independently of the kernels:
  products by schoolbook (:func:`nttgen.reference.schoolbook`) mod (q, x^n + 1), the NTT as
  evaluation at the roots in the standard order (``NttAlgebra.reference_ntt``), NTT-domain
  inputs read back by exact interpolation, and the Montgomery factors beta^+-1 of the
  contracts, modulo q;
* with the running ISA's own contract: each argument inside the range the entry point
  accepts, each output inside the range it promises (``reduce`` and ``caddq`` in [0, q));
* sums exactly: the C program adds in 64 bits and fails when a sum leaves the lanes, where
  the lane arithmetic of a scheme's code would wrap around.

The host's ISAs run natively (gcc and clang), NEON under qemu-aarch64, RVV under qemu-riscv64
at VLEN 128 and 256. Negative tests show that the checks catch a broken contract: the
contract check of :func:`nttgen.flows.check_flow` on an NTT output one wider than KeyGen's
t_hat = tomont(p) + ntt(e) leaves room for in int16, a run whose NTT output is moved (same
residues) to the top of the lanes, and a run whose inner product is one residue off.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import COMPILERS, require_tool
from nttgen import cpu
from nttgen.build_cache import cached_build
from nttgen.cross import Target
from nttgen.emit.files import GeneratedFiles
from nttgen.emit.isa import ISAS, isa_class
from nttgen.flows import (
    ARITH,
    Contract,
    Flow,
    check_flow,
    contracts_of_manifest,
    flows_for,
    front_end_contracts,
)
from nttgen.outputs import dispatch_isas, generate_dispatch, ring_files
from nttgen.plan.ntt import NttAlgebra
from nttgen.reference import schoolbook
from nttgen.rings import PRESETS, Ring
from nttgen.toolchain import cache_dir

RING_NAMES = ("mlkem", "kyber-r1", "newhope512", "newhope1024", "mldsa")
FAST_RING = "mlkem"
UNARY = ("ntt", "intt", "tomont", "frommont", "reduce", "caddq")
NTT_INPUT_SUFFIX = "_hat"  # the flows name NTT-domain inputs *_hat (the front end's header too)


def stacked(ring: Ring) -> int:
    """The k of ``basemul_acc``: ML-KEM's largest module rank (k = 4) for 16-bit lanes,
    ML-DSA's largest l (7) for 32-bit lanes."""
    return 4 if ring.lane.bits == 16 else 7


# --------------------------------------------------------------------------- flow shapes
@dataclass(frozen=True)
class Shape:
    """How a flow's values are laid out: the polynomials each input holds, each step's output
    holds, and whether each step's output is in the NTT domain."""

    inputs: dict[str, int]
    ntt_inputs: frozenset[str]
    sizes: tuple[int, ...]
    ntt: tuple[bool, ...]

    def capacity(self, flow: Flow) -> dict[str, int]:
        """Polynomials the C array of each name must hold: the most of any of its versions."""
        out = dict(self.inputs)
        for step, size in zip(flow.steps, self.sizes, strict=True):
            out[step.out] = max(out.get(step.out, 0), size)
        return out


def shape_of(flow: Flow, k: int) -> Shape:
    """The layout of ``flow``: the arguments of ``basemul_acc`` hold k polynomials (a row of a
    matrix, a vector); a step applied to a vector applies to each of its polynomials, a sum
    adds vectors of one length, ``basemul`` of a polynomial and a vector multiplies each
    polynomial of the vector (ML-DSA's c * s1). Each step's output is a new version of its
    name (``p`` is a vector of products in one step and an inner product in the next)."""
    nodes: list[list[tuple[str, int]]] = []
    current = {name: (name, -1) for name, _ in flow.inputs}
    outs: list[tuple[str, int]] = []
    for i, step in enumerate(flow.steps):
        nodes.append([current[a] for a in step.args])
        current[step.out] = (step.out, i)
        outs.append(current[step.out])
    size: dict[tuple[str, int], int] = {}
    for i, step in enumerate(flow.steps):
        if step.op == "basemul_acc":
            for node in nodes[i]:
                size[node] = k
    changed = True
    while changed:
        changed = False
        for i, step in enumerate(flow.steps):
            if step.op == "basemul_acc":
                continue
            group = [outs[i], *nodes[i]]
            top = max(size.get(node, 1) for node in group)
            lift = [outs[i]] if step.op == "basemul" else group
            if step.op == "basemul" and top > 1 and all(size.get(x, 1) == 1 for x in nodes[i]):
                lift.append(nodes[i][1])
            for node in lift:
                if size.get(node, 1) < top:
                    size[node] = top
                    changed = True
    for i, step in enumerate(flow.steps):
        if step.op == "basemul_acc" and size.get(outs[i], 1) != 1:
            raise ValueError(f"{flow.name}: {step.text()} must leave one polynomial")
    ntt_inputs = frozenset(n for n, _ in flow.inputs if n.endswith(NTT_INPUT_SUFFIX))
    domain = {name: name in ntt_inputs for name, _ in flow.inputs}
    in_ntt: list[bool] = []
    for step in flow.steps:
        args = [domain[a] for a in step.args]
        want = {"ntt": False, "intt": True, "basemul": True, "basemul_acc": True}.get(step.op)
        if want is not None and any(a != want for a in args):
            raise ValueError(f"{flow.name}: {step.text()} reads data in the wrong domain")
        if step.op in ARITH and len(set(args)) != 1:
            raise ValueError(f"{flow.name}: {step.text()} mixes the two domains")
        out = {"ntt": True, "intt": False}.get(step.op, args[0])
        domain[step.out] = out
        in_ntt.append(out)
    return Shape(
        {name: size.get((name, -1), 1) for name, _ in flow.inputs},
        ntt_inputs,
        tuple(size.get(node, 1) for node in outs),
        tuple(in_ntt),
    )


# --------------------------------------------------------------------------- the C program
TAMPER = {
    "widen": [
        "/* the same residues, moved to the top of the lanes (an NTT wider than promised) */",
        "static void widen(lane_t *a) {",
        "    for (size_t i = 0; i < N; ++i)",
        "        a[i] = (lane_t)(a[i] + Q * ((LANE_MAX - a[i]) / Q));",
        "}",
        "",
    ],
    "nudge": [
        "/* one residue off (a wrong result inside the promised range) */",
        "static void nudge(lane_t *a) { a[0] = (lane_t)(a[0] > 0 ? a[0] - 1 : a[0] + 1); }",
        "",
    ],
}
"""C helpers the negative tests call on a step's output."""


def flow_program(
    ring: Ring, flows: Sequence[Flow], k: int, tamper: tuple[str, str, str] | None = None
) -> str:
    """A C program that runs ``flows`` through the front end ``nttgen_<ring>.h``.

    ``prog ISA FLOW`` forces ISA with ``use_isa`` (exit 3 if refused), prints the ISA each
    group runs on, reads the number of cases and then, per case, every input of the flow
    (its polynomials one after another; NTT-domain inputs in the standard order), runs the
    steps and prints each step's output on one line (NTT-domain data in the standard order,
    converted on a copy). A sum that leaves the lanes or a ``caddq`` that leaves [0, q)
    prints ``ERROR ...`` and exits 4. ``tamper`` = (flow, name, helper) calls the helper
    (``widen`` or ``nudge``, for the negative tests) on every polynomial written by the steps
    of that flow that write ``name``."""
    stem, n, t = f"nttgen_{ring.c_name}", ring.n, ring.lane.c_type
    most = max(max(shape_of(f, k).capacity(f).values()) for f in flows)
    lines = [
        f'#include "{stem}.h"',
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        "",
        f"#define N {n}",
        f"#define Q ((int32_t){ring.q})",
        f"#define LANE_MIN ({ring.lane.min}LL)",
        f"#define LANE_MAX ({ring.lane.max}LL)",
        f"typedef {t} lane_t;",
        "",
        "static int read_polys(lane_t *a, size_t count) {",
        "    for (size_t i = 0; i < count; ++i) {",
        "        long v;",
        '        if (scanf("%ld", &v) != 1) return 2;',
        "        a[i] = (lane_t)v;",
        "    }",
        "    return 0;",
        "}",
        "",
        "/* print polys polynomials; NTT-domain data converted to the standard order on a copy",
        "   (the flow goes on in the native order) */",
        "static void show(const lane_t *a, size_t polys, int ntt) {",
        f"    static lane_t t[{most} * N];",
        "    memcpy(t, a, polys * N * sizeof(lane_t));",
        "    for (size_t p = 0; ntt && p < polys; ++p) " + f"{stem}_to_standard(t + p * N);",
        '    for (size_t i = 0; i < polys * N; ++i) printf("%ld ", (long)t[i]);',
        '    printf("\\n");',
        "}",
        "",
    ]
    if any(s.op in (*ARITH, "caddq") for f in flows for s in f.steps):
        lines += [
            "static int fail(int step, const char *what, size_t i, long long x) {",
            '    printf("ERROR step %d: %s at coefficient %zu: %lld\\n", step, what, i, x);',
            "    return 4;",
            "}",
            "",
        ]
    if tamper is not None:
        lines += TAMPER[tamper[2]]
    for j, flow in enumerate(flows):
        lines += _flow_function(ring, flow, j, k, tamper)
    lines += [
        "int main(int argc, char **argv) {",
        "    int cases, rc = 0;",
        "    if (argc != 3) return 2;",
        f"    if ({stem}_use_isa(argv[1]) != 0) {{",
        '        printf("refused\\n");',
        "        return 3;",
        "    }",
        f'    printf("%s %s %s %s\\n", {stem}_isa(), {stem}_isa_of("reduce"),',
        f'           {stem}_isa_of("tomont"), {stem}_isa_of("frommont"));',
        '    if (scanf("%d", &cases) != 1) return 2;',
        "    for (int c = 0; c < cases && rc == 0; ++c) {",
    ]
    for j, flow in enumerate(flows):
        lines.append(f'        if (strcmp(argv[2], "{flow.name}") == 0) rc = flow_{j}();')
    lines += ["    }", "    return rc;", "}", ""]
    return "\n".join(lines)


def _flow_function(
    ring: Ring, flow: Flow, j: int, k: int, tamper: tuple[str, str, str] | None
) -> list[str]:
    """The C function that reads one case of ``flow``, runs its steps and prints them."""
    stem, shape = f"nttgen_{ring.c_name}", shape_of(flow, k)
    body = [f"/* {flow.name}: " + "; ".join(s.text() for s in flow.steps) + " */"]
    body.append(f"static int flow_{j}(void) {{")
    for name, polys in shape.capacity(flow).items():
        body.append(f"    static lane_t v_{name}[{polys} * N];")
    for name, _ in flow.inputs:
        body.append(f"    if (read_polys(v_{name}, {shape.inputs[name]} * N) != 0) return 2;")
    for name in sorted(shape.ntt_inputs):
        body.append(f"    for (size_t p = 0; p < {shape.inputs[name]}; ++p)")
        body.append(f"        {stem}_from_standard(v_{name} + p * N);")
    sizes = dict(shape.inputs)
    for idx, step in enumerate(flow.steps):
        out, args, size = step.out, step.args, shape.sizes[idx]
        body.append(f"    /* {idx}: {step.text()} */")
        if step.op == "basemul_acc":
            a, b = args
            body.append(f"    {stem}_basemul_acc(v_{out}, v_{a}, v_{b}, {k});")
        elif step.op == "basemul":
            a, b = args
            pa = "p * N" if sizes[a] > 1 else "0"
            pb = "p * N" if sizes[b] > 1 else "0"
            body.append(f"    for (size_t p = 0; p < {size}; ++p)")
            body.append(f"        {stem}_basemul(v_{out} + p * N, v_{a} + {pa}, v_{b} + {pb});")
        elif step.op in ARITH:
            sign = "+" if step.op == "add" else "-"
            total = f" {sign} ".join(f"(int64_t)v_{a}[i]" for a in args)
            body += [
                f"    for (size_t i = 0; i < {size} * N; ++i) {{",
                f"        int64_t x = {total};",
                "        if (x < LANE_MIN || x > LANE_MAX)",
                f'            return fail({idx}, "the sum leaves the lanes", i, (long long)x);',
                f"        v_{out}[i] = (lane_t)x;",
                "    }",
            ]
        elif step.op == "caddq":
            # the schemes' branch-free caddq: x + (q & -(x < 0))
            body += [
                f"    for (size_t i = 0; i < {size} * N; ++i) {{",
                f"        lane_t x = v_{args[0]}[i];",
                f"        v_{out}[i] = (lane_t)(x + (Q & -(int32_t)(x < 0)));",
                f"        if (v_{out}[i] < 0 || v_{out}[i] >= Q)",
                f'            return fail({idx}, "caddq leaves [0, q)", i, (long long)v_{out}[i]);',
                "    }",
            ]
        elif step.op in UNARY:
            (a,) = args
            if a != out:
                body.append(f"    memcpy(v_{out}, v_{a}, {size} * N * sizeof(lane_t));")
            body.append(
                f"    for (size_t p = 0; p < {size}; ++p) {stem}_{step.op}(v_{out} + p * N);"
            )
        else:
            raise ValueError(f"{flow.name}: no C for {step.text()}")
        if tamper is not None and tamper[0] == flow.name and tamper[1] == out:
            body.append(f"    for (size_t p = 0; p < {size}; ++p) {tamper[2]}(v_{out} + p * N);")
        body.append(f"    show(v_{out}, {size}, {int(shape.ntt[idx])});")
        sizes[out] = size
    body += ["    return 0;", "}", ""]
    return body


# --------------------------------------------------------------------------- building
@dataclass(frozen=True)
class Build:
    """A flow program built for one machine: how to run it, and each ISA's contracts."""

    exe: Path
    target: Target
    contracts: dict[str, dict[str, Contract]]

    def command(self, vlen: int | None) -> list[str]:
        """The command that runs the program (under QEMU for another machine; RISC-V at
        ``vlen``)."""
        target = Target(self.target.arch, vlen) if vlen else self.target
        return [*target.emulator(), str(self.exe)]


@cache
def _sources(ring_name: str, arch: str) -> tuple[list[GeneratedFiles], GeneratedFiles]:
    """The files of the ring's ISAs that run on ``arch`` and the front end over all its ISAs
    (as ``nttgen generate --isa all --dispatch`` writes them)."""
    ring = PRESETS[ring_name]
    every = dispatch_isas(ring, list(ISAS))
    mine = [i for i in every if isa_class(i).arch in (None, arch)]
    return ring_files(ring, mine), generate_dispatch(ring, every)


def build(ring: Ring, arch: str, cc: str, tamper: tuple[str, str, str] | None = None) -> Build:
    """The flow program of ``ring`` for ``arch`` built with ``cc`` (each ISA file with the flags
    its manifest lists, the front end with none, or ``-march=rv64gcv`` for RISC-V), or a skip
    naming the missing tool. Objects and executables are cached by content, shared between
    the test workers."""
    target = Target(arch)
    compile_cmd = target.compile_command(cc)
    require_tool(compile_cmd[0])
    link = target.compile_command(cc if target.native else target.linker)
    require_tool(link[0])
    if not target.native:
        require_tool(target.emulator()[0])
    files, front = _sources(ring.name, arch)
    manifests = {f.stem: _json(f.manifest) for f in files}
    jobs: list[tuple[GeneratedFiles, tuple[str, ...]]] = [
        (f, tuple(manifests[f.stem]["isa"]["cflags"])) for f in files
    ]
    jobs.append((front, ("-march=rv64gcv",) if arch == "riscv64" else ()))
    opts = ("-std=c99", "-O2")
    key = [arch, *compile_cmd, *link]
    for f, flags in jobs:
        key += [*flags, *(part for item in f.items() for part in item)]

    def compile_all(directory: Path) -> None:
        for f, flags in jobs:
            for name, text in f.items():
                (directory / name).write_text(text)
            src, obj = directory / f"{f.stem}.c", directory / f"{f.stem}.o"
            _run_checked([*compile_cmd, *opts, *flags, "-c", str(src), "-o", str(obj)])
        (directory / "done").write_text("")

    objects = cached_build(cache_dir() / "flows", f"objects-{ring.c_name}", key, "done",
                           compile_all).parent  # fmt: skip
    driver = flow_program(ring, _flows(ring), stacked(ring), tamper)
    static = () if target.native else ("-static",)
    strict = ("-Wall", "-Wextra", "-Werror")

    def link_all(directory: Path) -> None:
        (directory / "flows.c").write_text(driver)
        objs = sorted(str(p) for p in objects.glob("*.o"))
        cmd = [*link, *static, *opts, *strict, f"-I{objects}", str(directory / "flows.c")]
        _run_checked([*cmd, *objs, "-o", str(directory / "flows")])

    exe = cached_build(cache_dir() / "flows", f"flows-{ring.c_name}",
                       [str(objects), *link, *static, driver], "flows", link_all)  # fmt: skip
    contracts = {m["isa"]["name"]: contracts_of_manifest(m) for m in manifests.values()}
    return Build(exe, target, contracts)


def _json(text: str) -> dict[str, Any]:
    out = json.loads(text)
    assert isinstance(out, dict)
    return out


def _run_checked(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd[:4])} ...:\n{proc.stderr[:3000]}")


def _flows(ring: Ring) -> list[Flow]:
    return flows_for(ring.name, ring.q, ring.lane.bits)


# --------------------------------------------------------------------------- exact model
@cache
def _algebra(ring_name: str) -> NttAlgebra:
    return NttAlgebra(PRESETS[ring_name])


@cache
def _interpolation(ring_name: str) -> np.ndarray:
    """W[i, j] = root_j^-i mod q for the m = n / b factors x^b - root_j of the standard order."""
    ring = PRESETS[ring_name]
    alg, q = _algebra(ring_name), ring.q
    m = ring.n // ring.base_degree
    inv = np.array([pow(alg.base_root(j), -1, q) for j in range(m)], dtype=np.int64)
    w = np.ones((m, m), dtype=np.int64)
    for i in range(1, m):
        w[i] = w[i - 1] * inv % q
    return w


def inverse_ntt(ring: Ring, hat: np.ndarray) -> np.ndarray:
    """The polynomial whose NTT (standard order) is ``hat``, exactly, in [0, q).

    Write a(x) = sum_t x^t A_t(x^b) (t < b). Factor j of the NTT holds a mod (x^b - root_j) =
    sum_t x^t A_t(root_j); the m roots root_j = r^(2 brv(j) + 1) are the m distinct roots of
    y^m = -1, so sum_j root_j^(i - i') = m [i = i'] for |i - i'| < m and
    A_t,i = m^-1 sum_j hat[j, t] root_j^-i. Every partial sum is below m q^2 < 2^63."""
    q, b = ring.q, ring.base_degree
    m = ring.n // b
    h = np.mod(np.asarray(hat, dtype=np.int64), q).reshape(m, b)
    coeffs = _interpolation(ring.name) @ h % q * pow(m, -1, q) % q
    return coeffs.reshape(-1)


@dataclass(frozen=True)
class Held:
    """What a value stands for: the polynomials (exact, in [0, q), coefficient form) that its
    stored polynomials equal modulo q, in coefficient form or, with ``ntt``, as their NTT."""

    ntt: bool
    polys: tuple[np.ndarray, ...]

    def printed(self, ring: Ring) -> np.ndarray:
        """What the C program prints for it, modulo q (NTT-domain data in the standard order)."""
        alg = _algebra(ring.name)
        rows = [np.array(alg.reference_ntt(list(p))) if self.ntt else p for p in self.polys]
        return np.concatenate(rows).astype(np.int64)


def _scaled(q: int, polys: Sequence[np.ndarray], factor: int) -> tuple[np.ndarray, ...]:
    return tuple(p * factor % q for p in polys)


def exact_step(ring: Ring, op: str, args: Sequence[Held], k: int) -> Held:
    """The exact result of one step, from the entry points' documented maths (the front end's
    header): ntt(a) = NTT(a); basemul(a, b) = a o b beta^-1, which is the NTT of the product
    a * b beta^-1 (the NTT is a ring isomorphism, and basemul the product of each factor);
    basemul_acc = sum over the k pairs of the same; intt(a) = beta NTT^-1(a); tomont
    multiplies by beta, frommont by beta^-1; reduce and caddq keep the residues; sums are
    linear, so they commute with the NTT. All modulo q, exact over the integers."""
    q, beta = ring.q, ring.lane.beta
    inv = pow(beta, -1, q)
    if op == "ntt":
        return Held(True, args[0].polys)
    if op == "intt":
        return Held(False, _scaled(q, args[0].polys, beta))
    if op == "tomont":
        return Held(args[0].ntt, _scaled(q, args[0].polys, beta))
    if op == "frommont":
        return Held(args[0].ntt, _scaled(q, args[0].polys, inv))
    if op in ("reduce", "caddq"):
        return args[0]
    if op in ("basemul", "basemul_acc"):
        a, b = args[0].polys, args[1].polys
        size = max(len(a), len(b))
        prods = [
            schoolbook(a[i if len(a) > 1 else 0], b[i if len(b) > 1 else 0], q) for i in range(size)
        ]
        if op == "basemul_acc":
            assert len(a) == len(b) == k
            prods = [sum(prods) % q]
        return Held(True, _scaled(q, prods, inv))
    if op in ARITH:
        sign = 1 if op == "add" else -1
        total = list(args[0].polys)
        for other in args[1:]:
            total = [(x + sign * y) % q for x, y in zip(total, other.polys, strict=True)]
        return Held(args[0].ntt, tuple(total))
    raise ValueError(f"no exact model of {op}")


Case = tuple[str, dict[str, np.ndarray]]


def input_cases(ring: Ring, flow: Flow, seed: int) -> list[Case]:
    """Inputs of ``flow`` at the ends of their ranges (as the flow gives them): all at the
    top, all at the bottom, the two alternating (both phases), top for every other input
    and bottom for the rest (both ways), each coefficient at a random end, and random values
    in range."""
    shape = shape_of(flow, stacked(ring))
    count = {name: shape.inputs[name] * ring.n for name, _ in flow.inputs}
    rng = np.random.default_rng(seed)
    idx = {name: np.arange(count[name]) for name in count}

    def ends(pick: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {name: np.where(pick[name], hi, lo) for name, (lo, hi) in flow.inputs}

    cases: list[Case] = [
        ("top", ends({n: np.ones(c, bool) for n, c in count.items()})),
        ("bottom", ends({n: np.zeros(c, bool) for n, c in count.items()})),
    ]
    for phase in (0, 1):
        pick = {n: (idx[n] + j + phase) % 2 == 0 for j, n in enumerate(count)}
        cases.append((f"alternating{phase}", ends(pick)))
    for phase in (0, 1):
        pick = {n: np.full(c, (j + phase) % 2 == 0) for j, (n, c) in enumerate(count.items())}
        cases.append((f"split{phase}", ends(pick)))
    cases.append(("random-ends", ends({n: rng.integers(0, 2, c) == 1 for n, c in count.items()})))
    cases.append(("random", {n: rng.integers(lo, hi + 1, count[n]) for n, (lo, hi) in flow.inputs}))
    return cases


@cache
def _expected(ring_name: str, flow_name: str) -> tuple[list[Case], list[list[np.ndarray]]]:
    """The input cases of a flow and, per case, what each step must print modulo q."""
    ring = PRESETS[ring_name]
    j, flow = next((j, f) for j, f in enumerate(_flows(ring)) if f.name == flow_name)
    k, n = stacked(ring), ring.n
    shape = shape_of(flow, k)
    cases = input_cases(ring, flow, seed=ring.q * 10 + j)
    wants = []
    for _, inputs in cases:
        held: dict[str, Held] = {}
        for name, _ in flow.inputs:
            rows = inputs[name].reshape(-1, n)
            if name in shape.ntt_inputs:  # stored NTT(a) in the standard order: a, exactly
                held[name] = Held(True, tuple(inverse_ntt(ring, r) for r in rows))
            else:
                held[name] = Held(False, tuple(np.mod(r, ring.q) for r in rows))
        steps = []
        for step in flow.steps:
            held[step.out] = exact_step(ring, step.op, [held[a] for a in step.args], k)
            steps.append(held[step.out].printed(ring))
        wants.append(steps)
    return cases, wants


# --------------------------------------------------------------------------- checking
def check_case(
    ring: Ring,
    flow: Flow,
    inputs: dict[str, np.ndarray],
    got: list[np.ndarray],
    want: list[np.ndarray],
    contracts: dict[str, Contract],
) -> str | None:
    """The first way the printed steps ``got`` break the flow, or None: a value that differs
    from the exact one modulo q, a call's argument outside what the ISA's entry point
    accepts, its output outside what it promises, a sum or a ``caddq`` that is not exact."""
    q, n = ring.q, ring.n
    values = {name: np.asarray(v, dtype=np.int64) for name, v in inputs.items()}
    for idx, step in enumerate(flow.steps):
        where = f"step {idx} `{step.text()}`"
        out = got[idx]
        args = [values[a] for a in step.args]
        if out.shape != want[idx].shape:
            return f"{where}: {out.size} values printed, want {want[idx].size}"
        contract = contracts.get(step.op)
        if contract is not None:
            for (buf, (lo, hi)), arg, name in zip(
                contract.inputs.items(), args, step.args, strict=False
            ):
                if arg.min() < lo or arg.max() > hi:
                    return (
                        f"{where}: argument {name} in [{arg.min()}, {arg.max()}], outside "
                        f"{step.op}'s input {buf} [{lo}, {hi}]"
                    )
            written = "r" if "r" in contract.outputs else next(iter(contract.outputs))
            lo, hi = contract.outputs[written]
            if out.min() < lo or out.max() > hi:
                return f"{where}: output in [{out.min()}, {out.max()}], outside [{lo}, {hi}]"
        if step.op in ARITH:  # computed in the lanes without reduction: exactly the sum
            sign = 1 if step.op == "add" else -1
            exact = args[0] + sum(sign * a for a in args[1:])
            if not np.array_equal(out, exact):
                return f"{where}: not the exact sum"
        if step.op == "caddq" and not np.array_equal(out, args[0] + q * (args[0] < 0)):
            return f"{where}: not x + q for x < 0"
        if step.op in ("reduce", "caddq") and (out.min() < 0 or out.max() >= q):
            return f"{where}: output in [{out.min()}, {out.max()}], outside [0, {q - 1}]"
        bad = np.nonzero(out % q != want[idx])[0]
        if bad.size:
            i = int(bad[0])
            return (
                f"{where}: {bad.size} coefficients differ; first at {i} (polynomial "
                f"{i // n}, index {i % n}): C gives {out[i]} = {out[i] % q} mod q, exact value "
                f"{want[idx][i]}"
            )
        values[step.out] = out
    return None


def run_flows(built: Build, ring: Ring, isa: str, vlen: int | None = None) -> list[str]:
    """Run every flow of ``ring`` on ``isa`` with every input case; one line per (flow, case)
    that breaks, naming the ring, ISA, flow, case, step and values."""
    problems = []
    how = f"{ring.name} on {isa}" + (f" at VLEN {vlen}" if vlen else "")
    for flow in _flows(ring):
        cases, wants = _expected(ring.name, flow.name)
        data = [str(len(cases))]
        for _, inputs in cases:
            data += [" ".join(map(str, inputs[name])) for name, _ in flow.inputs]
        proc = subprocess.run(
            [*built.command(vlen), isa, flow.name],
            input="\n".join(data) + "\n",
            capture_output=True,
            text=True,
            timeout=600,
        )
        lines = proc.stdout.splitlines()
        if proc.returncode == 3:
            pytest.skip(f"{isa} does not run here (use_isa refused it)")
        assert lines and lines[0].split() == [isa] * 4, (how, lines[:1], proc.stderr)
        rows = lines[1:]
        steps = len(flow.steps)
        for c, (name, inputs) in enumerate(cases):
            mine = rows[c * steps : (c + 1) * steps]
            error = next((r for r in mine if r.startswith("ERROR")), None)
            if error is not None or len(mine) < steps:
                tail = error or f"exit {proc.returncode}, {proc.stderr.strip()[:500]}"
                step = int(error.split()[2].rstrip(":")) if error else len(mine)
                text = flow.steps[min(step, steps - 1)].text()
                problems.append(f"{how}: {flow.name}, case {name}, `{text}`: {tail}")
                break
            got = [np.array(r.split(), dtype=np.int64) for r in mine]
            bad = check_case(ring, flow, inputs, got, wants[c], built.contracts[isa])
            if bad is not None:
                problems.append(f"{how}: {flow.name}, case {name}: {bad}")
    return problems


# --------------------------------------------------------------------------- the tests
def _runs() -> Iterator[tuple[str, str, str, int | None]]:
    """(isa, compiler, arch, vlen): the host's ISAs natively with gcc and clang, NEON under
    QEMU with both, the RVV code under QEMU with clang (gcc 12 has no RVV intrinsics), each
    RVV variant at the VLEN it is specialised for and the VLEN-agnostic one at 128 and 256."""
    host = Target().arch
    for isa in ("c", "avx2", "avx512"):
        if isa_class(isa).arch in (None, host):
            for cc in COMPILERS:
                yield isa, cc, host, None
    for cc in COMPILERS:
        yield "neon", cc, "aarch64", None
    for isa, vlen in (("rvv", 128), ("rvv128", 128), ("rvv256", 256), ("rvv", 256)):
        yield isa, "clang-19", "riscv64", vlen


def _cases() -> list:  # type: ignore[type-arg]
    out = []
    for name in RING_NAMES:
        ring = PRESETS[name]
        marks = () if name == FAST_RING else (pytest.mark.slow,)
        for isa, cc, arch, vlen in _runs():
            tag = f"{name}-{isa}-{cc}" + (f"-vlen{vlen}" if vlen else "")
            out.append(pytest.param(ring, isa, cc, arch, vlen, id=tag, marks=marks))
    return out


@pytest.fixture(scope="module")
def builds() -> dict[tuple[str, str, str], Build]:
    """Each ring's flow program, built once per machine and compiler in this module."""
    return {}


@pytest.mark.parametrize("ring,isa,cc,arch,vlen", _cases())
def test_flows_run_exactly(
    ring: Ring,
    isa: str,
    cc: str,
    arch: str,
    vlen: int | None,
    builds: dict[tuple[str, str, str], Build],
) -> None:
    if Target(arch).native and isa not in cpu.usable_isas():
        pytest.skip(f"no {isa} on this CPU")
    key = (ring.name, arch, cc)
    if key not in builds:
        builds[key] = build(ring, arch, cc)
    problems = run_flows(builds[key], ring, isa, vlen)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", RING_NAMES)
def test_the_exact_inverse_inverts_the_reference_ntt(name: str) -> None:
    """The oracle's interpolation is the inverse of the NTT by definition, both ways."""
    ring = PRESETS[name]
    alg = NttAlgebra(ring)
    rng = np.random.default_rng(ring.n)
    hat = rng.integers(0, ring.q, ring.n)
    assert alg.reference_ntt(list(inverse_ntt(ring, hat))) == list(hat)
    a = rng.integers(0, ring.q, ring.n)
    assert np.array_equal(inverse_ntt(ring, np.array(alg.reference_ntt(list(a)))), a)


def test_every_flow_has_a_shape() -> None:
    """The generator lays out every flow of every ring: the inner products over k
    polynomials, ML-DSA's c * s1 over l, every NTT-domain input named *_hat."""
    for name in RING_NAMES:
        ring = PRESETS[name]
        for flow in _flows(ring):
            shape = shape_of(flow, stacked(ring))
            assert all(n.endswith(NTT_INPUT_SUFFIX) for n in shape.ntt_inputs)
            for step, size in zip(flow.steps, shape.sizes, strict=True):
                if step.op == "basemul_acc":
                    assert size == 1 and all(shape.inputs.get(a, 0) != 1 for a in step.args)
    sign = next(f for f in _flows(PRESETS["mldsa"]) if f.name == "Sign")
    shape = shape_of(sign, 7)
    assert shape.inputs == {"y": 7, "c": 1, "s1_hat": 7, "s2_hat": 1, "A_hat": 7}


def test_a_contract_too_wide_for_the_keygen_sum_is_reported() -> None:
    """ML-KEM's KeyGen adds ntt(e) to tomont(p) with no reduction (the NEON overflow: an NTT
    output wider than the lanes leave room for): an NTT contract one wider than lane max minus
    tomont's top takes t_hat = p + e_hat out of int16, and the contract check names that step;
    at the edge itself the sum fits."""
    ring = PRESETS["mlkem"]
    files, _ = _sources(ring.name, Target().arch)
    contracts = front_end_contracts([contracts_of_manifest(_json(f.manifest)) for f in files])
    keygen = next(f for f in _flows(ring) if f.name == "KeyGen")
    lane = (ring.lane.min, ring.lane.max)
    assert check_flow(keygen, contracts, lane) == []
    room = ring.lane.max - contracts["tomont"].outputs["a"][1]
    for top, overflows in ((room, False), (room + 1, True)):
        wide = dict(contracts)
        wide["ntt"] = Contract(contracts["ntt"].inputs, {"a": (-top, top)})
        problems = check_flow(keygen, wide, lane)
        hit = [p for p in problems if "t_hat = p + e_hat" in p and "leaves the lanes" in p]
        assert bool(hit) == overflows, (top, problems)


@pytest.mark.parametrize(
    "helper,found",
    [
        ("widen", r"`t_hat = p \+ e_hat`: ERROR step 4: the sum leaves the lanes"),
        ("nudge", r"step 2 `p = basemul_acc\(A_hat, s_hat\)`: 1 coefficients differ"),
    ],
)
def test_the_run_catches_a_broken_flow(helper: str, found: str) -> None:
    """The same KeyGen run on the portable C, with one step's output tampered with: e_hat
    moved to the top of the lanes (same residues; an NTT wider than its contract) makes
    t_hat = p + e_hat overflow, caught in C; the inner product one residue off is caught by
    the comparison with the exact value."""
    ring = PRESETS["mlkem"]
    where = "e_hat" if helper == "widen" else "p"
    built = build(ring, Target().arch, "gcc", ("KeyGen", where, helper))
    problems = [p for p in run_flows(built, ring, "c") if ": KeyGen, " in p]
    assert any(re.search(found, p) for p in problems), problems
