"""`anonsql hierarchy show`: what each level of a column's hierarchy publishes on a table,
counted by SQL (distinct labels, rows covered, the first and last label). Read-only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import sql
from ..catalog import get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from .expressions import level_expr, resolve
from .model import Hierarchy, parse_all


@dataclass(kw_only=True)
class HierarchyReport(Report):
    """The levels of each hierarchy on a table: per column, per level, its meaning and SQL counts."""

    PROVES = False
    PRIVATE = ("levels",)  # the first and last labels are values of the table
    levels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        lines = [f"{self.table}: {len(self.levels)} hierarch{'y' if len(self.levels) == 1 else 'ies'}"]
        for column, levels in self.levels.items():
            lines.append(f"  {column}:")
            for lv in levels:
                span = f", {lv['first']} .. {lv['last']}" if lv["labels"] else ""
                lines.append(f"    level {lv['level']}: {lv['meaning']}: {lv['labels']:,} distinct value"
                             f"{'s' if lv['labels'] != 1 else ''} over {lv['covered']:,} rows{span}")
        return lines


def show_hierarchies(engine: Engine, table: str, specs: Sequence[str] | str | Mapping[str, str]) -> HierarchyReport:
    """Each level of each hierarchy `specs` ('COLUMN=KIND:ARGS') on `table`: one SQL count per level."""
    found = parse_all(specs)
    if not found:
        raise AnonsqlError("nothing to show: give at least one --hierarchy COLUMN=KIND:ARGS")
    tab = get_table(engine, table)
    report = HierarchyReport(table=str(tab))
    for h in resolve(engine, tab, found):
        report.levels[h.column] = [_level(engine, tab.expr, h, level) for level in range(h.top + 1)]
    return report


def _level(engine: Engine, tbl: Any, h: Hierarchy, level: int) -> dict[str, Any]:
    labels, covered, first, last = engine.fetch_all(*sql.render(
        "hierarchy/level_labels", engine.dialect, tbl=tbl, label=level_expr(h, level)))[0]
    return {"level": level, "meaning": h.meaning(level), "labels": int(labels), "covered": int(covered),
            "first": None if first is None else str(first), "last": None if last is None else str(last)}
