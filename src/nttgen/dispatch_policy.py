"""The front end's per-CPU policy: which ISA its automatic choice skips, for which operations, on
which CPU families, because ``nttgen bench`` measured it slower there than a narrower ISA.

The measurements live in a JSON file (the package's ``dispatch_policy.json`` by default;
``nttgen bench --policy FILE`` writes one from a run on the user's machine, ``nttgen generate
--policy FILE`` reads it). Each measurement names the CPU (vendor as CPUID leaf 0 spells it,
family as CPUID leaf 1 computes it), how it was timed, and the median ticks per call of each
ring, operation and ISA.

Operations are grouped as the front end must choose them: the NTT-domain operations (``ntt``,
``basemul``, ``basemul_acc``, the cached inner product, ``intt`` and the order conversions)
share one ISA, because data in the NTT domain (and a multiplication cache) is in the native
layout of the ISA that wrote it; every other operation (a product from standard order to
standard order, an element-wise map) is its own group. A group's cost on an ISA is the sum of
its measured operations (those that take a k at one k, the smallest measured, 3 where there
is one). An ISA is skipped for a group on a CPU family when
an ISA after it in the front end's default order (wider first, portable C last) measured a
lower cost there; rings, groups and families without measurements keep the default order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import InputError

DOMAIN_OPS = ("ntt", "basemul", "basemul_acc", "basemul_cache", "basemul_acc_cached", "intt",
              "ntt_vec", "intt_vec", "to_standard", "from_standard")  # fmt: skip
"""The operations that read or write the NTT domain: one ISA serves all of them."""

DOMAIN = "ntt domain"
"""The name of the group of :data:`DOMAIN_OPS`."""

PREFERRED_K = 3
"""The ``basemul_acc`` term count a group's cost uses where it was measured."""

VENDORS = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}
"""CPUID vendor strings and the short names the front end's header uses."""


@dataclass(frozen=True)
class Skip:
    """One rule of the policy: on CPUs of ``vendor`` (CPUID's string) and ``family`` (CPUID's
    family, base plus extended), the automatic choice does not take ``isa`` for the operations
    of ``group``, because ``faster`` measured ``cost[faster]`` ticks against ``cost[isa]``."""

    vendor: str
    family: int
    group: str
    isa: str
    faster: str
    cost: tuple[tuple[str, float], ...]
    cpu: str
    source: str

    @property
    def vendor_word(self) -> int:
        """The vendor as CPUID leaf 0 returns its first four characters in EBX (the front
        end compares that word: ``Auth`` for AMD, ``Genu`` for Intel)."""
        return int.from_bytes(self.vendor[:4].encode("ascii"), "little")

    def describe(self) -> str:
        """One line for the front end's header: the family, the ISA skipped, the group and
        the measured ticks."""
        who = VENDORS.get(self.vendor, self.vendor)
        ticks = ", ".join(f"{isa} {t:,.0f}" for isa, t in self.cost)
        return f"{who} family {self.family:#x}: {self.isa} skipped for {self.group} ({ticks})"


def group_of(op: str) -> str:
    """The group an entry point is chosen in: :data:`DOMAIN` for the NTT-domain operations,
    else the operation itself."""
    return DOMAIN if op in DOMAIN_OPS else op


def groups(entries: Sequence[str]) -> list[str]:
    """The groups of a front end's entry points, in their first entry's order."""
    return list(dict.fromkeys(group_of(e) for e in entries))


def default_policy() -> dict[str, Any]:
    """The measurements shipped with nttgen (``dispatch_policy.json`` in the package)."""
    text = resources.files("nttgen").joinpath("dispatch_policy.json").read_text()
    return json.loads(text)


@dataclass(frozen=True)
class Policy:
    """Measurements read from a policy file: ``path`` as the user gave it (quoted in the
    command a front end names), ``data`` the file's content."""

    path: str
    data: dict[str, Any]


def load_policy(path: str, option: str = "--policy") -> Policy:
    """The measurements in the policy file ``path``; raises :class:`InputError` naming
    ``option`` when it cannot be read or is not a policy file."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or e.__class__.__name__
        raise InputError(f"{option} {path}: cannot read it ({why})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{option} {path}: not JSON ({e.msg}, line {e.lineno})") from None
    check_policy(data, f"{option} {path}")
    return Policy(path, data)


def check_policy(data: object, where: str) -> None:
    """Raise :class:`InputError` naming ``where`` unless ``data`` has the policy file's
    shape: ``{"measurements": [{"vendor", "family", "cpu", "source", "ticks": {ring: {op:
    {isa: ticks}}}}]}`` (``basemul_acc`` keyed ``basemul_acc k=<k>``)."""
    ok = isinstance(data, dict) and isinstance(data.get("measurements"), list)
    for m in data.get("measurements", []) if ok else ():  # type: ignore[union-attr]
        ok = ok and isinstance(m, dict)
        ok = ok and isinstance(m.get("vendor"), str) and isinstance(m.get("family"), int)
        ok = ok and isinstance(m.get("cpu"), str) and isinstance(m.get("source"), str)
        ticks = m.get("ticks") if isinstance(m, dict) else None
        ok = ok and isinstance(ticks, dict)
        for ops in ticks.values() if ok else ():  # type: ignore[union-attr]
            ok = ok and isinstance(ops, dict)
            for by_isa in ops.values() if ok else ():
                ok = ok and isinstance(by_isa, dict)
                ok = ok and all(isinstance(t, int | float) and t > 0 for t in by_isa.values())
    if not ok:
        raise InputError(
            f"{where}: not a policy file (it needs a list 'measurements' of objects with "
            "'vendor', 'family', 'cpu', 'source' and 'ticks': ring -> op -> ISA -> ticks)"
        )


def _op_of(key: str) -> tuple[str, int]:
    """A measured operation's key (``ntt``, ``basemul_acc k=3``) as (op, k; 0 without)."""
    op, _, k = key.partition(" k=")
    return op, int(k) if k.isdigit() else 0


def _group_costs(ops: Mapping[str, Mapping[str, float]], group: str) -> dict[str, float]:
    """Each ISA's cost for ``group``: the sum of the group's measured operations (one k of
    those that take one), for the ISAs measured on every one of them."""
    keys = [key for key in ops if group_of(_op_of(key)[0]) == group]
    ks = sorted({_op_of(key)[1] for key in keys} - {0})
    if ks:
        k = PREFERRED_K if PREFERRED_K in ks else ks[0]
        keys = [key for key in keys if _op_of(key)[1] in (0, k)]
    if not keys:
        return {}
    isas = set.intersection(*(set(ops[key]) for key in keys))
    return {isa: sum(ops[key][isa] for key in keys) for isa in isas}


def skips(
    policy: Mapping[str, Any], ring: str, order: Sequence[str], entries: Sequence[str]
) -> list[Skip]:
    """The rules of ``policy`` for the front end of the ring named ``ring`` over the ISAs of
    ``order`` (its default order, best first) with the entry points ``entries``: for each
    measured CPU family and group, every ISA that an ISA after it in ``order`` beat. Sorted
    by vendor, family, group and ISA (the front end's table is deterministic)."""
    out: list[Skip] = []
    for m in policy.get("measurements", []):
        ops = m["ticks"].get(ring)
        if not ops:
            continue
        for group in groups(entries):
            cost = _group_costs(ops, group)
            measured = [isa for isa in order if isa in cost]
            for i, isa in enumerate(measured):
                later = measured[i + 1 :]
                if not later:
                    continue
                best = min(later, key=lambda x: cost[x])
                if cost[best] < cost[isa]:
                    shown = tuple((x, cost[x]) for x in measured)
                    rule = Skip(
                        m["vendor"], m["family"], group, isa, best, shown, m["cpu"], m["source"]
                    )
                    out.append(rule)
    return sorted(out, key=lambda s: (s.vendor, s.family, s.group, s.isa))


def measurement(
    cpu: str, vendor: str, family: int, source: str, ticks: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """One measurement of a policy file: the CPU's name, CPUID vendor and family, how it was
    timed, and the ticks (ring -> op key -> ISA -> median ticks per call)."""
    return {"cpu": cpu, "vendor": vendor, "family": family, "source": source, "ticks": ticks}


def merged(policy: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``policy`` with the measurement ``new`` added: for its vendor and family, the rings it
    measured replace the earlier figures of those rings; other families are kept."""
    out: list[dict[str, Any]] = []
    for m in policy.get("measurements", []):
        if (m["vendor"], m["family"]) == (new["vendor"], new["family"]):
            rest = {r: ops for r, ops in m["ticks"].items() if r not in new["ticks"]}
            if rest:
                out.append({**m, "ticks": rest})
        else:
            out.append(dict(m))
    out.append(dict(new))
    out.sort(key=lambda m: (m["vendor"], m["family"], m["cpu"]))
    return {**{k: v for k, v in policy.items() if k != "measurements"}, "measurements": out}


def automatic_choice(
    rules: Sequence[Skip], runnable: Sequence[str], group: str, cpu: tuple[str, int] | None
) -> str:
    """The ISA a front end's automatic choice takes for ``group`` on a CPU of ``cpu`` (vendor,
    family; None: unknown, no rule applies): the first of ``runnable`` (the ISAs compiled in
    that run here, best first, portable C last) that no rule of ``rules`` skips there."""
    for isa in runnable:
        skipped = any(
            (r.vendor, r.family, r.group, r.isa) == (*cpu, group, isa) for r in rules
        ) if cpu else False  # fmt: skip
        if not skipped:
            return isa
    raise ValueError("the portable C is never skipped: it must be among the runnable ISAs")
