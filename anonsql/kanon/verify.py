"""Did a suppression run keep its promise? Independent SQL recounts on the output table.

The output must be k-anonymous, keep the source's row count and class counts N(c), and differ
from the source only by cells turned NULL: for every attribute j, value x and class c,
N_out(x, c) <= N_src(x, c) (on the N(x_j, c) tables counted before the run). With a copy, the
non-QI columns are also compared with the source as multisets (one GROUP BY over both tables). None of
this reuses the algorithm's code; each check is recorded on the report with the query file.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..report import Report
from ..stats import AttrClassCounts, class_counts
from ..verify import k_anonymity
from .stats import Statistics


def suppression(engine: Engine, report: Report, out: Table, qi: Sequence[str], class_column: str | None, k: int, *,
                before: Statistics, out_attrs: AttrClassCounts, source: Table | None, decided_cells: int,
                changed: Sequence[str] = ()) -> int:
    """Record every check on `report`; returns the newly NULL cells Σ_j,c N_out(⊥_j, c) - N_src(⊥_j, c).
    Without a class column (C = 1) the class counts are the row count, checked already; the
    `changed` columns (dropped, pseudonymized) are left out of the comparison with the source."""
    kanon = k_anonymity(engine, out, qi, k, show=0)
    report.check("k-anonymity", kanon.ok, "common/violations_summary",
                 "" if kanon.ok else f"{kanon.violating_groups} groups, {kanon.violating_rows} rows below k = {k}")

    text, params = sql.render("common/row_count", engine.dialect, tbl=out.expr)
    rows, source_rows = int(engine.fetch_all(text, params)[0][0]), before.classes.total
    report.check("same rows", rows == source_rows, "common/row_count",
                 "" if rows == source_rows else f"{source_rows} -> {rows}")

    if class_column is not None:
        classes = class_counts(engine, out, class_column)
        same = _counts(classes.labels, classes.counts) == _counts(before.classes.labels, before.classes.counts)
        report.check("same class counts", same, "common/class_counts", "" if same else "N(c) changed")

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
        text, params = sql.render("common/multiset_difference", engine.dialect, a=source.expr, b=out.expr,
                                  col=sql.columns(others), side=sql.unused_ident("side", others))
        differ = int(engine.fetch_all(text, params)[0][0])
        report.check("non-QI columns unchanged", differ == 0, "common/multiset_difference",
                     "" if differ == 0 else f"{differ} rows differ outside the quasi-identifiers")
    return suppressed


def _counts(values: np.ndarray, counts: np.ndarray) -> dict[object, int]:
    return {v: int(n) for v, n in zip(values, counts)}
