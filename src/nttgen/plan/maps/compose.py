"""Composition of ring maps: a :class:`MapTree` is a root map with one (optional) sub-map per
target, itself a :class:`~.base.RingMap` from the root's source to the leaves' moduli.

The leaves are listed depth-first in target order: the leaves of target 0's subtree, then those
of target 1's, and so on (a target without a sub-map is a leaf itself). A tree is an embedding as
soon as one of its maps is; its inverse is then valid for the same inputs as its maps' (forward
images and componentwise products of forward images).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import FactorisationError
from .base import RingMap
from .cost import Cost
from .polys import describe


class MapTree(RingMap):
    """``root`` followed by ``children[i]`` on target i (None: target i is a leaf).

    ``forward`` returns the leaves' parts (depth-first, in target order); ``inverse`` takes them
    back. The same child object may serve several targets with equal moduli."""

    inverse_valid_for = (
        "the forward images and componentwise products of forward images, when any map in the "
        "tree is an embedding; every tuple of parts otherwise"
    )

    def __init__(
        self, root: RingMap, children: Sequence[RingMap | None], name: str | None = None
    ) -> None:
        if len(children) != len(root.targets):
            raise FactorisationError(
                f"{root.name}: {len(root.targets)} targets but {len(children)} children"
            )
        for i, (t, c) in enumerate(zip(root.targets, children, strict=True)):
            if c is not None and (c.q != root.q or c.source != t):
                raise FactorisationError(
                    f"{root.name}: child {i} ({c.name}) has source {describe(c.source, c.q)}, "
                    f"but target {i} is {describe(t, root.q)}"
                )
        targets = []
        for t, c in zip(root.targets, children, strict=True):
            targets.extend([t] if c is None else c.targets)
        super().__init__(root.q, root.source, targets, name or f"tree({root.name})")
        self.root = root
        self.children: tuple[RingMap | None, ...] = tuple(children)
        self.kind = (
            "embedding"
            if root.kind == "embedding"
            or any(c is not None and c.kind == "embedding" for c in children)
            else "crt"
        )
        self._spans: list[tuple[int, int]] = []
        k = 0
        for c in children:
            n = 1 if c is None else len(c.targets)
            self._spans.append((k, k + n))
            k += n

    def _forward(self, a: list[int], ctr: Cost) -> list[list[int]]:
        out: list[list[int]] = []
        for part, c in zip(self.root.forward(a, ctr), self.children, strict=True):
            out.extend([part] if c is None else c.forward(part, ctr))
        return out

    def _inverse(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        mids = []
        for (lo, hi), c in zip(self._spans, self.children, strict=True):
            mids.append(parts[lo] if c is None else c.inverse(parts[lo:hi], ctr))
        return self.root.inverse(mids, ctr)

    def norms(self) -> tuple[int, ...] | None:
        """nu of a leaf = nu of its target in the root times nu of the leaf in its subtree
        (None unless every map has :meth:`~.base.RingMap.norms`)."""
        root = self.root.norms()
        if root is None:
            return None
        out: list[int] = []
        for nu, c in zip(root, self.children, strict=True):
            if c is None:
                out.append(nu)
                continue
            sub = c.norms()
            if sub is None:
                return None
            out.extend(nu * x % self.q for x in sub)
        return tuple(out)

    def _inverse_raw(self, parts: list[list[int]], ctr: Cost) -> list[int]:
        mids = []
        for (lo, hi), c in zip(self._spans, self.children, strict=True):
            mids.append(parts[lo] if c is None else c.inverse_raw(parts[lo:hi], ctr))
        return self.root.inverse_raw(mids, ctr)

    def maps(self) -> list[RingMap]:
        """Every map of the tree, root first, depth-first (a shared child is listed once per
        target it serves)."""
        out: list[RingMap] = [self.root]
        for c in self.children:
            if isinstance(c, MapTree):
                out.extend(c.maps())
            elif c is not None:
                out.append(c)
        return out

    def constants(self) -> dict[str, object]:
        """{"root": root constants, "children": constants of each distinct child map}."""
        seen: dict[int, RingMap] = {}
        for c in self.children:
            if c is not None:
                seen.setdefault(id(c), c)
        return {
            "root": self.root.constants(),
            "children": [c.constants() for c in seen.values()],
        }

    def describe(self) -> str:
        """The root's line, then one line per kind of child (grouped by map name, with the
        count and the first such child's description), recursively indented."""
        lines = [self.root.describe()]
        groups: dict[str, list[RingMap]] = {}
        for c in self.children:
            if c is not None:
                groups.setdefault(c.name, []).append(c)
        leaves = sum(c is None for c in self.children)
        for members in groups.values():
            first, *rest = members[0].describe().splitlines()
            lines.append(f"  {len(members)} x {first}")
            lines.extend("  " + r for r in rest)
        if leaves:
            lines.append(f"  {leaves} targets kept whole")
        return "\n".join(lines)
