"""Independent checks of a publication: condition (10) and Σ_t N^i_{t,c} = P_c recomputed by SQL
on the materialized tables (never by the transform's code), synthetic rows recounted by SQL, and
NBC-equivalence (Definition 2) of the classifier that the published tables, read back, train.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sqlglot import exp

from .. import sql
from .. import stats as common_stats
from ..catalog import Table
from ..engine import Engine, engine_class
from ..report import Check
from . import equivalence as eq
from .stats import Views
from .views import Viewset

SAFETY = "condition (10) for rho"
SUMS = "sum over values of N^i_(t,c) = P_c"
EQUIVALENCE = "NBC-equivalence"


#: DuckDB's check compares logs of the counts; within this (far above rounding) it leaves a
#: pair undecided, and `safety` decides it exactly from the counts read back.
LOG_TOL = 1e-9


def safety_query(dialect: str) -> str:
    """Condition (10) in exact NUMERIC where the engine has it (Engine.exact_numeric: PostgreSQL); in
    logs with exact undecided pairs elsewhere (on Spark exact integers in DECIMAL(38, 0), so a
    publication is checked there only when its counts have at most Engine.exact_digits digits: nbc
    publish refuses a larger one before writing anything)."""
    return "nbc/check_safety_exact" if engine_class(dialect).exact_numeric else "nbc/check_safety"


def safety_bindings(class_table: exp.Table, attr_table: exp.Table, rho: Fraction, n: int) -> dict[str, Any]:
    """The bindings of the safety query for a publication and its rho (or r), ρ also as an
    exact fraction rho_num/rho_den (decimal text: any size)."""
    return {"class_tbl": class_table, "attr_tbl": attr_table, "rho": float(rho), "n": n, "tol": LOG_TOL,
            "rho_num": str(rho.numerator), "rho_den": str(rho.denominator)}


def _exact_ratio_ok(engine: Engine, class_table: exp.Table, attr_table: exp.Table, rho: Fraction, n: int) -> bool:
    """(10) decided exactly on the counts read back as text: every pair of classes of a value
    (and of the P_c) has (N_c/F_c ÷ N_c'/F_c')^n <= ρ. Independent of the transform's code."""
    text, params = sql.render("nbc/read_published", engine.dialect, class_tbl=class_table, attr_tbl=attr_table)
    rows = engine.fetch_all(text, params)
    prior = {label: int(f) for attr, _, label, _, f in rows if attr is None}
    groups: dict[tuple[Any, Any], list[Fraction]] = {}
    for attr, value, label, count, _ in rows:
        groups.setdefault((attr, value), []).append(Fraction(int(count), prior[label]))
    return all(min(g) > 0 and (max(g) / min(g)) ** n <= rho for g in groups.values())


def safety(engine: Engine, class_table: exp.Table, attr_table: exp.Table, rho: Fraction, n: int,
           classes: int) -> list[Check]:
    """Condition (10) on the published counts (prior-normalised for EST) and Statement 9a's
    Σ_t N^i_{t,c} = P_c, by sql/nbc/check_safety_exact.sql (PostgreSQL) or check_safety.sql
    (DuckDB; pairs its logs leave undecided are decided exactly from the counts)."""
    query = safety_query(engine.dialect)
    text, params = sql.render(query, engine.dialect, **safety_bindings(class_table, attr_table, rho, n))
    bad_values, bad_classes, undecided, bad_sums, attributes, found = engine.fetch_all(text, params)[0]
    shape = attributes == n and found == classes
    exact = not undecided or _exact_ratio_ok(engine, class_table, attr_table, rho, n)
    safe = shape and not bad_values and not bad_classes and exact
    detail = ("every ratio within rho^(1/n)" + (f" ({undecided} at the bound, decided exactly)" if undecided else "")
              if safe else
              f"expected {n} attributes and {classes} classes, found {attributes} and {found}" if not shape else
              f"{bad_values} (attribute, value) pairs{' and the P_c' if bad_classes else ''} exceed rho^(1/n)"
              if bad_values or bad_classes else "a ratio at the bound exceeds rho^(1/n) exactly")
    return [Check(SAFETY, safe, query, detail),
            Check(SUMS, not bad_sums, query, f"{bad_sums} (attribute, class) sums differ" if bad_sums else "")]


def synthetic(engine: Engine, rows: Table, v: Views, pub: Viewset) -> Check:
    """The rows table recounted by SQL: its N(x_i, c) and N(c) must be the published counts."""
    counts = common_stats.attr_class_counts(engine, rows, v.attrs, v.class_column)
    classes = common_stats.class_counts(engine, rows, v.class_column)
    got = {(i, str(x), str(c)): int(n) for i in range(len(v.attrs))
           for x, row in zip(counts.values[i], counts.counts[i]) for c, n in zip(counts.class_values, row) if n}
    got |= {(-1, "", str(c)): int(n) for c, n in zip(classes.values, classes.counts)}
    want = {(i, v.values[i][t], v.classes[c]): int(pub.N[i][t][c]) for i in range(len(v.attrs))
            for t in range(len(v.values[i])) for c in range(len(v.classes)) if pub.N[i][t][c]}
    want |= {(-1, "", label): int(p) for label, p in zip(v.classes, pub.P)}
    wrong = len(set(got.items()) ^ set(want.items()))
    return Check("synthetic rows have the published views", not wrong, "common/attr_class_counts",
                 f"{wrong} counts differ" if wrong else "")


def full_product(v: Views) -> bool:
    """Can equivalence be decided on every tuple of ΠA_i (equivalence.decidable: each half of
    the meet in the middle small enough)? Else only the table's own tuples are checked."""
    return eq.decidable(v.view)


@dataclass
class Equivalence:
    """Definition 2 decided between the source's NBC and a published one."""

    checked_on: str  # 'full product' or 'table tuples'
    tuples: int
    differences: list[str]

    def check(self) -> Check:
        detail = f"{self.tuples:,} tuples of the {self.checked_on}"
        return Check(EQUIVALENCE, not self.differences, "nbc/read_published",
                     detail + (f"; {self.differences[0]}" if self.differences else ""))


def equivalence(v: Views, published: Viewset, limit: int = 10) -> Equivalence:
    """Do the source's views and `published` rank the classes alike on every tuple (Definition 2)?
    At most `limit` differing tuples are described."""
    if full_product(v):
        diffs, on, tuples = eq.differences(v.view, published, limit), "full product", eq.product_size(v.view)
    else:
        diffs, on, tuples = eq.differences_on(v.view, published, v.codes, limit), "table tuples", len(v.codes)
    return Equivalence(on, tuples, [describe(v, d) for d in diffs])


def describe(v: Views, d: eq.Difference) -> str:
    """A differing tuple in words, with the source's value and class labels."""
    tau = ", ".join(f"{a}={v.values[i][t]}" for i, (a, t) in enumerate(zip(v.attrs, d.tuple)))
    lo, hi = v.classes[d.lower], v.classes[d.higher]
    who = f"original ranks {lo} above {hi}" if d.original_gt else f"original ranks {hi} at or above {lo}"
    return f"tuple ({tau}): {who}, the published views do not"
