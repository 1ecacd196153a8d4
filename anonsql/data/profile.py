"""What a steward looks at before anonymizing: per-column facts, the current k, class balance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from ..stats import class_counts
from .risk import Diversity, Reidentification, diversity, reidentification

SMALL_CLASS_THRESHOLDS = (2, 5, 10, 20, 50, 100)


@dataclass
class ColumnProfile:
    name: str
    type: str  # portable kind: text, integer, float, ...
    distinct: int  # distinct non-NULL values
    nulls: int


@dataclass(kw_only=True)
class ProfileReport(Report):
    """What a steward looks at first; it promises nothing, so it proves nothing."""

    PROVES: ClassVar[bool] = False

    rows: int
    columns: list[ColumnProfile]
    qi: list[str] = field(default_factory=list)
    k: int | None = None  # the smallest equivalence class over the QIs
    equivalence_classes: int | None = None
    rows_in_classes_smaller_than: dict[int, int] = field(default_factory=dict)
    class_column: str | None = None
    class_distribution: dict[str, int] = field(default_factory=dict)
    risk: Reidentification | None = None  # with qi
    sensitive: list[Diversity] = field(default_factory=list)  # with qi and sensitive columns

    def lines(self) -> list[str]:
        lines = [f"table {self.table}: {self.rows:,} rows, {len(self.columns)} columns", ""]
        width = max(len(c.name) for c in self.columns)
        lines.append(f"  {'column':<{width}}  {'type':<9} {'distinct':>9} {'nulls':>9}")
        lines += [f"  {c.name:<{width}}  {c.type:<9} {c.distinct:>9,} {c.nulls:>9,}" for c in self.columns]
        if self.qi:
            lines += ["", f"quasi-identifiers: {', '.join(self.qi)}",
                      f"  current k (the smallest equivalence class): {self.k}",
                      f"  equivalence classes: {self.equivalence_classes:,}"]
            lines += [f"  rows in classes smaller than {t}: {n:,} ({n / self.rows:.1%})"
                      for t, n in self.rows_in_classes_smaller_than.items()]
            lines += self.risk.lines() if self.risk else []
            lines += [line for d in self.sensitive for line in d.lines()]
        if self.class_column:
            lines += ["", f"class {self.class_column}:"]
            lines += [f"  {v}: {n:,} ({n / self.rows:.1%})" for v, n in self.class_distribution.items()]
        return lines


def profile_table(engine: Engine, table: Table, rows: int, qi: Sequence[str] = (),
                  class_column: str | None = None, sensitive: Sequence[str] = (),
                  risk_threshold: float | None = None) -> ProfileReport:
    """Profile `table` (already validated, `rows` its row count): column facts, then with `qi` the
    class sizes and re-identification risk, with `sensitive` columns their l-diversity and
    t-closeness. An empty table gets its columns and a note, no figure over rows."""
    names = table.column_names
    if not rows:
        result = ProfileReport(table=str(table), rows=0, columns=[
            ColumnProfile(name, column.kind, 0, 0) for name, column in zip(names, table.columns)])
        result.notes.append(f"table {table} is empty: no class, risk or class balance to measure")
        return result
    text, params = sql.render("common/column_profile", engine.dialect, tbl=table.expr, col=sql.columns(names))
    stats = engine.fetch_all(text, params)[0]
    m = len(names)
    columns = [
        ColumnProfile(name, table.columns[j].kind, int(stats[1 + j]), int(stats[1 + m + j]))
        for j, name in enumerate(names)
    ]
    result = ProfileReport(table=str(table), rows=rows, columns=columns)
    if qi:
        text, params = sql.render("data/class_size_histogram", engine.dialect, tbl=table.expr, qi=sql.columns(qi))
        histogram = [(int(size), int(n)) for size, n in engine.fetch_all(text, params)]
        result.qi = list(qi)
        result.k = min(size for size, _ in histogram)
        result.equivalence_classes = sum(n for _, n in histogram)
        result.rows_in_classes_smaller_than = {
            t: sum(size * n for size, n in histogram if size < t) for t in SMALL_CLASS_THRESHOLDS
        }
        result.risk = reidentification(engine, table, qi, *([] if risk_threshold is None else [risk_threshold]))
        result.sensitive = [diversity(engine, table, qi, s) for s in sensitive]
    if class_column:
        counts = class_counts(engine, table, class_column)
        result.class_column = class_column
        result.class_distribution = {str(v): int(n) for v, n in zip(counts.values, counts.counts)}
    return result
