"""The release's own SQL figures: table fingerprints, equivalence-class size histograms, NULL
cells per column and the per-attribute value distributions before and after (utility)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..sql import exp  # sqlglot.expressions, imported on first use


@dataclass(frozen=True)
class Fingerprint:
    """A table's row count N and an order-independent MD5 of its rows (sql/release/fingerprint.sql)."""

    rows: int
    digest: str


def fingerprint(engine: Engine, table: Table) -> Fingerprint:
    """Equal fingerprints: the same multiset of rows (the values as text, NULL distinct from '';
    a double as its exact value, `float_key`, so that every engine gives the same fingerprint)."""
    cols = [float_key(sql.column(c.name)) if c.kind == "float" else sql.column(c.name) for c in table.columns]
    text, params = sql.render("release/fingerprint", engine.dialect, tbl=table.expr, key=sql.group_key(cols))
    rows, digest = engine.fetch_all(text, params)[0]
    return Fingerprint(int(rows), str(digest or ""))


def float_key(col: exp.Expr) -> exp.Expr:
    """The text of a double column that is the same on every engine: its exact value ±M·2^E
    (sql/common/float_key.sql over float_scaled.sql and float_exponent.sql)."""
    v = exp.cast(col, "DOUBLE")
    e0 = sql.fragment("common/float_exponent", v=v)
    return sql.fragment("common/float_key", v=v, e0=e0, y=sql.fragment("common/float_scaled", v=v, e0=e0))


def class_sizes(engine: Engine, table: Table, qi: Sequence[str]) -> list[tuple[int, int]]:
    """(|E|, classes of that size), by size (sql/data/class_size_histogram.sql, shared with profile)."""
    text, params = sql.render("data/class_size_histogram", engine.dialect, tbl=table.expr, qi=sql.columns(qi))
    return [(int(s), int(c)) for s, c in engine.fetch_all(text, params)]


def null_cells(engine: Engine, table: Table, columns: Sequence[str]) -> dict[str, int]:
    """NULL (⊥) cells per column, one scan (sql/release/null_cells.sql)."""
    text, params = sql.render("release/null_cells", engine.dialect, tbl=table.expr, col=sql.columns(columns))
    return dict(zip(columns, (int(v) for v in engine.fetch_all(text, params)[0])))


#: Values drawn per column on the utility page; the others are summed as "other".
TOP_VALUES = 20


@dataclass(frozen=True)
class Distribution:
    """Rows per value of one column, before (the baseline) and after (the published table): the
    TOP_VALUES values with the most rows on either side, as text (None: ⊥, NULL), the rest summed
    as "other" (sql/release/value_distribution.sql). The baseline's counts, set against the
    published ones, tell the values of the changed cells (one suppressed age, 20s before 16 and
    after 15): a Distribution is private (Proof.PRIVATE), drawn on private/utility.html only."""

    column: str
    values: list[tuple[str | None, int, int]]  # (value, rows before, rows after)
    other_before: int
    other_after: int
    nulls_added: int  # NULL cells of this column the release added (after minus before, at least 0)


def distribution(engine: Engine, before: Table, after: Table, column: str, *, rows: tuple[int, int],
                 nulls_added: int) -> Distribution:
    """The Distribution of `column` (a name of `after`, resolved in `before` too), one query;
    `rows`: the row counts of `before` and `after` (the "other" rows are the rest)."""
    text, params = sql.render("release/value_distribution", engine.dialect, before=before.expr, after=after.expr,
                              bcol=sql.column(before.column(column).name), acol=sql.column(after.column(column).name),
                              top=TOP_VALUES)
    values = [(v, int(b), int(a)) for v, b, a in engine.fetch_all(text, params)]
    return Distribution(column, values, rows[0] - sum(b for _, b, _ in values),
                        rows[1] - sum(a for _, _, a in values), nulls_added)
