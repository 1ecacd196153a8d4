"""Independent checks of a protect run, by SQL over the written table (never the algorithm's
arrays): every confidential cell is NULL or generalized, the table holds what the changes
table says and each new value generalizes its old one, no row is lost, and the classifiers
the method defends against, re-trained on the published table (naive Bayes from SQL counts,
Defs. 2.2 / 4.1; ID3 on the rows read back), no longer predict a confidential cell.

Deletion is generalization to NULL: a column that has no taxonomy is checked along a flat one
(its values under one root, ν), so one naive Bayes and one ID3 check serve every method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .. import sql
from ..engine import Engine
from ..report import Report
from ..rewrite import Script
from ..taxonomy.model import Taxonomy
from . import stats
from .deletion import COIN_KEPT, DELETED, Cell
from .generalization import GeneralizedMicrodata, id3_g_predicts
from .naive_bayes import NU
from .partial_counts import estimate
from .request import ProtectionInput
from .rewrite import CELLS
from .rows import FetchedRows
from .suppress import CLASSIFIERS, CellResult

Scorer = Callable[[Mapping[str, Any]], dict[str, Fraction]]


def run(engine: Engine, report: Report, inp: ProtectionInput, source: sql.TableName, out: sql.TableName,
        changes: sql.TableName, results: Sequence[CellResult], method: str, values: Sequence[np.ndarray],
        removed: Sequence[Any]) -> None:
    """Record every check on `report` (the job raises when one fails); `source` is `out` for a
    run in place."""
    d, key = engine.dialect, inp.key
    bad = engine.fetch_all(*sql.render("protect/check_confidential", d, cells=CELLS, changes=changes.expr))
    report.check("every confidential cell hidden or generalized", not bad, "protect/check_confidential",
                 _cells(key, bad, "left as it was"))
    listed = stats.changes(engine, changes.expr)
    wrong = [(k, c) for c in dict.fromkeys(listed["column_name"]) for (k,) in engine.fetch_all(*sql.render(
        "protect/check_changes", d, changes=changes.expr, out=out.expr, key=sql.column(key),
        col=sql.column(c), col_name=c))]
    report.check("the table holds the changes table's new values", not wrong, "protect/check_changes",
                 _cells(key, wrong, "differs from its recorded new value"))
    taxes = _taxonomies(inp, values)
    loose = [(k, c) for k, c, old, new in listed[["key", "column_name", "old_value", "new_value"]].itertuples(
        index=False) if not _generalizes(taxes.get(c), old, None if pd.isna(new) else new)]
    report.check("each new value generalizes its old one", not loose, "protect/changes_list",
                 _cells(key, loose, "is not a generalization of its value"))
    n, missing = stats.rows_kept(engine, out.expr, source.expr, key)
    expected = inp.n - len(removed)
    report.check("every row kept (but the removed tuples)",
                 n == expected and missing == (0 if source == out else len(removed)), "protect/rows_kept",
                 f"{n} rows, {expected} expected; {missing} source key(s) missing")
    checked = [r for r in results if r.status not in (COIN_KEPT, DELETED)]
    truth = {(r.cell.row, r.cell.target): stats.text(inp.value(r.cell.row, inp.columns[r.cell.target]))
             for r in checked}
    published = {}  # the confidential rows as published: key -> column -> value
    for k in dict.fromkeys(k for k, _ in truth):
        for row in stats.rows_where(engine, out.expr, key, inp.columns, [(key, k)]):
            published[k] = dict(zip(inp.columns, row[1:]))
    if "nb" in CLASSIFIERS[method]:
        hits = []
        for t in dict.fromkeys(r.cell.target for r in checked):
            name = inp.columns[t]
            score = naive_bayes(engine, out, name, inp.attrs[name], taxes)
            hits += [(k, name) for (k, j), v in truth.items() if j == t and k in published
                     and _predicted(score(published[k]), v)]
        report.check("naive Bayes misses every confidential cell", not hits, "protect/nb_counts",
                     _cells(key, hits, "still predicted"))
    if "id3" in CLASSIFIERS[method]:
        view = _coded(engine, inp, out, published, taxes, values)
        hits = [(k, inp.columns[t]) for (k, t), v in truth.items() if k in published
                and _id3_predicts(view, k, t, v)]
        report.check("ID3 misses every confidential cell", not hits, "protect/tuple_counts",
                     _cells(key, hits, "still predicted"))


def script_checks(script: Script, out: sql.TableName, changes: sql.TableName, key: str,
                  columns: Sequence[str]) -> None:
    """The verification queries a reviewer runs after the script (the job runs the same)."""
    script.check("every confidential cell is hidden or generalized: must return no row",
                 sql.readable("protect/check_confidential", script.dialect, cells=CELLS, changes=changes.expr))
    for c in columns:
        script.check(f"the cells of {c} hold their recorded new value: must return no row",
                     sql.readable("protect/check_changes", script.dialect, changes=changes.expr, out=out.expr,
                                  key=sql.column(key), col=sql.column(c), col_name=c))


def naive_bayes(engine: Engine, tbl: sql.TableName, target: str, attrs: list[str],
                taxonomies: Mapping[str, Taxonomy]) -> Scorer:
    """Def. 4.1 (Def. 2.2 along a flat taxonomy) from SQL GROUP BY counts on the published
    table: tuple -> {candidate: p(v|d)}, the candidates being the leaves under the tuple's
    target (a NULL target stands at the root), trained on D - d_i; class and attribute counts
    are estimated with partially specified values (Section 4.1.1)."""
    text, params = sql.render("protect/nb_counts", engine.dialect, tbl=tbl.expr, attr=sql.columns(attrs),
                              target=sql.column(target))
    m, tax = len(attrs), taxonomies[target]
    pair: dict[tuple[int, str], dict[str, int]] = {}
    totals = [0] * len(tax)
    found = engine.fetch_arrow(text, params)  # grouping flags g_j, attributes, target, count
    labels = [str(stats.text(v)) for v in found.column(2 * m).to_pylist()]
    counts = found.column(2 * m + 1).to_pylist()
    for j in range(m):
        mine = np.flatnonzero(found.column(j).to_numpy() == 0).tolist()  # the rows of attribute j's set
        values = found.column(m + j).to_pylist()
        for r in mine:
            label, n = labels[r], int(counts[r])
            if j == 0:
                totals[tax.index(label)] += n
            if values[r] is not None:
                pair.setdefault((j, label), {})[str(stats.text(values[r]))] = n

    def score(tuple_: Mapping[str, Any]) -> dict[str, Fraction]:
        own, at = list(totals), stats.text(tuple_[target])
        g = 0 if at is None else tax.index(at)
        if at is not None:
            own[g] -= 1  # the tuple itself: D - d_i
        n = sum(own[x] for x in tax.subtree(g))
        classes = estimate(tax, own, root=g)
        out = {}
        for v in tax.leaves_under(g):
            label, total = tax.labels[v], classes[v]
            p = total / n if n else Fraction(0)
            for j, a in enumerate(attrs):
                x = stats.text(tuple_[a])
                if x is None or not p:
                    continue
                seen, ta = pair.get((j, label), {}), taxonomies.get(a)
                if ta is None:
                    hits: Fraction | int = seen.get(x, 0)
                else:
                    observed = [0] * len(ta)
                    for value, cnt in seen.items():
                        observed[ta.index(value)] += cnt
                    hits = estimate(ta, observed)[ta.index(x)]
                p = p * hits / total if total else Fraction(0)
            out[label] = p
        return out

    return score


def _taxonomies(inp: ProtectionInput, values: Sequence[np.ndarray]) -> dict[str, Taxonomy]:
    """Each target's taxonomy: its stored one, or the flat one over its values (deletion)."""
    flat = {t: Taxonomy.flat(t, [str(stats.text(v)) for v in values[inp.columns.index(t)]]) for t in inp.targets}
    return {**flat, **inp.taxonomies}


def _generalizes(tax: Taxonomy | None, old: str, new: str | None) -> bool:
    """`new` is ν, or a strict ancestor of `old` in the column's taxonomy."""
    if new is None:
        return True
    if tax is None or tax.find(new) is None or tax.find(old) is None:
        return False
    return tax.is_descendant(tax.index(old), tax.index(new))


def _predicted(scores: dict[str, Fraction], truth: str | None) -> bool:
    """Assertions 3.8 / 4.9: the true value is strictly the most probable candidate."""
    return truth in scores and all(scores[truth] > s for v, s in scores.items() if v != truth)


def _coded(engine: Engine, inp: ProtectionInput, out: sql.TableName, published: Mapping[Any, Mapping[str, Any]],
           taxes: Mapping[str, Taxonomy], values: Sequence[np.ndarray]) -> GeneralizedMicrodata:
    """The published table as the classifiers see it: its distinct tuples (protect/tuple_counts)
    and the confidential rows, coded by taxonomy node where a column has one, else by the
    input's value dictionary; ν = -1 (each value matched by its text)."""
    lookups, sizes = [], []
    for j, c in enumerate(inp.columns):
        tax = taxes.get(c)
        lookups.append({lbl: n for n, lbl in enumerate(tax.labels)} if tax else
                       {str(stats.text(v)): n for n, v in enumerate(values[j])})
        sizes.append(len(tax) if tax else len(values[j]))

    def coded(row: Sequence[Any]) -> np.ndarray:
        return np.array([NU if v is None else lookups[j][str(stats.text(v))] for j, v in enumerate(row)],
                        dtype=np.int64)

    found = stats.tuple_counts(engine, out.expr, inp.columns)
    m = len(inp.columns)
    tuples = (np.array([coded(r[:-1]) for r in found], dtype=np.int64).reshape(len(found), m),
              np.array([r[-1] for r in found], dtype=np.int64))
    rows = FetchedRows(inp.n, lambda where: ([], np.zeros((0, m), dtype=np.int64)),  # ID3 selects no row
                       lambda: tuples, {k: coded([row[c] for c in inp.columns]) for k, row in published.items()})
    order = {c: j for j, c in enumerate(inp.columns)}
    return GeneralizedMicrodata(rows, sizes, {order[t]: [order[a] for a in inp.attrs[t]] for t in inp.targets},
                                taxonomies=[taxes.get(c) for c in inp.columns])


def _id3_predicts(view: GeneralizedMicrodata, row: Any, target: int, truth: str | None) -> bool:
    """ID3 re-trained on D - d_i (its candidates' rows) classifies the tuple as its true value;
    a NULL target stands at its taxonomy's root."""
    tax = view.taxonomies[target]
    if tax is None or truth is None or tax.find(truth) is None:
        return False
    saved = int(view.row(row)[target])
    if saved == NU:
        view.set(row, target, 0)
    try:
        return id3_g_predicts(view, Cell(row, target, tax.index(truth)))
    finally:
        view.set(row, target, saved)


def _cells(key: str, cells: Sequence[tuple[Any, ...]], what: str) -> str:
    """A check's detail: the first few failing cells."""
    if not cells:
        return ""
    shown = "; ".join(f"cell ({key} = {stats.plain(k)}, {c})" for k, c, *_ in cells[:3])
    return f"{len(cells)} {what}: {shown}" + (" ..." if len(cells) > 3 else "")
