"""Bin numeric columns into labelled ranges in SQL, so they can serve as quasi-identifiers.

Cell suppression on a near-unique column (an exact age, an income) blanks almost all of it;
binning first keeps most of the information. `width` gives '[lo,hi)' ranges of a whole-number
width; `quantiles` gives ranges holding about equal numbers of rows, cut at actual values.
The result is a new table with every other column copied unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from .. import sql
from ..catalog import Table, drop_table, output_table
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Report
from .loading import count_rows


@dataclass(frozen=True)
class BinSpec:
    """`column=width:5` or `column=quantiles:10`, as typed on the command line."""

    column: str
    method: str
    amount: int

    @classmethod
    def parse(cls, text: str) -> BinSpec:
        column, _, rule = text.rpartition("=")
        method, _, amount = rule.partition(":")
        if not column or method not in ("width", "quantiles") or not amount.isdigit() or int(amount) < 1:
            raise AnonsqlError(f"bad bin spec {text!r}: use COLUMN=width:W or COLUMN=quantiles:Q (whole numbers >= 1)")
        return cls(column, method, int(amount))


@dataclass(kw_only=True)
class BinReport(Report):
    """A copy of a table with numeric columns replaced by range labels."""

    bins: dict[str, list[str]]  # column -> the labels it now takes (sorted by range)

    def lines(self) -> list[str]:
        return [f"{self.table} -> {self.out}"] + [
            f"  {col}: {len(labels)} bins: {', '.join(map(str, labels[:8]))}{' ...' if len(labels) > 8 else ''}"
            for col, labels in self.bins.items()]


def bin_columns(engine: Engine, source: Table, specs: Sequence[BinSpec], out: str, *, replace: bool) -> BinReport:
    """CREATE TABLE out AS SELECT ... with each binned column replaced by its range label."""
    by_column = {source.column(s.column).name: s for s in specs}
    for name in by_column:
        if source.column(name).kind not in ("integer", "float", "decimal"):
            raise AnonsqlError(f"column '{name}' is {source.column(name).kind}, binning needs a numeric column")
    target, existing = output_table(engine, source, out, out, replace)
    items: list[Any] = []  # columns and aliased labels (sqlglot types them differently)
    for name in source.column_names:
        spec = by_column.get(name)
        if spec is None:
            items.append(sql.column(name))
        elif spec.method == "width":
            label = sql.fragment("data/bin_width_label", col=sql.column(name), width=exp.convert(spec.amount))
            items.append(exp.alias_(label, sql.ident(name)))
        else:
            items.append(exp.alias_(_quantile_case(engine, source, name, spec.amount), sql.ident(name)))
    with engine.transaction():
        if existing is not None:
            drop_table(engine, existing.expr)
        engine.execute(*sql.render("common/create_table_as", engine.dialect, out=target.expr, src=source.expr,
                                   item=items))
        labels = {}
        for name in by_column:
            text, params = sql.render("data/distinct_values", engine.dialect, tbl=target.expr, col=sql.column(name))
            labels[name] = [r[0] for r in engine.fetch_all(text, params)]
        report = BinReport(table=str(source), out=str(target), bins=labels)
        before, after = count_rows(engine, source.expr), count_rows(engine, target.expr)
        report.check("same rows as the source", before == after, "common/row_count", f"{after:,} of {before:,}")
        if not report.ok:
            raise VerificationError(report.checks)
    return report


def _quantile_case(engine: Engine, source: Table, name: str, quantiles: int) -> exp.Expression:
    """CASE x < c_2 THEN '[c_1,c_2)' ... ELSE '[c_m,max]' over the distinct tile minima c_i."""
    text, params = sql.render("data/bin_cut_points", engine.dialect, tbl=source.expr, col=sql.column(name),
                              quantiles=quantiles)
    rows = engine.fetch_all(text, params)
    if not rows:
        raise AnonsqlError(f"column '{name}' has only NULLs: nothing to bin")
    cuts = sorted({r[1] for r in rows})
    top = max(r[2] for r in rows)
    case = exp.Case().when(exp.Is(this=sql.column(name), expression=exp.Null()), exp.Null())
    for lo, hi in zip(cuts, cuts[1:]):  # cut points are the column's own values, inlined as literals
        case = case.when(exp.LT(this=sql.column(name), expression=exp.convert(hi)), exp.convert(f"[{lo},{hi})"))
    return case.else_(exp.convert(f"[{cuts[-1]},{top}]"))
