"""The front end's policy: rules derived from measurements (an ISA skipped for a group of
operations on a CPU family where a narrower ISA measured faster), the shipped measurements,
the rules in the headers of the checked-in front ends, the C front end following a rule for
this very CPU, ``nttgen bench --policy`` writing a file that ``nttgen generate --policy``
reads, and one-line refusals of bad policy files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import require_tool
from nttgen import cpu
from nttgen.dispatch_policy import (
    DOMAIN,
    automatic_choice,
    check_policy,
    default_policy,
    group_of,
    groups,
    merged,
    skips,
)
from nttgen.emit.isa import isa_class
from nttgen.errors import InputError
from nttgen.ntru_rings import NTRU_PRESETS
from nttgen.reference import schoolbook, trinomial_product
from nttgen.rings import PRESETS

ROOT = Path(__file__).resolve().parents[1]
NTTGEN = [sys.executable, "-m", "nttgen"]
ORDER = ["avx512", "avx2", "c"]
NTT_ENTRIES = ["ntt", "basemul", "basemul_acc", "intt", "reduce", "to_standard", "polymul"]
AMD = "AuthenticAMD"


def _policy(ticks: dict[str, dict[str, dict[str, float]]], family: int = 0x42) -> dict:  # type: ignore[type-arg]
    return {
        "measurements": [
            {"cpu": "a test CPU", "vendor": AMD, "family": family, "source": "made up",
             "ticks": ticks}
        ]
    }  # fmt: skip


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NTTGEN, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_groups_put_the_ntt_domain_together_and_every_other_op_alone() -> None:
    assert [group_of(e) for e in ("ntt", "intt", "basemul_acc", "from_standard")] == [DOMAIN] * 4
    assert groups(NTT_ENTRIES) == [DOMAIN, "reduce", "polymul"]
    assert groups(["polymul", "polymul_small"]) == ["polymul", "polymul_small"]


def test_a_group_is_judged_by_the_sum_of_its_ops_at_one_k() -> None:
    ticks = {
        "r": {
            "ntt": {"avx512": 10, "avx2": 8},
            "intt": {"avx512": 5, "avx2": 8},
            "basemul_acc k=3": {"avx512": 10, "avx2": 10},
            "basemul_acc k=5": {"avx512": 100, "avx2": 1},  # k = 3 is the one compared
            "polymul": {"avx512": 9, "avx2": 8, "c": 50},
        }
    }
    rules = skips(_policy(ticks), "r", ORDER, NTT_ENTRIES)
    # the domain: avx512 25 against avx2 26, kept; polymul: avx512 9 against avx2 8, skipped
    assert [(r.group, r.isa, r.faster) for r in rules] == [("polymul", "avx512", "avx2")]
    assert "avx512 skipped for polymul (avx512 9, avx2 8, c 50)" in rules[0].describe()
    assert rules[0].vendor_word == int.from_bytes(b"Auth", "little")
    assert skips(_policy(ticks), "another ring", ORDER, NTT_ENTRIES) == []


def test_only_isas_measured_on_every_op_of_a_group_are_compared() -> None:
    ticks = {"r": {"ntt": {"avx512": 10, "avx2": 8}, "intt": {"avx512": 5, "c": 1}}}
    # avx2 lacks intt and c lacks ntt: only avx512 was measured on the whole group
    assert skips(_policy(ticks), "r", ORDER, NTT_ENTRIES) == []


@pytest.mark.parametrize(
    "costs",
    [(10, 12, 5), (12, 10, 11), (5, 6, 7), (9, 8, 8), (3, 3, 3)],
    ids=["c-best", "avx2-best", "avx512-best", "tie-behind", "all-equal"],
)
def test_the_automatic_choice_is_the_fastest_measured(costs: tuple[int, int, int]) -> None:
    ticks = {"r": {"polymul": dict(zip(ORDER, costs, strict=True))}}
    rules = skips(_policy(ticks), "r", ORDER, ["polymul"])
    chosen = automatic_choice(rules, ORDER, "polymul", (AMD, 0x42))
    assert costs[ORDER.index(chosen)] == min(costs)
    # the widest of the fastest: a tie keeps the default order
    assert chosen == ORDER[costs.index(min(costs))]
    # another family, or an unknown CPU, keeps the default order
    assert automatic_choice(rules, ORDER, "polymul", (AMD, 0x43)) == "avx512"
    assert automatic_choice(rules, ORDER, "polymul", None) == "avx512"


def test_the_shipped_policy_never_picks_a_slower_isa_for_a_preset() -> None:
    policy = default_policy()
    check_policy(policy, "dispatch_policy.json")
    seen = 0
    for m in policy["measurements"]:
        for ring, ops in m["ticks"].items():
            assert ring in PRESETS or ring in NTRU_PRESETS, ring
            entries = [o.split(" k=")[0] for o in ops]
            rules = skips(policy, ring, ORDER, entries)
            for op, by_isa in ops.items():
                if group_of(op.split(" k=")[0]) == DOMAIN:
                    continue  # judged as a group below
                cpu_here = (m["vendor"], m["family"])
                measured = [i for i in ORDER if i in by_isa]
                chosen = automatic_choice(rules, measured, op, cpu_here)
                assert by_isa[chosen] == min(by_isa.values()), (m["cpu"], ring, op)
                seen += 1
    assert seen >= 10


def test_merging_replaces_a_familys_rings_and_keeps_the_rest() -> None:
    old = _policy({"a": {"ntt": {"avx2": 1}}, "b": {"ntt": {"avx2": 2}}})
    other = _policy({"a": {"ntt": {"avx2": 3}}}, family=0x19)["measurements"][0]
    new = _policy({"a": {"ntt": {"avx2": 4}}})["measurements"][0]
    out = merged(merged(old, other), new)
    by_family = [(m["family"], sorted(m["ticks"])) for m in out["measurements"]]
    assert sorted(by_family) == [(0x19, ["a"]), (0x42, ["a"]), (0x42, ["b"])]
    assert any(m["ticks"].get("a") == {"ntt": {"avx2": 4}} for m in out["measurements"])


@pytest.mark.parametrize(
    "data",
    [[], {"measurements": 3}, {"measurements": [{"vendor": AMD}]},
     _policy({"r": {"ntt": {"avx2": -1}}})],
    ids=["list", "not-a-list", "fields-missing", "negative-ticks"],
)  # fmt: skip
def test_a_malformed_policy_is_refused(data: object) -> None:
    with pytest.raises(InputError, match="not a policy file"):
        check_policy(data, "--policy x.json")


def test_the_checked_in_front_ends_state_their_rules() -> None:
    policy = default_policy()
    for d in sorted((ROOT / "generated").iterdir()):
        stem = f"nttgen_{d.name.replace('-', '_')}"
        manifest = json.loads((d / f"{stem}.json").read_text())
        order = [i["name"] for i in manifest["isas"]]
        entries = [f.removeprefix(f"{stem}_") for f in manifest["functions"]]
        header = (d / f"{stem}.h").read_text()
        flat = " ".join(line.strip(" *") for line in header.splitlines())
        rules = [r for r in skips(policy, d.name, order, entries) if isa_class(r.isa).arch]
        for rule in rules:
            assert rule.describe() in flat, (d.name, rule.describe())
        if not rules:
            assert "no measurement of nttgen bench shows an ISA here slower" in flat, d.name
    header = (ROOT / "generated" / "sntrup761" / "nttgen_sntrup761.h").read_text()
    assert "avx512 skipped for polymul" in header  # measured slower on Zen 4 and Zen 5


def test_generate_refuses_bad_policy_options_in_one_line(tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    bad = tmp_path / "bad.json"
    bad.write_text('{"measurements": 3}')
    notjson = tmp_path / "notjson.json"
    notjson.write_text("{")
    cases = [
        (["--ring", "mlkem", "--policy", str(bad)], "give it with --dispatch"),
        (["--presets", "--policy", str(bad)], "give it with --dispatch"),
        (["--ring", "mlkem", "--dispatch", "--policy", str(tmp_path / "none")], "cannot read"),
        (["--ring", "mlkem", "--dispatch", "--policy", str(notjson)], "not JSON"),
        (["--ring", "mlkem", "--dispatch", "--policy", str(bad)], "not a policy file"),
    ]
    for args, why in cases:
        p = _run("generate", *args, "-o", out)
        assert p.returncode == 2 and why in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


DRIVER = r"""
#include "{stem}.h"
#include <stdio.h>
#include <string.h>

/* argv[1]: an ISA to force, or "-"; stdin: a and b; stdout: the ISA of each op, the product */
int main(int argc, char **argv) {{
    static {t} a[{n}], b[{n}], r[{n}];
    long v;
    if (argc > 1 && strcmp(argv[1], "-") != 0 && {stem}_use_isa(argv[1]) != 0) return 3;
    for (int i = 0; i < {n}; ++i) {{
        if (scanf("%ld", &v) != 1) return 2;
        a[i] = ({t})v;
    }}
    for (int i = 0; i < {n}; ++i) {{
        if (scanf("%ld", &v) != 1) return 2;
        b[i] = ({t})v;
    }}
    {stem}_{op}(r, a, b);
    printf("%s %s %s\n", {stem}_isa(), {stem}_isa_of("{op}"),
           {stem}_isa_of("no such op") == NULL ? "null" : "?");
    for (int i = 0; i < {n}; ++i) printf("%ld ", (long)r[i]);
    printf("\n");
    return 0;
}}
"""


@pytest.mark.parametrize(
    "ring_name,op", [("mlkem", "polymul"), ("sntrup761", "polymul_small")], ids=str
)
def test_the_front_end_follows_a_rule_for_this_cpu(ring_name: str, op: str, tmp_path: Path) -> None:
    """A policy that says the best x86 ISA here is slower than the next for one op: the front
    end built from it runs that op on the next ISA, every other group on the best, and
    use_isa still forces the best for every op; the product stays exact."""
    found = cpu.cpu_vendor_family()
    runnable = [i for i in ("avx512", "avx2") if i in cpu.usable_isas()]
    if found is None or not runnable:
        pytest.skip("needs an x86 CPU with AVX2 that /proc/cpuinfo names")
    cc = require_tool("gcc")
    best, *rest = runnable
    slower = rest[0] if rest else "c"
    ticks = {ring_name: {op: {best: 2.0, slower: 1.0}}}
    policy = tmp_path / "policy.json"
    m = {"cpu": "this CPU", "vendor": found[0], "family": found[1], "source": "a test"}
    policy.write_text(json.dumps({"measurements": [{**m, "ticks": ticks}]}))
    out = tmp_path / "lib"
    p = _run("generate", "--ring", ring_name, "--isa", "c", *(f"--isa={i}" for i in runnable),
             "--dispatch", "--policy", str(policy), "-o", str(out))  # fmt: skip
    assert p.returncode == 0, p.stderr
    stem = f"nttgen_{ring_name}"
    command = json.loads((out / f"{stem}.json").read_text())["generator"]["command"]
    assert command.endswith(f"--policy {policy}"), command
    objects = []
    front = json.loads((out / f"{stem}.json").read_text())
    for name, flags in [(stem, []), *((i["stem"], i["cflags"]) for i in front["isas"])]:
        src = out / f"{name}.c"
        obj = tmp_path / f"{name}.o"
        subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *flags, "-c",
                        str(src), "-o", str(obj)], check=True)  # fmt: skip
        objects.append(str(obj))
    ring = PRESETS.get(ring_name) or NTRU_PRESETS[ring_name]
    n = ring.n if ring_name in PRESETS else ring.p  # type: ignore[union-attr]
    (tmp_path / "driver.c").write_text(DRIVER.format(stem=stem, n=n, t="int16_t", op=op))
    exe = tmp_path / "driver"
    subprocess.run([cc, "-std=c99", "-O2", f"-I{out}", str(tmp_path / "driver.c"), *objects,
                    "-o", str(exe)], check=True)  # fmt: skip
    rng = np.random.default_rng(7)
    q = ring.q
    a = rng.integers(-(q // 2), q // 2 + 1, n)
    b = rng.integers(-1, 2, n) if op == "polymul_small" else rng.integers(-(q // 2), q // 2 + 1, n)
    env = {k: v for k, v in os.environ.items() if k != "NTTGEN_ISA"}
    data = " ".join(map(str, [*a, *b]))
    want = [int(x) % q for x in _product(ring_name, a, b)]
    for force, expect_op in (("-", slower), (best, best)):
        proc = subprocess.run([str(exe), force], input=data, capture_output=True, text=True,
                              env=env, check=True)  # fmt: skip
        names, product = proc.stdout.split("\n")[:2]
        first, of_op, unknown = names.split()
        assert of_op == expect_op and unknown == "null", (force, names)
        if ring_name == "mlkem":
            assert first == best  # the NTT domain keeps the best ISA
        assert [int(x) % q for x in product.split()] == want, force


def _product(ring_name: str, a: np.ndarray, b: np.ndarray) -> list[int]:
    """The exact product of ``a`` and ``b`` in the preset's ring, reduced mod q."""
    if ring_name in PRESETS:
        return [int(x) for x in schoolbook(a, b, PRESETS[ring_name].q)]
    return [int(x) for x in trinomial_product(a, b, NTRU_PRESETS[ring_name].q)]


def test_bench_writes_a_policy_that_generate_reads(tmp_path: Path) -> None:
    if cpu.cpu_vendor_family() is None or "avx2" not in cpu.usable_isas():
        pytest.skip("needs an x86 CPU with AVX2 that /proc/cpuinfo names")
    policy = tmp_path / "policy.json"
    p = _run("bench", "--ring", "mlkem", "--isa", "c", "--isa", "avx2", "--op", "polymul",
             "--samples", "3", "--batch", "2", "--policy", str(policy))  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(policy.read_text())
    check_policy(data, str(policy))
    (m,) = data["measurements"]
    assert (m["vendor"], m["family"]) == cpu.cpu_vendor_family()
    assert set(m["ticks"]["mlkem"]["polymul"]) == {"c", "avx2"}
    p = _run("generate", "--ring", "mlkem", "--isa", "avx2", "--dispatch", "--policy",
             str(policy), "-o", str(tmp_path / "o"))  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "o" / "nttgen_mlkem.h").exists()
    p = _run("bench", "--ring", "mlkem", "--isa", "avx2", "--op", "ntt", "--policy", str(policy))
    assert p.returncode == 2 and "time at least two" in p.stderr
