"""Published counts -> SQL: the tables <out>_class (P_c), <out>_attr (N^i_{t,c}) and, with
--synthetic, <out>_rows, written by the job or emitted as a reviewable script (--emit-sql).

Counts are exact integers: BIGINT, or the engine's wider exact integer type when one needs more digits
(`count_column`; sent as decimal text, which no driver rounds), each beside its natural log in DOUBLE
("log_count"); values and classes are their SQL text. A
consumer classifies a tuple τ in SQL with eq. (2) in logs, highest score first, the higher
"precedence" winning a tie (doubles can misorder near-ties: the exact counts decide those):

    SELECT p."class", (1 - n) * p."log_count" + SUM(a."log_count") AS score
    FROM out_class AS p JOIN out_attr AS a ON a."class" = p."class"
    WHERE (a."attribute", a."value") IN (('age', '40'), ('adr', 'W'))   -- τ, one pair per A_i
    GROUP BY p."class", p."log_count", p."precedence"
    ORDER BY score DESC, p."precedence" DESC LIMIT 1
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pandas as pd

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..rewrite import Script
from ..sql import exp  # sqlglot.expressions, imported on first use
from . import verify
from .stats import Views
from .views import Viewset

SUFFIXES = ("_class", "_attr", "_rows")


def names(out: str, synthetic: bool = False) -> list[sql.TableName]:
    """<out>_class and <out>_attr (and <out>_rows with `synthetic`), in the schema of `out`."""
    ref = sql.TableName.parse(out)
    return [sql.TableName(ref.name + s, ref.schema) for s in SUFFIXES[: 3 if synthetic else 2]]


@dataclass
class Output:
    """One table a publish run writes: its name, the sql/ file creating it, its rows."""

    name: sql.TableName
    create: str
    columns: list[str]
    rows: list[tuple[Any, ...]]
    comment: str
    count_type: str = "BIGINT"  # the type of the "count" column (DuckDB's spelling): Engine.integer_type

    def statement(self, dialect: str, *, readable: bool = False) -> tuple[str, dict[str, Any]]:
        bindings: dict[str, Any] = {"out": self.name.expr}
        if self.create == "nbc/create_rows":
            bindings["col"] = sql.columns(self.columns)
        else:
            bindings["count"] = count_column(self.count_type)
        if readable:
            return sql.readable(self.create, dialect, **bindings), {}
        return sql.render(self.create, dialect, **bindings)


def count_column(count_type: str) -> exp.ColumnDef:
    """The published tables' "count" column of type `count_type` (DuckDB's spelling, e.g. BIGINT,
    DECIMAL(38, 0)), rendered per dialect where sql/nbc/create_*.sql says $count."""
    return exp.ColumnDef(this=sql.ident("count"), kind=exp.DataType.build(count_type, dialect=sql.SOURCE_DIALECT))


def outputs(tables: Sequence[sql.TableName], v: Views, pub: Viewset, weights: Sequence[int],
            count_type: str = "BIGINT") -> list[Output]:
    """The published tables' contents: P_c with the prior weight F_c, every N^i_{t,c}, and with
    a third name the synthetic rows; the counts in a column of `count_type`."""
    result = [
        Output(tables[0], "nbc/create_class", ["class", "count", "log_count", "prior", "precedence"],
               [(c, str(int(p)), _ln(p), int(w), j) for j, (c, p, w) in enumerate(zip(v.classes, pub.P, weights))],
               "P_c per class, its log, the prior weight F_c the counts are r-close to (1: uniform), "
               "and the tie precedence", count_type),
        Output(tables[1], "nbc/create_attr", ["attribute", "value", "class", "count", "log_count"],
               [(a, v.values[i][t], v.classes[c], str(int(pub.N[i][t][c])), _ln(pub.N[i][t][c]))
                for i, a in enumerate(v.attrs) for t in range(len(v.values[i])) for c in range(len(v.classes))],
               "N^i_(t,c) per attribute i, value t and class c", count_type),
    ]
    if len(tables) > 2:
        result.append(Output(tables[2], "nbc/create_rows", [*v.attrs, v.class_column], synthetic_rows(v, pub),
                             "rows whose NBC views are the published counts (--synthetic)"))
    return result


def _ln(x: object) -> float | None:
    """ln of a count of any size (None for 0: -infinity is not portable SQL)."""
    n = int(x)  # type: ignore[call-overload]
    if n <= 0:
        return None
    shift = max(0, n.bit_length() - 64)
    return math.log(n >> shift) + shift * math.log(2)


def synthetic_rows(v: Views, pub: Viewset) -> list[tuple[Any, ...]]:
    """Rows whose NBC views are exactly the published counts: for class c, P_c rows in which
    attribute i takes value t in N^i_{t,c} of them (Σ_t N^i_{t,c} = P_c after Step 3). Only the
    per-(attribute, class) marginals matter to a naive Bayes classifier, so each attribute
    column is laid out independently, values in order."""
    columns: list[list[str]] = [[] for _ in range(len(v.attrs) + 1)]
    for c, label in enumerate(v.classes):
        for i in range(len(v.attrs)):
            for t, value in enumerate(v.values[i]):
                columns[i].extend([value] * int(pub.N[i][t][c]))
        columns[-1].extend([label] * int(pub.P[c]))
    return list(zip(*columns))


def write(engine: Engine, tables: Sequence[Output]) -> None:
    """Create each table and bulk-load its rows (counts as exact decimal text, which each engine
    stores in the "count" column's integer type). On Spark the names are staging names
    (anonsql.catalog.staged_outputs): CREATE TABLE and INSERT into a table of this run only."""
    for table in tables:
        engine.execute(*table.statement(engine.dialect))
        frame = pd.DataFrame(table.rows, columns=table.columns, dtype=object)
        engine.insert_rows(table.name.expr, table.columns, frame)


def script(dialect: str, title: str, replaced: Sequence[Table], tables: Sequence[Output], v: Views,
           rho: Fraction) -> Script:
    """The run as a script: drop what --replace replaces, create and fill the tables, then the
    SQL checks of condition (10), of Σ_t N^i_{t,c} = P_c and, with --synthetic, of the rows."""
    s = Script(dialect, title, [
        "Holds the published (safe) counts and the attribute and class labels, no source rows.",
        "NBC-equivalence (Definition 2) is decided in Python: run `anonsql nbc verify --published ...`."])
    for old in replaced:
        s.step(f"--replace: drop the previous {old}", sql.readable("common/drop_table", dialect, tbl=old.expr))
    for table in tables:
        s.step(f"{table.name}: {table.comment}", table.statement(dialect, readable=True)[0])
        s.rows(f"the rows of {table.name}", table.name.expr, table.columns, table.rows)
    n, classes = len(v.attrs), len(v.classes)
    s.check(f"{verify.SAFETY} = {rho} and {verify.SUMS}: must return bad_values 0, bad_classes 0, undecided 0 "
            f"(else decide those pairs exactly), bad_sums 0, attributes {n}, classes {classes}",
            sql.readable(verify.safety_query(dialect), dialect,
                         **verify.safety_bindings(tables[0].name.expr, tables[1].name.expr, rho, n)))
    if len(tables) > 2:
        rows = tables[2].name.expr
        s.check(f"N(x_i, c) of {tables[2].name}: must equal the counts of {tables[1].name}",
                sql.readable("common/attr_class_counts", dialect, tbl=rows, attr=sql.columns(v.attrs),
                             cls=sql.column(v.class_column)))
        s.check(f"N(c) of {tables[2].name}: must equal the counts of {tables[0].name}",
                sql.readable("common/class_counts", dialect, tbl=rows, cls=sql.column(v.class_column)))
    return s
