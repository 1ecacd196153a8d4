"""Disclosure risk measured in SQL where the data lives: re-identification over the
quasi-identifiers (prosecutor risk, sample uniques) and attribute disclosure of a sensitive
column (distinct and entropy l-diversity, Machanavajjhala et al. 2007; t-closeness, Li et al.
2007). NULL (⊥) is a value of its own everywhere. docs/concepts.md defines each figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..validate import column_pairs

#: A record is "at risk" when its prosecutor risk 1/|E| exceeds this (a class smaller than 5).
RISK_THRESHOLD = 0.2
ORDERED_KINDS = ("integer", "float", "decimal", "date", "timestamp")  # t-closeness: the ordered distance


@dataclass
class Reidentification:
    """Prosecutor re-identification risk over the quasi-identifiers."""

    threshold: float
    max_risk: float  # max over records of 1/|E| (= 1/k)
    mean_risk: float  # mean over records of 1/|E| (= classes / N)
    records_above_threshold: int  # records with 1/|E| > threshold
    sample_uniques: int  # records alone in their equivalence class

    def lines(self) -> list[str]:
        return [f"  re-identification risk (prosecutor, 1/|E|): highest {self.max_risk:.3g}, "
                f"mean {self.mean_risk:.3g}",
                f"  records with a risk above {self.threshold:g}: {self.records_above_threshold:,}; "
                f"records unique on the quasi-identifiers: {self.sample_uniques:,}"]


@dataclass
class Diversity:
    """How much a sensitive column's values vary within the equivalence classes."""

    column: str
    distinct_l: int  # min over classes of the distinct sensitive values (NULL one of them)
    entropy_l: float  # min over classes of exp(entropy of the sensitive values)
    t: float  # max over classes of the distance to the table's distribution
    distance: str  # "ordered" (numbers, dates) or "equal" (categories)
    l_required: int | None = None
    t_allowed: float | None = None
    classes_below_l: int = 0
    rows_below_l: int = 0
    classes_above_t: int = 0
    rows_above_t: int = 0

    def lines(self) -> list[str]:
        lines = [f"  sensitive {self.column}: distinct l-diversity {self.distinct_l}, entropy l-diversity "
                 f"{self.entropy_l:.3g}, t-closeness {self.t:.3g} ({self.distance} distance)"]
        if self.l_required is not None and self.classes_below_l:
            lines.append(f"    {self.classes_below_l:,} classes ({self.rows_below_l:,} rows) have fewer than "
                         f"{self.l_required} distinct {self.column} values")
        if self.t_allowed is not None and self.classes_above_t:
            lines.append(f"    {self.classes_above_t:,} classes ({self.rows_above_t:,} rows) are farther than "
                         f"{self.t_allowed:g} from the table's {self.column} distribution")
        return lines


def reidentification(engine: Engine, table: Table, qi: Sequence[str],
                     threshold: float = RISK_THRESHOLD) -> Reidentification:
    """Prosecutor risk figures of `table` over `qi` (sql/data/reidentification_risk.sql)."""
    text, params = sql.render("data/reidentification_risk", engine.dialect, tbl=table.expr, qi=sql.columns(qi),
                              threshold=threshold)
    top, mean, above, uniques = engine.fetch_all(text, params)[0]
    return Reidentification(threshold, float(top), float(mean), int(above), int(uniques))


def diversity(engine: Engine, table: Table, qi: Sequence[str], sensitive: str, *, l_required: int | None = None,
              t_allowed: float | None = None) -> Diversity:
    """l-diversity and t-closeness of `sensitive` within the classes over `qi`
    (sql/data/attribute_disclosure.sql); numbers and dates use the ordered distance."""
    ordered = table.column(sensitive).kind in ORDERED_KINDS
    text, params = sql.render("data/attribute_disclosure", engine.dialect, tbl=table.expr, qi=sql.columns(qi),
                              s=sql.column(sensitive), ordered=ordered, l=l_required or 0,
                              t=1.0 if t_allowed is None else t_allowed)
    dl, el, t, cl, rl, ct, rt = engine.fetch_all(text, params)[0]
    return Diversity(sensitive, int(dl), float(el), max(0.0, float(t)), "ordered" if ordered else "equal",
                     l_required, t_allowed, int(cl), int(rl), int(ct), int(rt))


def parse_limits(spec: Mapping[str, float] | str | None, what: str, *, whole: bool) -> dict[str, float]:
    """'diagnosis=3,zip=2' (or a mapping) -> {column: limit}: whole numbers >= 1 for l,
    numbers in [0, 1] for t.

    >>> parse_limits("diagnosis=3", "l-diversity", whole=True)
    {'diagnosis': 3}
    """
    limits: dict[str, float] = {}
    example = "diagnosis=2 (every class holds at least 2 distinct diagnoses)" if whole else \
        "diagnosis=0.3 (each class's diagnoses within distance 0.3 of the whole table's)"
    for column, raw in column_pairs(spec, what, example):
        try:
            value = int(raw) if whole else float(raw)
        except ValueError:
            value = -1
        if not column or column in limits or not (value >= 1 if whole else 0 <= value <= 1):
            bound = "a whole number >= 1" if whole else "a number from 0 to 1"
            raise AnonsqlError(f"bad {what} {column or '?'}={raw}: give COLUMN=VALUE once per column, VALUE {bound}")
        limits[column] = value
    return limits
