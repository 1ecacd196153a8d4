"""Independent SQL checks of each guarantee, run on the published table itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from . import sql
from .catalog import Table
from .engine import Engine
from .stats import AttrClassCounts, ClassCounts, class_counts


@dataclass
class KAnonymityCheck:
    """Is every QI combination (NULL = ⊥ counting as its own value) shared by >= k rows?"""

    table: str
    qi: list[str]
    k: int
    ok: bool
    violating_groups: int
    violating_rows: int
    shown_groups: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def k_anonymity(engine: Engine, table: Table, qi: Sequence[str], k: int, *, show: int = 20) -> KAnonymityCheck:
    """Count the equivalence classes smaller than k and list the `show` smallest of them."""
    binds = dict(tbl=table.expr, qi=sql.columns(qi), k=k)
    text, params = sql.render("violations_summary", engine.dialect, **binds)
    groups, rows = engine.fetch_all(text, params)[0]
    shown: list[dict[str, Any]] = []
    if groups and show > 0:
        text, params = sql.render("violating_groups", engine.dialect, max_groups=show, **binds)
        shown = [dict(zip([*qi, "size"], r)) for r in engine.fetch_all(text, params)]
    return KAnonymityCheck(str(table), list(qi), k, groups == 0, int(groups), int(rows), shown)


@dataclass
class SuppressionCheck:
    """Did a suppression run keep its promise? Recounted by SQL on the output table.

    `out_attrs` are the N(x_j, c) tables recounted by SQL on the output (stats module).
    The output must be k-anonymous, have the source's row count and class counts N(c), and
    differ from the source only by cells turned NULL: for every attribute j, value x and
    class c, N_out(x, c) <= N_src(x, c) with no new value (checked on the N(x_j, c) tables,
    which the source had before the run). With a copy, every non-QI column is also compared
    as a multiset (EXCEPT ALL both ways).
    """

    ok: bool
    k_anonymity: KAnonymityCheck
    rows: int
    suppressed_cells: int  # Σ_j,c N_out(⊥_j, c) - N_src(⊥_j, c), recounted
    problems: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def suppression(engine: Engine, out: Table, qi: Sequence[str], class_col: str, k: int, *,
                source_rows: int, source_attrs: AttrClassCounts, source_classes: ClassCounts,
                out_attrs: AttrClassCounts, source: Table | None = None) -> SuppressionCheck:
    """Re-check a suppression run from the output table (and the source, when it still exists)."""
    problems: list[str] = []
    kcheck = k_anonymity(engine, out, qi, k, show=5)
    if not kcheck.ok:
        problems.append(f"not {k}-anonymous: {kcheck.violating_groups} groups, {kcheck.violating_rows} rows")
    text, params = sql.render("row_count", engine.dialect, tbl=out.expr)
    rows = int(engine.fetch_all(text, params)[0][0])
    if rows != source_rows:
        problems.append(f"row count changed: {source_rows} -> {rows}")
    classes = class_counts(engine, out, class_col)
    if _counts(classes.values, classes.counts) != _counts(source_classes.values, source_classes.counts):
        problems.append("class counts N(c) changed")
    attrs = out_attrs
    class_pos = {v: i for i, v in enumerate(attrs.class_values)}
    suppressed = 0
    for j, name in enumerate(qi):
        before = {(x, c): int(n) for x, row in zip(source_attrs.values[j], source_attrs.counts[j])
                  for c, n in zip(source_attrs.class_values, row)}
        for x, row in zip(attrs.values[j], attrs.counts[j]):
            for c, n in zip(attrs.class_values, row):
                if n > before.get((x, c), 0):
                    problems.append(f"column {name}: value {x!r} in class {c!r} gained rows ({before.get((x, c), 0)} -> {n})")
        src_nulls = {c: int(n) for c, n in zip(source_attrs.class_values, source_attrs.null_counts[j])}
        suppressed += sum(int(attrs.null_counts[j][class_pos[c]]) - src_nulls.get(c, 0) for c in attrs.class_values)
    if source is not None:
        others = [c for c in source.column_names if c not in qi]
        for a, b in ((source, out), (out, source)):
            text, params = sql.render("rows_not_in", engine.dialect, a=a.expr, b=b.expr, col=sql.columns(others))
            if int(engine.fetch_all(text, params)[0][0]):
                problems.append(f"non-QI columns differ between {source} and {out}")
                break
    return SuppressionCheck(not problems, kcheck, rows, suppressed, problems)


def _counts(values, counts) -> dict:
    return {v: int(n) for v, n in zip(values, counts)}
