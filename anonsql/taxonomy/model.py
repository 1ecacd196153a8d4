"""Value generalization hierarchies (taxonomies): one rooted tree of labels per attribute.

A taxonomy is declared as a nested mapping (TOML or JSON: `{root = {inner = [leaf, ...]}}`)
or as (value, parent) rows (the root's parent is NULL), and validated here: one root, no
cycle, every label once. Nodes are numbered in pre-order, so a column generalized along a
taxonomy is coded by node numbers and `generalize` is a parent lookup. Nothing here is
specific to one algorithm: the same tree can serve as a quasi-identifier hierarchy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AnonsqlError
from ..files import read_text


@dataclass(frozen=True)
class Taxonomy:
    """A validated tree: labels in pre-order (index 0 is the root), parent index (-1 for the
    root) and children per node."""

    name: str
    labels: tuple[str, ...]
    parents: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    # precomputed navigation (the -g methods ask for it per score): per node, its subtree, its
    # leaves and its lineage (the node, then its ancestors up to the root)
    _subtree: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    _leaves: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    lineage: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    # per node, the (parent, child) edges from the root down to it (partial-count estimates walk them)
    descent: tuple[tuple[tuple[int, int], ...], ...] = field(init=False, repr=False, compare=False)
    # per node, one past its last descendant: pre-order makes its subtree the nodes node .. ends[node]-1
    ends: tuple[int, ...] = field(init=False, repr=False, compare=False)

    @classmethod
    def from_rows(cls, name: str, rows: Iterable[tuple[Any, Any]]) -> Taxonomy:
        """Build from (value, parent) pairs, parent None for the root; clear errors on a
        missing/second root, a repeated value, an unknown parent or a cycle."""
        parent_of: dict[str, str | None] = {}
        for value, parent in rows:
            v = _label(name, value)
            if v in parent_of:
                raise AnonsqlError(f"taxonomy {name!r}: value {v!r} is listed twice")
            parent_of[v] = None if parent is None else _label(name, parent)
        roots = [v for v, p in parent_of.items() if p is None]
        if not parent_of:
            raise AnonsqlError(f"taxonomy {name!r} is empty")
        if len(roots) != 1:
            raise AnonsqlError(f"taxonomy {name!r} must have exactly one root (a value without parent), "
                               f"found {len(roots)}" + (f": {', '.join(map(repr, roots[:5]))}" if roots else ""))
        kids: dict[str, list[str]] = {v: [] for v in parent_of}
        for v, p in parent_of.items():
            if p is not None:
                if p not in parent_of:
                    raise AnonsqlError(f"taxonomy {name!r}: parent {p!r} of {v!r} is not a value of the taxonomy")
                kids[p].append(v)
        order: list[str] = []
        stack = [roots[0]]
        while stack:
            v = stack.pop()
            order.append(v)
            stack.extend(reversed(kids[v]))
        if len(order) != len(parent_of):
            stray = next(v for v in parent_of if v not in set(order))
            raise AnonsqlError(f"taxonomy {name!r} has a cycle through {stray!r} (not reachable from the root)")
        index = {v: i for i, v in enumerate(order)}
        parents = tuple(-1 if (up := parent_of[v]) is None else index[up] for v in order)
        children = tuple(tuple(index[c] for c in kids[v]) for v in order)
        return cls(name, tuple(order), parents, children)

    @classmethod
    def flat(cls, name: str, values: Iterable[str]) -> Taxonomy:
        """One level, a root above `values` (kept in order): the tree of a column whose cells are
        only ever deleted, for deletion is generalization to the root, ν.

        >>> Taxonomy.flat("dx", ["AP", "GAS"]).labels
        ('ν', 'AP', 'GAS')
        """
        leaves = tuple(dict.fromkeys(values))
        root = "ν"
        while root in leaves:
            root += "ν"
        n = len(leaves)
        return cls(name, (root, *leaves), (-1,) + (0,) * n, (tuple(range(1, n + 1)),) + ((),) * n)

    @classmethod
    def from_nested(cls, name: str, tree: Any) -> Taxonomy:
        """Build from a nested mapping with one key, the root; a node's value is a mapping of
        children, a list of children (labels or one-key mappings), or empty."""
        if not isinstance(tree, Mapping) or len(tree) != 1:
            raise AnonsqlError(f"taxonomy {name!r} must be a mapping with exactly one key, the root")
        rows: list[tuple[str, str | None]] = []

        def walk(node: Any, parent: str | None) -> None:
            if isinstance(node, Mapping):
                for label, sub in node.items():
                    rows.append((_label(name, label), parent))
                    walk(sub, _label(name, label))
            elif isinstance(node, list):
                for item in node:
                    walk(item if isinstance(item, Mapping) else {item: None}, parent)
            elif node is not None:
                raise AnonsqlError(f"taxonomy {name!r}: children of {parent!r} must be a list or a mapping, "
                                   f"got {node!r}")

        walk(tree, None)
        return cls.from_rows(name, rows)

    @classmethod
    def from_file(cls, name: str, path: str | Path) -> Taxonomy:
        """Read a .toml or .json file holding the nested form (TOML: `[Any]`, `Low = [1, 2]`,
        `[Any.Mid-High]` ...)."""
        path = Path(path)
        text = read_text(path, "taxonomy file")
        suffix = path.suffix.lower()
        try:
            if suffix == ".toml":
                import tomllib
                data: Any = tomllib.loads(text)
            elif suffix == ".json":
                data = json.loads(text)
            else:
                raise AnonsqlError(f"taxonomy file {path} must end in .toml or .json")
        except (ValueError, TypeError) as exc:
            raise AnonsqlError(f"taxonomy file {path} is not valid {suffix[1:].upper()}: {exc}") from None
        return cls.from_nested(name, data)

    # -- navigation ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.labels)

    def index(self, label: Any) -> int:
        """The node of a label (data values are matched by their text)."""
        try:
            return self._index[str(label)]
        except KeyError:
            raise AnonsqlError(f"value {str(label)!r} is not in taxonomy {self.name!r}") from None

    def find(self, label: Any) -> int | None:
        return self._index.get(str(label))

    def generalize(self, node: int, levels: int) -> int:
        """Generalize(v, λ): the ancestor `levels` steps up, the root if the tree ends first."""
        for _ in range(levels):
            if self.parents[node] < 0:
                break
            node = self.parents[node]
        return node

    def depth(self, node: int) -> int:
        """Steps from the root (the root has depth 0)."""
        return len(self.lineage[node]) - 1

    @property
    def height(self) -> int:
        """The deepest node's depth: the most levels any value can be generalized."""
        return max(len(line) for line in self.lineage) - 1

    def is_descendant(self, node: int, ancestor: int) -> bool:
        """Descendant(v, a) of the thesis: strictly below `ancestor` (a node is not its own)."""
        return node != ancestor and ancestor in self.lineage[node]

    def leaves_under(self, node: int) -> list[int]:
        """The primitive values (leaves) of the subtree of `node`, in pre-order."""
        return list(self._leaves[node])

    def subtree(self, node: int) -> list[int]:
        """`node` and all its descendants, in pre-order."""
        return list(self._subtree[node])

    def rows(self) -> list[tuple[str, str | None]]:
        """(value, parent) pairs in pre-order, the form stored in the database."""
        return [(v, None if p < 0 else self.labels[p]) for v, p in zip(self.labels, self.parents)]

    def check_values(self, column: str, values: Sequence[Any]) -> None:
        """Every data value must be a node (a leaf, or an inner node for a value that is
        already generalized)."""
        missing = [str(v) for v in values if self.find(v) is None]
        if missing:
            shown = ", ".join(repr(v) for v in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise AnonsqlError(f"column '{column}' has {len(missing)} value(s) missing from taxonomy "
                               f"{self.name!r}: {shown}")

    def check_leaves(self, column: str, values: Sequence[Any]) -> None:
        """Every data value must be a leaf (totals along the taxonomy add up its leaves' rows), and
        the root must have children (else there is no total to publish)."""
        if not self.children[0]:
            raise AnonsqlError(f"taxonomy {self.name!r} has a root only: no totals to publish along it")
        wrong = [v for v in values if v is None or self.find(v) is None or self.children[self.index(v)]]
        if wrong:
            raise AnonsqlError(f"column '{column}' has {len(wrong)} value(s) that are not leaves of taxonomy "
                               f"{self.name!r}: {', '.join(repr(v) for v in wrong[:5])}")

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {v: i for i, v in enumerate(self.labels)})
        lineage = []
        for n in range(len(self.labels)):
            line = [n]
            while self.parents[line[-1]] >= 0:
                line.append(self.parents[line[-1]])
            lineage.append(tuple(line))
        subtree: list[list[int]] = [[] for _ in self.labels]
        stack = [0] if self.labels else []
        while stack:  # the children's order: pre-order; each node joins its every ancestor's list
            n = stack.pop()
            for a in lineage[n]:
                subtree[a].append(n)
            stack.extend(reversed(self.children[n]))
        object.__setattr__(self, "lineage", tuple(lineage))
        object.__setattr__(self, "descent", tuple(tuple(zip(line[:0:-1], line[-2::-1])) for line in lineage))
        object.__setattr__(self, "_subtree", tuple(tuple(t) for t in subtree))
        object.__setattr__(self, "ends", tuple(n + len(t) for n, t in enumerate(subtree)))
        object.__setattr__(self, "_leaves", tuple(tuple(m for m in t if not self.children[m]) for t in subtree))


def _label(name: str, value: Any) -> str:
    """A node label as text: strings and integers (TOML/JSON numbers) are accepted."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise AnonsqlError(f"taxonomy {name!r}: label {value!r} must be a string or an integer")
    text = str(value).strip()
    if not text:
        raise AnonsqlError(f"taxonomy {name!r}: empty label")
    return text
