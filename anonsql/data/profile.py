"""What a steward looks at before anonymizing: per-column facts, the current k, class balance."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from . import sql
from .catalog import Table
from .engine import Engine
from .stats import class_counts

SMALL_CLASS_THRESHOLDS = (2, 5, 10, 20, 50, 100)


@dataclass
class ColumnProfile:
    name: str
    type: str  # portable kind: text, integer, float, ...
    distinct: int  # distinct non-NULL values
    nulls: int


@dataclass
class Profile:
    table: str
    rows: int
    columns: list[ColumnProfile]
    qi: list[str] = field(default_factory=list)
    k: int | None = None  # the smallest equivalence class over the QIs
    equivalence_classes: int | None = None
    rows_in_classes_smaller_than: dict[int, int] = field(default_factory=dict)
    class_column: str | None = None
    class_distribution: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def profile_table(engine: Engine, table: Table, rows: int, qi: Sequence[str] = (), class_col: str | None = None) -> Profile:
    """Profile `table` (already validated, `rows` > 0) in three scans at most."""
    names = table.column_names
    text, params = sql.render("column_profile", engine.dialect, tbl=table.expr, col=sql.columns(names))
    stats = engine.fetch_all(text, params)[0]
    m = len(names)
    columns = [
        ColumnProfile(name, table.columns[j].kind, int(stats[1 + j]), int(stats[1 + m + j]))
        for j, name in enumerate(names)
    ]
    result = Profile(str(table), rows, columns)
    if qi:
        text, params = sql.render("class_size_histogram", engine.dialect, tbl=table.expr, qi=sql.columns(qi))
        histogram = [(int(size), int(n)) for size, n in engine.fetch_all(text, params)]
        result.qi = list(qi)
        result.k = min(size for size, _ in histogram)
        result.equivalence_classes = sum(n for _, n in histogram)
        result.rows_in_classes_smaller_than = {
            t: sum(size * n for size, n in histogram if size < t) for t in SMALL_CLASS_THRESHOLDS
        }
    if class_col:
        counts = class_counts(engine, table, class_col)
        result.class_column = class_col
        result.class_distribution = {str(v): int(n) for v, n in zip(counts.values, counts.counts)}
    return result
