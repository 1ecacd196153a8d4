"""Bin numeric columns into labelled ranges in SQL, so they can serve as quasi-identifiers.

Cell suppression on a near-unique column (an exact age, an income) blanks almost all of it;
binning first keeps most of the information. `width` gives '[lo,hi)' ranges of a whole-number
width; `quantiles` gives ranges holding about equal numbers of rows, cut at actual values.
The result is a new table with every other column copied unchanged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from sqlglot import exp

from . import sql
from .catalog import Table, output_table
from .engine import Engine
from .errors import AnonsqlError
from .loading import drop_table


@dataclass(frozen=True)
class BinSpec:
    """`column=width:5` or `column=quantiles:10`, as typed on the command line."""

    column: str
    method: str
    amount: int

    @classmethod
    def parse(cls, text: str) -> "BinSpec":
        column, _, rule = text.rpartition("=")
        method, _, amount = rule.partition(":")
        if not column or method not in ("width", "quantiles") or not amount.isdigit() or int(amount) < 1:
            raise AnonsqlError(f"bad bin spec {text!r}: use COLUMN=width:W or COLUMN=quantiles:Q (whole numbers >= 1)")
        return cls(column, method, int(amount))


@dataclass
class BinResult:
    table: str
    out: str
    bins: dict[str, list[str]]  # column -> the labels it now takes (sorted by range)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bin_columns(engine: Engine, source: Table, specs: Sequence[BinSpec], out: str, *, replace: bool) -> BinResult:
    """CREATE TABLE out AS SELECT ... with each binned column replaced by its range label."""
    by_column = {source.column(s.column).name: s for s in specs}
    for name in by_column:
        if source.column(name).kind not in ("integer", "float", "decimal"):
            raise AnonsqlError(f"column '{name}' is {source.column(name).kind}, binning needs a numeric column")
    target, existing = output_table(engine, source, out, out, replace)
    items = []
    for name in source.column_names:
        spec = by_column.get(name)
        if spec is None:
            items.append(sql.column(name))
        elif spec.method == "width":
            items.append(exp.alias_(sql.fragment("bin_width_label", col=sql.column(name), width=exp.convert(spec.amount)),
                                    sql.ident(name)))
        else:
            items.append(exp.alias_(_quantile_case(engine, source, name, spec.amount), sql.ident(name)))
    with engine.transaction():
        if existing is not None:
            drop_table(engine, existing.expr)
        engine.execute(*sql.render("create_table_as", engine.dialect, out=target.expr, src=source.expr, item=items))
        labels = {}
        for name in by_column:
            text, params = sql.render("distinct_values", engine.dialect, tbl=target.expr, col=sql.column(name))
            labels[name] = [r[0] for r in engine.fetch_all(text, params)]
    return BinResult(str(source), str(target), labels)


def _quantile_case(engine: Engine, source: Table, name: str, quantiles: int) -> exp.Expression:
    """CASE x < c_2 THEN '[c_1,c_2)' ... ELSE '[c_m,max]' over the distinct tile minima c_i."""
    text, params = sql.render("bin_cut_points", engine.dialect, tbl=source.expr, col=sql.column(name),
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
