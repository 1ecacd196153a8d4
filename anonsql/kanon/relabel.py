"""--local-recoding (issue 33): after global recoding and the suppression job, give blanked cells back
as the lowest label of their hierarchy that keeps every class at k (anonsql.kanon.local's pass).

The recoded view carries, beside each quasi-identifier, a hidden copy of its label at the global
node's level L (`hidden`); the suppression job writes it unchanged into a temporary table (so its
checks all hold there), and this module then reads that table's tuples (sql/kanon/local_tuples.sql),
each QI's ladder above L from the SOURCE (local_ladder.sql), runs the pass, and writes the output
with ONE CREATE TABLE AS SELECT (local_write.sql, a CASE per QI over the decisions), the hidden
copies left out. Checked in the same transaction, independently of the decisions: the classes
and rows recounted (local_classes.sql), and every published value is ⊥ or the label of as many
SOURCE rows of its class at L or a level above it (local_outside.sql).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
from sqlglot import exp

from .. import sql
from ..catalog import Table, get_table, output_table, staged_output
from ..engine import Engine
from ..errors import VerificationError
from ..hierarchy import Hierarchy, level_expr
from ..report import Progress, Report, silent
from ..stats import scratch_table
from .local import give_back, number

SCRATCH = "private_anonsql_local"
DECISIONS = "anonsql_local_decisions"


HIDDEN = "anonsql_at_"


def hidden(j: int) -> str:
    """The hidden copy of QI j's label at the global node's level, in the recoded view."""
    return f"{HIDDEN}{j}"


def text(e: exp.Expr) -> exp.Expr:
    """`e` as text (the labels' type; a level-0 value cast so it can stand beside labels)."""
    return exp.cast(e, "VARCHAR")


def scratch(source: Table) -> sql.TableName:
    """Where the suppression job writes under --local-recoding: a working table beside the source,
    named private (it holds each blanked cell's label at the node) and new for each run, dropped
    when the run ends."""
    return sql.TableName(f"{SCRATCH}_{uuid.uuid4().hex[:12]}", source.schema if source.qualified else None)


def run(engine: Engine, report: Report, source: Table, work: sql.TableName, hierarchies: Sequence[Hierarchy],
        levels: Sequence[int], class_column: str | None, k: int, out: str, replace: bool, say: Progress = silent
        ) -> dict[str, int]:
    """Give cells back from the job's temporary output into `out`; returns the cells given back per QI."""
    d = engine.dialect
    suppressed = get_table(engine, work)
    decisions = scratch_table(DECISIONS, d)
    try:
        target, replaced = output_table(engine, source, out, out, replace)
        ladders, names = zip(*(_ladder(engine, source, h, level) for h, level in zip(hierarchies, levels)))
        keys, tuples = _tuples(engine, suppressed, hierarchies, class_column)
        codes, final, counts = _coded(tuples, len(hierarchies), names)
        back, given = give_back(codes, final, counts, k, ladders)
        say(f"local recoding: {given:,} blanked cells given back as labels")
        m = len(hierarchies)
        per_column = {h.column: int(((back != final)[:, j] * counts).sum()) for j, h in enumerate(hierarchies)}
        frame = _decisions(keys, final, back, names)
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))
        engine.execute(*sql.render("kanon/local_decisions", d, decisions=decisions,
                                   key=[sql.ident(f"y_{j}") for j in range(m + 1)],
                                   rung=[sql.ident(f"r_{j}") for j in range(m)],
                                   label=[sql.ident(f"g_{j}") for j in range(m)]))
        if len(frame["y_0"]):
            engine.insert_rows(decisions, list(frame), {c: np.array(v, dtype=object) for c, v in frame.items()})
        with engine.transaction(), staged_output(engine, target, replaced) as staged:
            engine.execute(*sql.render("kanon/local_write", d, out=staged.expr, tbl=suppressed.expr,
                                       decisions=decisions, item=_items(suppressed, hierarchies, ladders),
                                       match=_match(len(hierarchies), class_column)))
            written = get_table(engine, staged)
            check(engine, report, source, written, hierarchies, levels, class_column, k)
            if not report.ok:
                raise VerificationError(report.checks)
    finally:
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=work.expr))
    return per_column


def _decisions(keys: list[tuple], final: np.ndarray, back: np.ndarray, names: Sequence[list[tuple[int, str]]]
               ) -> dict[str, list]:
    """The rows of sql/kanon/local_decisions.sql: per tuple the pass changed, its key (y_j, the class)
    and per QI the rung and label given back (None where the cell is unchanged)."""
    changed = np.flatnonzero((back != final).any(axis=1))
    m = final.shape[1]
    frame: dict[str, list] = {f"y_{j}": [keys[t][j] for t in changed] for j in range(m + 1)}
    for j in range(m):
        rungs = [names[j][int(back[t, j])] if back[t, j] != final[t, j] else (None, None) for t in changed]
        frame[f"r_{j}"] = [r for r, _ in rungs]
        frame[f"g_{j}"] = [g for _, g in rungs]
    return frame


def _ladder(engine: Engine, source: Table, h: Hierarchy, level: int) -> tuple[list[np.ndarray], list[tuple[int, str]]]:
    """QI h's ladder above its label at `level` (anonsql.kanon.local.number over the labels read
    from the source, rung 0 coded in the order of the labels) and each id's (rung, label)."""
    labels = [exp.alias_(text(level_expr(h, lv)), f"l_{i}") for i, lv in enumerate(range(level, h.top))]
    if not labels:  # a QI at ⊥ already: nothing to give back
        return [], []
    chains = sorted(tuple(r) for r in engine.fetch_all(*sql.render(
        "kanon/local_ladder", engine.dialect, label=labels, src=source.expr, col=sql.column(h.column))))
    names = [[c[i] for c in chains] for i in range(len(labels))]
    ladder = number(names)
    meaning: dict[int, tuple[int, str]] = {}
    for i, (ids, rung) in enumerate(zip(ladder, names)):
        meaning.update((int(x), (i, name)) for x, name in zip(ids, rung))
    return ladder, [meaning[x] for x in range(len(meaning))]


def _tuples(engine: Engine, table: Table, hierarchies: Sequence[Hierarchy], class_column: str | None
            ) -> tuple[list[tuple], list[tuple]]:
    """The suppressed table's tuples: (keys (labels at L, class), rows (labels at L, published, class, N))."""
    m = len(hierarchies)
    cls = [text(sql.column(class_column))] if class_column else []
    exprs = [text(sql.column(hidden(j))) for j in range(m)] + [text(sql.column(h.column)) for h in hierarchies] + cls
    rows = engine.fetch_all(*sql.render("kanon/local_tuples", engine.dialect, tbl=table.expr,
                                        item=[exp.alias_(e, f"v_{i}") for i, e in enumerate(exprs)],
                                        key=[e.copy() for e in exprs]))
    return [tuple(r[:m]) + ((r[2 * m],) if class_column else (None,)) for r in rows], [tuple(r) for r in rows]


def _coded(tuples: list[tuple], m: int, names: Sequence[list[tuple[int, str]]]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes, final, counts) of the tuples: each label at L coded by its place in the ladder's rung 0."""
    index = [{name: x for x, (rung, name) in enumerate(n) if rung == 0} for n in names]
    codes = np.array([[index[j][t[j]] if t[j] is not None else -1 for j in range(m)] for t in tuples],
                     dtype=np.int64).reshape(len(tuples), m)
    final = np.array([[index[j][t[m + j]] if t[m + j] is not None else -1 for j in range(m)] for t in tuples],
                     dtype=np.int64).reshape(len(tuples), m)
    return codes, final, np.array([int(t[-1]) for t in tuples], dtype=np.int64)


def _items(table: Table, hierarchies: Sequence[Hierarchy], ladders: Sequence[list[np.ndarray]]) -> list[exp.Expr]:
    """The published columns: each QI through kanon/local_cell.sql, the others as they are."""
    qi = {h.column.lower(): j for j, h in enumerate(hierarchies)}
    items: list[exp.Expr] = []
    for c in table.column_names:
        if c.startswith(HIDDEN):
            continue
        j = qi.get(c.lower())
        if j is None:
            items.append(sql.column(c, "t"))
            continue
        label = sql.column(f"g_{j}", "x") if len(ladders[j]) > 1 else sql.column(hidden(j), "t")
        cell = sql.fragment("kanon/local_cell", rung=sql.column(f"r_{j}", "x"), at=sql.column(hidden(j), "t"),
                            label=label, col=sql.column(c, "t"))
        items.append(exp.alias_(cell, sql.ident(c)))
    return items


def _match(m: int, class_column: str | None) -> exp.Expr:
    """t's tuple = x's: each label at L and the class, as text, NULL-safe."""
    pairs = [(text(sql.column(hidden(j), "t")), sql.column(f"y_{j}", "x")) for j in range(m)]
    if class_column:
        pairs.append((text(sql.column(class_column, "t")), sql.column(f"y_{m}", "x")))
    return exp.and_(*(exp.NullSafeEQ(this=a, expression=b) for a, b in pairs))


def check(engine: Engine, report: Report, source: Table, written: Table, hierarchies: Sequence[Hierarchy],
          levels: Sequence[int], class_column: str | None, k: int) -> None:
    """Record the checks of the relabelled output: k and the rows recounted, the labels per QI."""
    d = engine.dialect
    small, rows = engine.fetch_all(*sql.render("kanon/local_classes", d, out=written.expr, k=k,
                                               qi=sql.columns([h.column for h in hierarchies])))[0]
    report.check("k-anonymity after local recoding", int(small) == 0, "kanon/local_classes",
                 f"{int(small)} classes below k = {k}" if small else "")
    total = int(engine.fetch_all(*sql.render("common/row_count", d, tbl=source.expr))[0][0])
    report.check("same rows after local recoding", int(rows) == total, "kanon/local_classes",
                 "" if int(rows) == total else f"{total} -> {int(rows)}")
    cls = text(sql.column(class_column)) if class_column else exp.null()
    bad = []
    for h, level in zip(hierarchies, levels):
        if level == h.top:
            continue
        parts = [sql.subquery("kanon/local_level_labels", "a", label=text(level_expr(h, lv)), cls=cls.copy(),
                              src=source.expr).this for lv in range(level, h.top)]
        union = parts[0] if len(parts) == 1 else exp.union(*parts, distinct=False)
        n = int(engine.fetch_all(*sql.render("kanon/local_outside", d, out=written.expr, col=sql.column(h.column),
                                             cls=cls.copy(), levels=exp.Subquery(
                                                 this=union, alias=exp.TableAlias(this=sql.ident("a")))))[0][0])
        if n:
            bad.append(f"{h.column}: {n} value(s)")
    report.check("values are the source's labels at the chosen level or above", not bad, "kanon/local_outside",
                 "; ".join(bad))
