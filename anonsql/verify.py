"""Independent SQL checks shared by every method, run on the published table itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import sql
from .catalog import Table
from .engine import Engine
from .report import Report
from .sql import exp  # sqlglot.expressions, imported on first use


@dataclass(kw_only=True)
class KAnonymityReport(Report):
    """Is every QI combination (NULL = ⊥ counting as its own value) shared by >= k rows?"""

    qi: list[str]
    k: int
    violating_groups: int
    violating_rows: int
    shown_groups: list[dict[str, Any]] = field(default_factory=list)
    risk: Any = None  # anonsql.data.risk.Reidentification, when measured
    sensitive: list[Any] = field(default_factory=list)  # anonsql.data.risk.Diversity per sensitive column

    def lines(self) -> list[str]:
        over = ", ".join(self.qi)
        if self.violating_groups == 0:
            lines = [f"{self.table} is {self.k}-anonymous over {over}"]
        else:
            lines = [f"{self.table} is NOT {self.k}-anonymous over {over}: {self.violating_groups:,} groups "
                     f"holding {self.violating_rows:,} rows have fewer than {self.k} rows"]
        if self.shown_groups:
            lines.append(f"smallest {len(self.shown_groups)} group(s):")
            lines += ["  " + ", ".join(f"{k}={'NULL' if v is None else v}" for k, v in g.items())
                      for g in self.shown_groups]
        lines += self.risk.lines() if self.risk is not None else []
        return lines + [line for d in self.sensitive for line in d.lines()]


def shown_columns(table: Table, qi: Sequence[str]) -> list[exp.Expr]:
    """The QI columns as the smallest groups show them: typed values, except a time-zone-aware
    timestamp, shown as the database prints it (DuckDB's driver needs pytz to convert one)."""
    types = {c.name: c.data_type.upper() for c in table.columns}
    return [exp.cast(sql.column(q, "t"), "VARCHAR") if "TIME ZONE" in types.get(q, "") or types.get(q) == "TIMESTAMPTZ"
            else sql.column(q, "t") for q in qi]


def k_anonymity(engine: Engine, table: Table, qi: Sequence[str], k: int, *, show: int = 20) -> KAnonymityReport:
    """Count the equivalence classes smaller than k and list the `show` smallest of them."""
    binds = dict(tbl=table.expr, qi=sql.columns(qi), k=k)
    text, params = sql.render("common/violations_summary", engine.dialect, **binds)
    groups, rows = engine.fetch_all(text, params)[0]
    shown: list[dict[str, Any]] = []
    if groups and show > 0:
        text, params = sql.render("common/violating_groups", engine.dialect, max_groups=show,
                                  shown=shown_columns(table, qi), **binds)
        shown = [dict(zip([*qi, "size"], r)) for r in engine.fetch_all(text, params)]
    report = KAnonymityReport(table=str(table), qi=list(qi), k=k, violating_groups=int(groups),
                              violating_rows=int(rows or 0), shown_groups=shown)
    report.check("k-anonymity", groups == 0, "common/violations_summary",
                 f"{int(groups)} groups, {int(rows or 0)} rows below k = {k}" if groups else "")
    return report
