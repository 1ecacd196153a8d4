"""Did a suppression run keep its promise? Independent SQL recounts on the output table.

The output must be k-anonymous, keep the source's row count and class counts N(c), and differ
from the source only by cells turned NULL: for every attribute j, value x and class c,
N_out(x, c) <= N_src(x, c) (on the N(x_j, c) tables counted before the run). All of it is read
from ONE recount of the written table, its N(y, c) grouped by SQL (anonsql.kanon.stats.output_counts)
and coded with the source's dictionaries: the k-anonymity check groups that relation again by y
in SQL, the rows and N(c) are its sums (each another pass over the rows before: 0.5 s of a
10^6-row run on PostgreSQL). With a copy, the non-QI columns are also compared with the source
as multisets (one GROUP BY over both tables; where the class is the only one, its multiset is
N(c), compared already; where there is none, nothing is compared and a note says so). None of
this reuses the algorithm's code; each check is recorded on the report with the query file it reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..data.risk import diversity as measured
from ..engine import Engine
from ..report import Report
from ..stats import QIClassCounts
from .diversity import TOLERANCE, Model
from .stats import OutputCounts, Statistics, class_totals

#: The note of a table whose columns are all quasi-identifiers (or dropped/pseudonymized).
NOTHING_OUTSIDE = "non-QI columns unchanged: not checked, the table has no column besides the quasi-identifiers"


def suppression(engine: Engine, report: Report, out: Table, qi: Sequence[str], class_column: str | None, k: int, *,
                before: Statistics, out_attrs: OutputCounts, source: Table | None, decided_cells: int,
                changed: Sequence[str] = ()) -> int:
    """Record every check on `report`; returns the newly NULL cells Σ_j,c N_out(⊥_j, c) - N_src(⊥_j, c).
    Without a class column (C = 1) the class counts are the row count, checked already; the
    `changed` columns (dropped, pseudonymized) are left out of the comparison with the source.
    Drops the grouped relation `out_attrs` left behind."""
    coded, d = out_attrs.groups, engine.dialect
    try:
        text, params = sql.render("kanon/violations_of_groups", d, groups=coded.grouped,
                                  y=sql.columns([f"y_{j}" for j in range(len(qi))]), k=k)
        groups, below = engine.fetch_all(text, params)[0]
    finally:
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=coded.grouped))
    report.check("k-anonymity", groups == 0, "kanon/violations_of_groups",
                 "" if groups == 0 else f"{int(groups)} groups, {int(below)} rows below k = {k}")

    rows, source_rows = int(coded.counts.sum()), before.classes.total
    report.check("same rows", rows == source_rows, "common/qi_class_counts",
                 "" if rows == source_rows else f"{source_rows} -> {rows}")

    moved = 0
    if class_column is not None:
        moved = _rows_moved(coded, before.classes.counts)
        report.check("same class counts", moved == 0, "common/qi_class_counts", "" if moved == 0 else "N(c) changed")

    gained = []
    suppressed = 0
    src = before.attrs
    for j, name in enumerate(qi):
        counts_before = {(x, c): int(n) for x, row in zip(src.values[j], src.counts[j])
                         for c, n in zip(src.class_values, row)}
        gained += [f"{name}={x!r} in class {c!r}" for x, row in zip(out_attrs.values[j], out_attrs.counts[j])
                   for c, n in zip(out_attrs.class_values, row) if n > counts_before.get((x, c), 0)]
        suppressed += int(out_attrs.null_counts[j].sum()) - int(src.null_counts[j].sum())
    report.check("only NULLs added", not gained, "common/attr_class_counts",
                 "" if not gained else "values gained rows: " + ", ".join(gained[:3]))
    report.check("suppressed cells as decided", suppressed == decided_cells, "common/attr_class_counts",
                 "" if suppressed == decided_cells else f"SQL counts {suppressed}, the algorithm {decided_cells}")

    if source is not None:
        others = [c for c in source.column_names if c not in {*qi, *changed}]
        if not others:  # every column is a quasi-identifier (or changed): nothing to compare, said so
            report.notes.append(NOTHING_OUTSIDE)
            return suppressed
        if others == [class_column]:  # the class alone: its multiset is N(c), compared above (0.2 s at 10^6 rows)
            differ, query = moved, "common/qi_class_counts"
        else:
            query = "common/multiset_difference"
            text, params = sql.render(query, d, a=source.expr, b=out.expr, col=sql.columns(others),
                                      side=sql.unused_ident("side", others))
            differ = int(engine.fetch_all(text, params)[0][0])
        report.check("non-QI columns unchanged", differ == 0, query,
                     "" if differ == 0 else f"{differ} rows differ outside the quasi-identifiers")
    return suppressed


def _rows_moved(coded: QIClassCounts, before: np.ndarray) -> int:
    """Σ_c |N_out(c) - N_src(c)| over the class codes, plus the rows whose class the source lacks
    (code -2) or that have none (-1): the rows of either table without a twin in the other by
    class, as common/multiset_difference.sql counts them on the class column; 0 <=> the same N(c)."""
    return int(np.abs(class_totals(coded, len(before)) - before).sum() + coded.counts[coded.classes < 0].sum())


def diversity(engine: Engine, report: Report, out: Table, qi: Sequence[str], models: Sequence[Model]) -> None:
    """Record one check per model on `report`, recounted by SQL from the written table: distinct and
    entropy l-diversity and t-closeness by the query `check` and the release gates read
    (data/attribute_disclosure: NULL a value of its own, the ordered distance on numbers and dates),
    recursive (c, l)-diversity by kanon/recursive_diversity. The floating models hold within
    diversity.TOLERANCE, as in the loop."""
    d = engine.dialect
    for m in models:
        name = f"{m.option.lstrip('-')}"
        if m.kind == "recursive_cl":
            query, bindings = _model_query(out.expr, qi, m)
            classes, rows = engine.fetch_all(*sql.render(query, d, **bindings))[0]
            report.check(name, classes == 0, "kanon/recursive_diversity",
                         "" if classes == 0 else f"{int(classes)} classes ({int(rows)} rows) are not")
            continue
        got = measured(engine, out, qi, m.name, l_required=int(m.level) if m.kind == "l_diversity" else None,
                       t_allowed=m.level + TOLERANCE if m.kind == "t_closeness" else None)
        if m.kind == "l_diversity":
            ok, detail = got.classes_below_l == 0, f"{got.classes_below_l} classes ({got.rows_below_l} rows) below"
        elif m.kind == "entropy_l":
            ok = math.log(got.entropy_l) >= math.log(m.level) - TOLERANCE
            detail = f"entropy l-diversity {got.entropy_l:.6g}"
        else:
            ok, detail = got.classes_above_t == 0, f"{got.classes_above_t} classes ({got.rows_above_t} rows) above"
        report.check(name, ok, "data/attribute_disclosure", "" if ok else detail)


def diversity_script(dialect: str, out: exp.Table, qi: Sequence[str], m: Model) -> tuple[str, str]:
    """What a reviewer runs for model `m` after the script (`--emit-sql`): the query of `diversity`."""
    must = {"l_diversity": "classes_below_l = 0", "entropy_l": f"entropy_l >= {m.level:g} (within {TOLERANCE:g})",
            "t_closeness": "classes_above_t = 0", "recursive_cl": "classes = 0, rows = 0"}[m.kind]
    query, bindings = _model_query(out, qi, m)
    return f"{m.option.lstrip('-')}: must return {must}", sql.readable(query, dialect, **bindings)


def _model_query(out: exp.Table, qi: Sequence[str], m: Model) -> tuple[str, dict]:
    """The query that checks model `m` on table `out`, and its bindings."""
    if m.kind == "recursive_cl":
        return "kanon/recursive_diversity", dict(tbl=out, qi=sql.columns(qi), s=sql.column(m.name),
                                                 l=int(m.level), c=m.c)
    return "data/attribute_disclosure", dict(tbl=out, qi=sql.columns(qi), s=sql.column(m.name), ordered=m.ordered,
                                             l=int(m.level) if m.kind == "l_diversity" else 0,
                                             t=m.threshold if m.kind == "t_closeness" else 1.0)
