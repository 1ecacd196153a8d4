"""The SQL of a hierarchy: the label expression of each level on a column (built with sqlglot
from the fragments of sql/hierarchy/, generated per engine by the SQL layer), and the checks a
table must pass before any level is used (the column's type, no value outside the hierarchy).
Labels are text from level 1 on; level 0 is the column itself (its own type) and the top
level ⊥ is NULL."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..taxonomy.stats import read_taxonomy
from .model import COLUMN_KINDS, Hierarchy, taxonomy_name


def level_expr(h: Hierarchy, level: int) -> exp.Expr:
    """The label of column `h.column` at `level` (0: the value itself, h.top: ⊥ = NULL)."""
    col = sql.column(h.column)
    if level == 0:
        return col
    if level == h.top:
        return sql.fragment("hierarchy/suppressed")
    step = h.steps[level - 1]
    if h.kind == "interval":
        return sql.fragment("data/bin_width_label", col=col, width=exp.convert(step))
    if h.kind == "prefix":
        return sql.fragment("hierarchy/prefix_label", col=col, keep=exp.convert(step))
    if h.kind == "date":
        if step == "week":  # bin's calendar week (data/bin_calendar_label.sql): 7 days from Monday
            return sql.fragment("data/bin_calendar_label", col=col, unit=exp.convert("week"),
                                step=exp.Interval(this=exp.convert("7"), unit=exp.var("DAY")))
        return sql.fragment(f"hierarchy/{step}_label", col=col)
    return _taxonomy_case(h, level)


#: The hierarchy kinds that can publish lower/upper bound columns beside their labels (--hierarchy-bounds).
BOUNDED_KINDS = ("interval", "date")
#: A calendar period's length, added to its first instant for the open upper bound.
_PERIOD_LENGTH = {"day": (1, "DAY"), "week": (7, "DAY"), "month": (1, "MONTH"), "quarter": (3, "MONTH"),
                  "year": (1, "YEAR")}


def bound_exprs(h: Hierarchy, level: int, data_type: str, dialect: str) -> tuple[exp.Expr, exp.Expr]:
    """The lower (closed) and upper (open) bound of column `h.column`'s label at `level`, typed as
    the column (`data_type`, as `dialect`'s catalog spells it): the range [lo, hi) of an interval
    (sql/hierarchy/interval_lower.sql) or a calendar period (period_lower.sql); the value itself
    twice at level 0, NULL at ⊥. Only for the BOUNDED_KINDS."""
    assert h.kind in BOUNDED_KINDS
    typ = exp.DataType.build(data_type, dialect=dialect)
    col = sql.column(h.column)
    if level == 0:
        return exp.cast(col, typ), exp.cast(col.copy(), typ)
    if level == h.top:
        return exp.cast(exp.null(), typ), exp.cast(exp.null(), typ)
    step = h.steps[level - 1]
    if h.kind == "interval":
        lo = sql.fragment("hierarchy/interval_lower", col=col, width=exp.convert(step))
        return exp.cast(lo, typ), exp.cast(exp.Add(this=lo.copy(), expression=exp.convert(step)), typ)
    lo = sql.fragment("hierarchy/period_lower", col=col, unit=exp.convert(step))
    n, unit = _PERIOD_LENGTH[step]
    hi = exp.Add(this=lo.copy(), expression=exp.Interval(this=exp.convert(str(n)), unit=exp.var(unit)))
    return exp.cast(lo, typ), exp.cast(hi, typ)


def _taxonomy_case(h: Hierarchy, level: int) -> exp.Expr:
    """CASE CAST(x AS VARCHAR) WHEN node THEN its label at `level` ... END over every node of
    the stored taxonomy, its labels inlined as literals."""
    assert h.taxonomy is not None
    case = exp.Case(this=exp.cast(sql.column(h.column), "VARCHAR"))
    for node in h.taxonomy.labels:
        case = case.when(exp.convert(node), exp.convert(h.label(node, level)))
    return case


def resolve(engine: Engine, table: Table, hierarchies: Sequence[Hierarchy]) -> list[Hierarchy]:
    """The hierarchies on `table`: columns named as the catalog spells them, taxonomies read from
    the store, each column's type fit for its kind, and no value outside its hierarchy (NaN or
    ±inf under intervals, a value no taxonomy node names): one error line otherwise."""
    resolved = []
    for h in hierarchies:
        column = table.column(h.column)
        h = h.with_column(column.name)
        allowed = COLUMN_KINDS[h.kind]
        if allowed is not None and column.kind not in allowed:
            raise AnonsqlError(f"hierarchy {h.column}={h.spec}: column '{h.column}' is {column.kind}; a {h.kind} "
                               f"hierarchy needs a {' or '.join(allowed)} column")
        if h.kind == "taxonomy":
            h = h.with_taxonomy(read_taxonomy(engine, taxonomy_name(h)))
        if h.kind == "date" and column.kind == "timestamp" and h.steps[0] != "day":
            h = h.with_steps(("day", *h.steps))  # a timestamp drops its time of day first
        outside = _outside(h, column.kind)
        if outside is not None:
            n, example = engine.fetch_all(*sql.render("hierarchy/outside", engine.dialect, tbl=table.expr,
                                                      col=sql.column(h.column), outside=outside))[0]
            if n:
                raise AnonsqlError(f"hierarchy {h.column}={h.spec}: {n:,} row(s) of column '{h.column}' hold a "
                                   f"value outside the hierarchy, e.g. {example!r}")
        resolved.append(h)
    return resolved


def _outside(h: Hierarchy, kind: str) -> exp.Expr | None:
    """The test of a value outside `h` (None: every value of the column's type fits)."""
    col = sql.column(h.column)
    if h.kind == "interval" and kind in ("float", "decimal"):
        return exp.paren(exp.or_(*(exp.EQ(this=col.copy(), expression=exp.cast(exp.convert(v), "DOUBLE"))
                                   for v in ("NaN", "Infinity", "-Infinity"))))
    if h.kind == "taxonomy":
        assert h.taxonomy is not None
        return exp.Not(this=exp.In(this=exp.cast(col, "VARCHAR"),
                                   expressions=[exp.convert(v) for v in h.taxonomy.labels]))
    return None
