"""Generalization hierarchies of quasi-identifiers (issue 33), parsed and described: pure, no SQL.

A hierarchy is a ladder of levels for one column: level 0 is the value itself, levels 1..n
coarsen it step by step, and the last level, n + 1, is `*`: ⊥, the suppressed value (NULL).
Each level is a function of the one below (a value's label at level l + 1 depends only on its
label at level l), so generalizing never splits an equivalence class: the lattice of levels is
monotone for k-anonymity, which the search (anonsql.kanon.recoding) relies on.

Kinds, as typed after `COLUMN=`:

* `interval:5,10,20,40`: numbers by equal-width ranges `[30,40)`, each width a multiple of the
  one before (so ranges nest);
* `prefix:3,1`: text by its first characters, the rest masked by `*` to the value's own length
  (`12345` -> `123**` -> `1****`); a value no longer than the kept prefix stays whole;
* `date:day,month,quarter,year` (any increasing sub-ladder of day, week, month, quarter, year):
  a date or a timestamp by its calendar period, `2016-05-10`, `[2016-05-09,2016-05-16)` (a
  week from Monday), `2016-05`, `2016-Q2`, `2016`; a week straddles months and years, so
  `week` can only be the last period; on a timestamp, `day` (the time of day dropped) is always
  the first level;
* `taxonomy:NAME`: a stored taxonomy (anonsql.taxonomy; `anonsql taxonomy load`): level l is
  the node l steps above the value (the root's children at most); the root itself is `*`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import AnonsqlError
from ..taxonomy.model import Taxonomy

KINDS = ("interval", "prefix", "date", "taxonomy")
PERIODS = ("day", "week", "month", "quarter", "year")
MAX_STEPS = 29
#: The column kinds (anonsql.catalog.type_kind) each hierarchy kind generalizes.
COLUMN_KINDS = {"interval": ("integer", "float", "decimal"), "prefix": ("text",), "date": ("date", "timestamp"),
                "taxonomy": None, "none": None}  # any: a taxonomy matches values by their text
USAGE = ("use COLUMN=interval:W1,W2,... (whole widths, each a multiple of the one before), COLUMN=prefix:N1,N2,... "
         "(decreasing kept lengths), COLUMN=date:P1,P2,... (increasing among day, week, month, quarter, year) or "
         "COLUMN=taxonomy:NAME")


@dataclass(frozen=True)
class Hierarchy:
    """One column's ladder: `steps` are the widths, kept lengths, periods or (for a taxonomy)
    the steps up the tree of levels 1..n; level n + 1 is ⊥."""

    column: str
    kind: str
    steps: tuple[Any, ...]
    spec: str  # as typed after 'COLUMN='
    taxonomy: Taxonomy | None = None

    @property
    def top(self) -> int:
        """The level of ⊥ (`*`, NULL): one above the last step."""
        return len(self.steps) + 1

    def meaning(self, level: int) -> str:
        """What level `level` publishes, in words."""
        if level == 0:
            return "the value itself"
        if level == self.top:
            return "* (suppressed: NULL)"
        step = self.steps[level - 1]
        if self.kind == "interval":
            return f"ranges of width {step}, e.g. [30,{30 + step}) (text)"
        if self.kind == "prefix":
            return f"the first {step} character{'s' if step != 1 else ''}, the rest masked by * (text)"
        if self.kind == "date":
            return {"day": "the day, e.g. 2016-05-10 (text)", "week": "the week from Monday, e.g. "
                    "[2016-05-09,2016-05-16) (text)", "month": "the month, e.g. 2016-05 (text)",
                    "quarter": "the quarter, e.g. 2016-Q2 (text)", "year": "the year, e.g. 2016 (text)"}[step]
        return f"the taxonomy node {step} step{'s' if step != 1 else ''} up (text)"

    @classmethod
    def suppression_only(cls, column: str) -> Hierarchy:
        """The ladder of a quasi-identifier given no hierarchy: the value, then * (⊥)."""
        return cls(column, "none", (), "*")

    def with_steps(self, steps: tuple[Any, ...]) -> Hierarchy:
        return replace(self, steps=steps)

    def with_column(self, name: str) -> Hierarchy:
        return replace(self, column=name)

    def with_taxonomy(self, tree: Taxonomy) -> Hierarchy:
        """A `taxonomy:NAME` hierarchy with its stored tree: one level per step up to the root's children."""
        if tree.height - 1 > MAX_STEPS:
            raise AnonsqlError(f"hierarchy {self.column}={self.spec}: taxonomy {tree.name!r} is {tree.height} levels "
                               f"deep; at most {MAX_STEPS + 1} are searched")
        return replace(self, taxonomy=tree, steps=tuple(range(1, max(tree.height, 1))))

    def label(self, value: Any, level: int) -> str | None:
        """The label of `value` at `level`, computed in Python (the oracle the SQL of
        anonsql.hierarchy.expressions is tested against); None for ⊥ and for NULL."""
        if value is None or level == self.top:
            return None
        if level == 0:
            return str(value)
        step = self.steps[level - 1]
        if self.kind == "interval":
            low = math.floor(value / step) * step
            return f"[{low},{low + step})"
        if self.kind == "prefix":
            text = str(value)
            return text if len(text) <= step else text[:step] + "*" * (len(text) - step)
        if self.kind == "date":
            day = value.date() if isinstance(value, dt.datetime) else value
            if step == "week":
                monday = day - dt.timedelta(days=day.weekday())
                return f"[{monday.isoformat()},{(monday + dt.timedelta(days=7)).isoformat()})"
            return {"day": day.isoformat(), "month": f"{day.year}-{day.month:02d}",
                    "quarter": f"{day.year}-Q{(day.month - 1) // 3 + 1}", "year": str(day.year)}[step]
        assert self.taxonomy is not None
        node = self.taxonomy.index(value)
        line = self.taxonomy.lineage[node]  # the node, then its ancestors up to the root
        return self.taxonomy.labels[line[min(step, max(len(line) - 2, 0))]]  # never the root: that is ⊥


def parse(text: str) -> Hierarchy:
    """`COLUMN=KIND:ARGS` as typed (--hierarchy), checked; one error line for anything else.

    >>> parse("age=interval:5,10,20").steps
    (5, 10, 20)
    >>> parse("zip=prefix:3,1").meaning(1)
    'the first 3 characters, the rest masked by * (text)'
    """
    column, eq, spec = str(text).rpartition("=")
    if not eq or not column.strip():
        raise AnonsqlError(f"bad --hierarchy {text!r}: {USAGE}")
    return parse_spec(column.strip(), spec)


def parse_spec(column: str, spec: str) -> Hierarchy:
    """A hierarchy of `column` from its spec (`interval:5,10`, ...), as a release's `hierarchies` gives it."""
    kind, _, args = str(spec).strip().partition(":")
    items = [a.strip() for a in args.split(",")] if args.strip() else []
    bad = AnonsqlError(f"bad hierarchy {column}={spec!r}: {USAGE}")
    if kind not in KINDS or not items:
        raise bad
    if len(items) > MAX_STEPS:  # PostgreSQL's GROUPING() takes at most 31 columns: the levels of one QI
        raise AnonsqlError(f"bad hierarchy {column}={spec!r}: at most {MAX_STEPS} levels between the value and *")
    if kind == "taxonomy":
        if len(items) != 1:
            raise bad
        return Hierarchy(column, kind, (), spec, None)
    if kind == "date":
        if any(p not in PERIODS for p in items) or [PERIODS.index(p) for p in items] != sorted(
                {PERIODS.index(p) for p in items}):
            raise bad
        if "week" in items[:-1]:
            raise AnonsqlError(f"bad hierarchy {column}={spec!r}: a week straddles months and years, so it cannot "
                               "sit below a coarser period; put week last (or leave it out)")
        return Hierarchy(column, kind, tuple(items), spec)
    if not all(a.isdigit() and int(a) >= 1 for a in items):
        raise bad
    steps = tuple(int(a) for a in items)
    if kind == "interval" and any(b % a or b == a for a, b in zip(steps, steps[1:])):
        raise AnonsqlError(f"bad hierarchy {column}={spec!r}: each width must be a larger multiple of the one "
                           "before, so that ranges nest")
    if kind == "prefix" and any(b >= a for a, b in zip(steps, steps[1:])):
        raise AnonsqlError(f"bad hierarchy {column}={spec!r}: the kept prefix lengths must decrease")
    return Hierarchy(column, kind, steps, spec)


def taxonomy_name(h: Hierarchy) -> str:
    """The stored taxonomy a `taxonomy:NAME` hierarchy names."""
    return h.spec.partition(":")[2].strip()


def parse_all(specs: Sequence[str] | str | Mapping[str, str] | None) -> list[Hierarchy]:
    """Repeated --hierarchy texts, one text, or a release's {column: spec} table; a column given twice is refused."""
    if specs is None:
        return []
    if isinstance(specs, Mapping):
        found = [parse_spec(str(c), str(s)) for c, s in specs.items()]
    else:
        found = [parse(s) for s in ([specs] if isinstance(specs, str) else specs)]
    seen: set[str] = set()
    for h in found:
        if h.column in seen:
            raise AnonsqlError(f"column '{h.column}' has two hierarchies; give one per column")
        seen.add(h.column)
    return found
