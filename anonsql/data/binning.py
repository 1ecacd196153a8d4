"""Bin numeric columns into labelled ranges in SQL, so they can serve as quasi-identifiers.

Cell suppression on a near-unique column (an exact age, an income) blanks almost all of it;
binning first keeps most of the information. `width` gives '[lo,hi)' ranges of a whole-number
width (days for a date column); `quantiles` gives ranges holding about equal numbers of rows,
cut at actual values; `week`, `month`, `quarter`, `year` give a date's or a timestamp's calendar
period, '[first day,next first day)'. NULL stays NULL; NaN, inf and -inf are labels of their own. The result
is a new table with every other column copied unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from .. import sql, validate
from ..catalog import Table, get_table, output_table, staged_output
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Report, save
from ..rewrite import Script
from .loading import count_rows

#: Calendar periods a date or timestamp is binned by: DATE_TRUNC's unit -> the period's length.
CALENDAR = {"week": (7, "DAY"), "month": (1, "MONTH"), "quarter": (3, "MONTH"), "year": (1, "YEAR")}


@dataclass(frozen=True)
class BinSpec:
    """`column=width:5`, `column=quantiles:10` or `column=month` (a calendar period), as typed."""

    column: str
    method: str
    amount: int = 1

    @classmethod
    def parse(cls, text: str) -> BinSpec:
        column, _, rule = text.rpartition("=")
        method, _, amount = rule.partition(":")
        if column and method in CALENDAR and not amount:
            return cls(column, method)
        if not column or method not in ("width", "quantiles") or not amount.isdigit() or int(amount) < 1:
            raise AnonsqlError(f"bad bin spec {text!r}: use COLUMN=width:W or COLUMN=quantiles:Q (whole numbers "
                               ">= 1), or COLUMN=week|month|quarter|year for a date or timestamp")
        return cls(column, method, int(amount))


@dataclass(kw_only=True)
class BinReport(Report):
    """A copy of a table with numeric columns replaced by range labels."""

    bins: dict[str, list[str]]  # column -> the labels it now takes (sorted by range)

    def lines(self) -> list[str]:
        return [f"{self.table} -> {self.out}"] + [
            f"  {col}: {len(labels)} bins: {', '.join(map(str, labels[:8]))}{' ...' if len(labels) > 8 else ''}"
            for col, labels in self.bins.items()]


_NUMERIC = ("integer", "float", "decimal")
_SPECIAL = {"-inf": -math.inf, "inf": math.inf, "NaN": math.nan}


def bin_table(engine: Engine, table: str, specs: Sequence[str | BinSpec], out: str, *, replace: bool,
              emit_sql: str | None = None, execute: bool = True) -> BinReport:
    """The job's one entry on an open engine (behind `anonsql.bin_columns` and a release's bin
    step): the specs parsed ('COLUMN=width:W', 'COLUMN=quantiles:Q'), the table found, then `bin_columns`."""
    parsed = [s if isinstance(s, BinSpec) else BinSpec.parse(s) for s in specs]
    if not parsed:
        raise AnonsqlError("nothing to bin: give at least one COLUMN=width:W or COLUMN=quantiles:Q")
    source = get_table(engine, table)
    engine.expect_rows(validate.rows(engine, source))
    return bin_columns(engine, source, parsed, out, replace=replace, emit_sql=emit_sql, execute=execute)


def bin_columns(engine: Engine, source: Table, specs: Sequence[BinSpec], out: str, *, replace: bool,
                emit_sql: str | None = None, execute: bool = True) -> BinReport:
    """CREATE TABLE out AS SELECT ... with each binned column replaced by its range label;
    `emit_sql` also writes the run as a reviewable script, `execute=False` (a dry run) only that."""
    by_column: dict[str, BinSpec] = {}
    for given in specs:
        name = source.column(given.column).name
        if name in by_column:
            raise AnonsqlError(f"column '{name}' has two --bin specs; give one per column")
        by_column[name] = given
    for name, given in by_column.items():
        kind = source.column(name).kind
        if given.method in CALENDAR and kind not in ("date", "timestamp"):
            raise AnonsqlError(f"column '{name}' is {kind}: a {given.method} bin needs a date or timestamp column")
        if given.method not in CALENDAR and kind not in (*_NUMERIC, "date"):
            raise AnonsqlError(f"column '{name}' is {kind}, binning needs a numeric or date column"
                               + (" (or a calendar period: week, month, quarter, year)" if kind == "timestamp"
                                  else ""))
    target, existing = output_table(engine, source, out, out, replace)
    items: list[Any] = []  # columns and aliased labels (sqlglot types them differently)
    for name in source.column_names:
        spec = by_column.get(name)
        if spec is None:
            items.append(sql.column(name))
        elif spec.method in CALENDAR:
            length, unit = CALENDAR[spec.method]
            label = sql.fragment("data/bin_calendar_label", col=sql.column(name), unit=exp.convert(spec.method),
                                 step=exp.Interval(this=exp.convert(str(length)), unit=exp.var(unit)))
            items.append(exp.alias_(label, sql.ident(name)))
        elif spec.method == "width":
            fragment = "data/bin_date_label" if source.column(name).kind == "date" else "data/bin_width_label"
            label = sql.fragment(fragment, col=sql.column(name), width=exp.convert(spec.amount))
            items.append(exp.alias_(label, sql.ident(name)))
        else:
            items.append(exp.alias_(_quantile_case(engine, source, name, spec.amount), sql.ident(name)))
    script = None
    if emit_sql:
        script = _script(engine.dialect, source, target, items, existing is not None, count_rows(engine, source.expr))
        save(emit_sql, script)
    if not execute:
        report = BinReport(table=str(source), out=str(target), bins={}, script=script)
        report.notes.append(f"dry run: the script is {'standard output' if emit_sql == '-' else emit_sql}; "
                            "nothing in the database changed")
        return report
    # Without transactions (Spark) the table is written and checked under a staging name first.
    with engine.transaction(), staged_output(engine, target, existing) as staged:
        engine.execute(*sql.render("common/create_table_as", engine.dialect, out=staged.expr, src=source.expr,
                                   item=items))
        labels = {}
        for name in by_column:
            text, params = sql.render("data/distinct_values", engine.dialect, tbl=staged.expr, col=sql.column(name))
            labels[name] = sorted((r[0] for r in engine.fetch_all(text, params)), key=_range_order)
        report = BinReport(table=str(source), out=str(target), bins=labels, script=script)
        before, after = count_rows(engine, source.expr), count_rows(engine, staged.expr)
        report.check("same rows as the source", before == after, "common/row_count", f"{after:,} of {before:,}")
        if not report.ok:
            raise VerificationError(report.checks)
    return report


def _script(dialect: str, source: Table, target: sql.TableName, items: Sequence[Any], replaced: bool,
            rows: int) -> str:
    """The run as a reviewable script: (the old output dropped,) the binned copy, the row-count check."""
    script = Script(dialect, f"anonsql bin: {source} -> {target} (cut points and labels are the columns' own values)")
    if replaced:
        script.step(f"--replace: the old {target} goes", sql.readable("common/drop_table", dialect, tbl=target.expr))
    script.step("the copy, each binned column replaced by its range label",
                sql.readable("common/create_table_as", dialect, out=target.expr, src=source.expr,
                             item=[i.copy() for i in items]))
    script.check(f"same rows as the source: n must be {rows}", sql.readable("common/row_count", dialect,
                                                                           tbl=target.expr))
    return script.text()


def _range_order(label: str | None) -> tuple[int, float, str]:
    """Labels in the order of their ranges: '-inf', '[2,4)', '[10,20)', ..., 'inf', 'NaN', NULL.

    >>> sorted(["[10,20)", "NaN", "[2,10)", "-inf"], key=_range_order)
    ['-inf', '[2,10)', '[10,20)', 'NaN']
    """
    if label is None:
        return (3, 0.0, "")
    if label in _SPECIAL:
        return (2, 0.0, label) if label == "NaN" else (1, _SPECIAL[label], label)
    low = label[1:].split(",")[0]
    try:
        return (1, float(low), label)
    except ValueError:
        return (1, 0.0, label)  # a date range: ISO text sorts by time


def _special(column: exp.Expression, kind: str) -> exp.Expression:
    """`column` is NaN, inf or -inf (always false for integers and dates)."""
    if kind not in ("float", "decimal"):
        return exp.false()
    return exp.paren(exp.or_(*(exp.EQ(this=column.copy(), expression=exp.cast(exp.convert(v), "DOUBLE"))
                     for v in ("NaN", "Infinity", "-Infinity"))))


def _quantile_case(engine: Engine, source: Table, name: str, quantiles: int) -> exp.Expression:
    """CASE x < c_2 THEN '[c_1,c_2)' ... ELSE '[c_m,max]' over the distinct tile minima c_i;
    NaN and ±inf keep labels of their own."""
    col, kind = sql.column(name), source.column(name).kind
    text, params = sql.render("data/bin_cut_points", engine.dialect, tbl=source.expr, col=col,
                              quantiles=quantiles, special=_special(col, kind))
    rows = engine.fetch_all(text, params)
    if not rows:
        raise AnonsqlError(f"column '{name}' has no finite values: nothing to bin")
    cuts = sorted({r[1] for r in rows})
    top = max(r[2] for r in rows)
    case = exp.Case().when(exp.Is(this=col, expression=exp.Null()), exp.Null())
    if kind in ("float", "decimal"):
        for label in ("NaN", "Infinity", "-Infinity"):
            case = case.when(exp.EQ(this=col.copy(), expression=exp.cast(exp.convert(label), "DOUBLE")),
                             exp.convert({"Infinity": "inf", "-Infinity": "-inf"}.get(label, label)))
    for lo, hi in zip(cuts, cuts[1:]):  # cut points are the column's own values, inlined as literals
        bound = exp.cast(exp.convert(str(hi)), "DATE") if kind == "date" else exp.convert(hi)
        case = case.when(exp.LT(this=col.copy(), expression=bound), exp.convert(f"[{lo},{hi})"))
    return case.else_(exp.convert(f"[{cuts[-1]},{top}]"))
