"""The protect job (Hintoglu 2011): hide confidential cells so that classifiers miss them.

SQL fetches the coded microdata once → the pure algorithms of anonsql.inference decide which
cells to hide → one transaction writes them back set-based (one UPDATE per column), records
`<out>_changes(key, column_name, old_value, new_value)`, and re-checks independently, from
SQL counts over the published table, that every confidential cell is hidden and no longer
predicted. A failed check rolls everything back before the error is raised.

"Delete" (the algorithms' fallback, and the NRD baseline) means what NRD does: every cell of
the tuple except the key becomes NULL; the row stays, so it is reported and never silently
dropped. `delete_rows=True` removes such rows instead.
"""

from __future__ import annotations

import csv
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import sql, stats
from .catalog import Table, find_table, get_table
from .engine import Engine
from .errors import AnonsqlError
from .inference import id3, metrics
from .inference.deletion import COIN_KEPT, DELETED, NU, Cell, Problem, SeededChance
from .inference.naive_bayes import is_predicted
from .inference.protect import CLASSIFIERS, NAMES, suppress_cells

DECISIONS = "anonsql_protect_decisions"
DELETED_ROWS = "anonsql_protect_deleted"


@dataclass
class CellReport:
    key: Any
    column: str
    status: str  # suppressed | not_needed | coin_kept | deleted
    suppressed: bool  # hidden and no longer predicted, the tuple kept
    deleted: bool
    # classifier -> its most probable value(s) for the cell (several = a tie, not a prediction),
    # before: with all confidential cells hidden, after: on the published table
    prediction_before: dict[str, list[Any]]
    prediction_after: dict[str, list[Any]]
    side_effects: int  # other cells this cell's runs hid
    next_best_guess: Any = None
    runs: int = 0


@dataclass
class ProtectReport:
    table: str
    out: str
    changes_table: str
    in_place: bool
    key: str
    method: str
    top_k: int
    seed: int
    predictors: dict[str, list[str]]
    rows: int
    cells: list[CellReport]
    changed_cells: int  # rows of the changes table: the direct distance (Def. 2.6)
    deleted_tuples: int
    rows_removed: bool
    verified: bool = False
    # Section 2.4 between source and output: direct_distance, sum_kl_distance,
    # avg_change_mutual_information, sum_conditional_entropy (counts from SQL)
    metrics: dict[str, float | None] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_cells_csv(path: str) -> list[tuple[str, str]]:
    """(row key, column) pairs from a CSV with header `key,column` (or any two columns)."""
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(x.strip() for x in r)]
    except OSError as exc:
        raise AnonsqlError(f"cannot read cells file {path}: {exc.strerror}") from None
    if rows and [x.strip().lower() for x in rows[0]][:2] == ["key", "column"]:
        rows = rows[1:]
    if not rows or any(len(r) != 2 for r in rows):
        raise AnonsqlError(f"cells file {path} must list 'key,column' pairs, one per line")
    return [(r[0].strip(), r[1].strip()) for r in rows]


@dataclass
class _Input:
    """Validated input: the key, the coded columns and the confidential cells."""

    key: str
    columns: list[str]  # coded columns (targets and predictors), table order
    targets: list[str]
    predictors: dict[str, list[str]]
    cells: list[tuple[int, str]]  # (row index, column)


def validate(engine: Engine, source: Table, key: str, method: str, *, target: str | None,
             rows: Sequence[str] | None, cells: Sequence[tuple[str, str]] | None,
             predictors: Sequence[str] | None, top_k: int) -> tuple[_Input, pd.DataFrame]:
    """Every user error of a protect run, before anything is written."""
    if method not in NAMES:
        raise AnonsqlError(f"unknown method {method!r}; choose one of {', '.join(NAMES)}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 2:
        raise AnonsqlError(f"--top-k must be an integer >= 2, got {top_k!r}")
    key = source.column(key).name
    text, params = sql.render("protect_key_check", engine.dialect, tbl=source.expr, key=sql.column(key))
    n, known, distinct = engine.fetch_all(text, params)[0]
    if n == 0:
        raise AnonsqlError(f"table {source} is empty")
    if known != n or distinct != n:
        raise AnonsqlError(f"key column '{key}' does not identify rows: {n - known} NULL key(s), "
                           f"{known - distinct} duplicate key(s)")
    if (cells is None) == (rows is None):
        raise AnonsqlError("name the confidential cells with --target and --rows, or with --cells")
    if rows is not None:
        if target is None:
            raise AnonsqlError("--rows needs --target (the column whose values are confidential)")
        pairs = [(str(r), target) for r in rows]
    else:
        if target is not None:
            raise AnonsqlError("--target goes with --rows; --cells names the column of each cell")
        pairs = [(str(k), c) for k, c in cells]
    if not pairs:
        raise AnonsqlError("no confidential cell given")
    pairs = [(k, source.column(c).name) for k, c in pairs]
    targets = list(dict.fromkeys(c for _, c in pairs))
    if key in targets:
        raise AnonsqlError(f"the key column '{key}' cannot be a confidential target")
    others = [c for c in source.column_names if c != key]
    if predictors:
        chosen = source.resolve(predictors)
        if key in chosen:
            raise AnonsqlError(f"the key column '{key}' cannot be a predictor")
        clash = [t for t in targets if t in chosen]
        if clash:
            raise AnonsqlError(f"target column(s) {', '.join(clash)} also listed as predictors")
        preds = {t: chosen for t in targets}
    else:
        preds = {t: [c for c in others if c != t] for t in targets}
    empty = [t for t in targets if not preds[t]]
    if empty:
        raise AnonsqlError(f"no predictor column left for target(s) {', '.join(empty)}")
    columns = [c for c in others if c in targets or any(c in p for p in preds.values())]
    text, params = sql.render("protect_rows", engine.dialect, tbl=source.expr, key=sql.column(key),
                              col=sql.columns(columns))
    frame = engine.fetch_df(text, params)
    frame = frame.sort_values(frame.columns[0], kind="stable").reset_index(drop=True)
    index = {str(v): i for i, v in enumerate(frame.iloc[:, 0].tolist())}
    found: list[tuple[int, str]] = []
    for k, c in pairs:
        if k not in index:
            raise AnonsqlError(f"no row with {key} = {k} in table {source}")
        i = index[k]
        if pd.isna(frame.iloc[i, 1 + columns.index(c)]):
            raise AnonsqlError(f"cell ({key} = {k}, {c}) is already NULL: there is no value to protect")
        if (i, c) in found:
            raise AnonsqlError(f"cell ({key} = {k}, {c}) listed twice")
        found.append((i, c))
    return _Input(key, columns, targets, preds, found), frame


def protect_table(engine: Engine, table: str, key: str, *, method: str = "dropp", target: str | None = None,
                  rows: Sequence[str] | None = None, cells: Sequence[tuple[str, str]] | None = None,
                  predictors: Sequence[str] | None = None, top_k: int = 2, seed: int = 0, out: str | None = None,
                  in_place: bool = False, replace: bool = False, delete_rows: bool = False) -> ProtectReport:
    """Validate, decide and write (the body of anonsql.api.protect, on an open engine)."""
    source = get_table(engine, table)
    inp, frame = validate(engine, source, key, method, target=target, rows=rows, cells=cells,
                          predictors=predictors, top_k=top_k)
    return run_protect(engine, source, inp, frame, method=method, top_k=top_k, seed=seed, out=out,
                       in_place=in_place, replace=replace, delete_rows=delete_rows)


def run_protect(engine: Engine, source: Table, inp: _Input, frame: pd.DataFrame, *, method: str, top_k: int,
                seed: int, out: str | None, in_place: bool, replace: bool, delete_rows: bool,
                max_runs: int = 3) -> ProtectReport:
    """Decide in memory, then write back and verify in one transaction (see module docstring)."""
    seconds: dict[str, float] = {}
    target, replaced = _output(engine, source, out, in_place, replace)
    changes_name = sql.TableName(f"{target.name}_changes", target.schema)
    changes_existing = find_table(engine, changes_name)
    if changes_existing is not None and not replace:
        raise AnonsqlError(f"changes table {changes_existing} already exists (use --replace to overwrite it)")

    start = time.perf_counter()
    keys = frame.iloc[:, 0].tolist()
    coded = [stats.encode(frame.iloc[:, 1 + j]) for j in range(len(inp.columns))]
    X = np.column_stack([c for c, _ in coded]).astype(np.int64)
    values = [v for _, v in coded]
    col = {c: j for j, c in enumerate(inp.columns)}
    original = X.copy()
    problem = Problem(X, [len(v) for v in values], {col[t]: [col[c] for c in inp.predictors[t]] for t in inp.targets},
                      k=top_k)
    cells = [Cell(i, col[c], int(X[i, col[c]])) for i, c in inp.cells]
    results = suppress_cells(problem, cells, method, SeededChance(seed), max_runs=max_runs)
    seconds["algorithm"] = time.perf_counter() - start

    decided = np.argwhere((original != NU) & (X == NU))
    deleted_rows = sorted({r.cell.row for r in results if r.status == DELETED})
    extra = [c for c in source.column_names if c != inp.key and c not in col]
    decisions = pd.DataFrame(
        [(keys[i], inp.columns[j]) for i, j in decided.tolist()] + [(keys[i], c) for i in deleted_rows for c in extra],
        columns=["row_key", "column_name"])

    def value(j: int, code: int) -> Any:
        return None if code == NU else _plain(values[j][code])

    reports = []
    for r in results:
        j = r.cell.target
        reports.append(CellReport(
            key=_plain(keys[r.cell.row]), column=inp.columns[j], status=r.status,
            suppressed=r.status not in (COIN_KEPT, DELETED), deleted=r.status == DELETED,
            prediction_before={c: [value(j, x) for x in v] for c, v in r.before.items()},
            prediction_after={c: [value(j, x) for x in v] for c, v in r.after.items()},
            side_effects=sum(1 for c in r.changes if c != (r.cell.row, j)),
            next_best_guess=None if r.next_best is None else value(j, r.next_best), runs=r.runs))
    report = ProtectReport(
        table=str(source), out=str(target), changes_table=str(changes_name), in_place=in_place, key=inp.key,
        method=method, top_k=top_k, seed=seed, predictors=inp.predictors, rows=len(keys), cells=reports,
        changed_cells=0, deleted_tuples=len(deleted_rows), rows_removed=delete_rows and bool(deleted_rows),
        seconds=seconds)

    with engine.transaction():
        start = time.perf_counter()
        if replaced is not None:
            engine.execute(*sql.render("drop_table", engine.dialect, tbl=replaced.expr))
        if changes_existing is not None:
            engine.execute(*sql.render("drop_table", engine.dialect, tbl=changes_existing.expr))
        published = [c for c in source.column_names if c != inp.key]
        before = _distributions(engine, source.expr, published)
        if not in_place:
            engine.execute(*sql.render("copy_table", engine.dialect, out=target.expr, src=source.expr))
        _write_back(engine, source, target, changes_name, inp.key, decisions,
                    [keys[i] for i in deleted_rows] if delete_rows else [])
        seconds["rewrite"] = time.perf_counter() - start

        start = time.perf_counter()
        decided_cells = {(str(k), c) for k, c in zip(decisions["row_key"], decisions["column_name"]) if c in col}
        problems = _verify(engine, target, changes_name, inp, values, keys, results, method, decided_cells,
                           deleted_rows, delete_rows, source.column_names)
        seconds["verify"] = time.perf_counter() - start
        if problems:
            raise AnonsqlError("verification failed, nothing was changed: " + "; ".join(problems))
        changes = engine.fetch_df(*sql.render("protect_changes_list", engine.dialect, changes=changes_name.expr))
        start = time.perf_counter()
        report.metrics = _metrics(engine, before, _distributions(engine, target.expr, published), changes_name,
                                  published, len(keys), len(changes), len(deleted_rows) if delete_rows else 0)
        seconds["metrics"] = time.perf_counter() - start
    report.verified = True
    report.changed_cells = len(changes)
    report.changes = [{k: _plain(v) for k, v in row.items()} for row in changes.to_dict("records")]
    return report


def _plain(v: Any) -> Any:
    """JSON-friendly Python scalars (numpy and pandas NA become int/float/None)."""
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    return v.item() if isinstance(v, np.generic) else v


def _output(engine: Engine, source: Table, out: str | None, in_place: bool,
            replace: bool) -> tuple[sql.TableName, Table | None]:
    """The output table (default <table>_protected beside the source) and what it replaces."""
    if in_place:
        if out:
            raise AnonsqlError("--out and --in-place exclude each other")
        return sql.TableName(source.name, source.schema if source.qualified else None), None
    ref = sql.TableName.parse(out) if out else sql.TableName(f"{source.name}_protected",
                                                             source.schema if source.qualified else None)
    existing = find_table(engine, ref)
    if existing is not None and (existing.schema, existing.name) == (source.schema, source.name):
        raise AnonsqlError(f"--out names the source table {source}; use --in-place to rewrite it")
    if existing is not None and not replace:
        raise AnonsqlError(f"output table {existing} already exists (use --replace to overwrite it)")
    return ref, existing


def _write_back(engine: Engine, source: Table, out: sql.TableName, changes: sql.TableName, key: str,
                decisions: pd.DataFrame, removed: list) -> None:
    """Record the old values, then NULL the decided cells: one UPDATE per column."""
    d = engine.dialect
    dec, gone = sql.TableName(DECISIONS).expr, sql.TableName(DELETED_ROWS).expr
    k = sql.column(key)
    engine.execute(*sql.render("protect_changes_table", d, changes=changes.expr, tbl=source.expr, key=k))
    for tbl, frame in ((dec, decisions), (gone, pd.DataFrame({"row_key": removed, "column_name": None}))):
        engine.execute(*sql.render("drop_temp_table", d, tbl=tbl))
        engine.execute(*sql.render("protect_key_table", d, decisions=tbl, tbl=source.expr, key=k))
        if len(frame):
            engine.insert_rows(tbl.sql(d), "row_key, column_name", frame.astype(object))
    names = list(dict.fromkeys(decisions["column_name"]))
    for name in names:
        engine.execute(*sql.render("protect_record_changes", d, changes=changes.expr, out=out.expr,
                                   decisions=dec, key=k, col=sql.column(name), col_name=name))
    for name in names:
        engine.execute(*sql.render("protect_null_cells", d, out=out.expr, decisions=dec, key=k,
                                   col=sql.ident(name), col_name=name))
    if removed:
        engine.execute(*sql.render("protect_delete_rows", d, out=out.expr, deleted=gone, key=k))
    for tbl in (dec, gone):
        engine.execute(*sql.render("drop_temp_table", d, tbl=tbl))


def _verify(engine: Engine, out: sql.TableName, changes: sql.TableName, inp: _Input, values: list[np.ndarray],
            keys: list, results: list, method: str, decided: set[tuple[str, str]], deleted_rows: list[int], removed: bool,
            all_columns: list[str]) -> list[str]:
    """The independent check, from SQL over the written table (not the algorithm's arrays)."""
    d, problems = engine.dialect, []
    published = [c for c in all_columns if c != inp.key]
    text, params = sql.render("protect_rows", d, tbl=out.expr, key=sql.column(inp.key), col=sql.columns(published))
    frame = engine.fetch_df(text, params)
    at = {str(v): i for i, v in enumerate(frame.iloc[:, 0].tolist())}
    listed = engine.fetch_df(*sql.render("protect_changes_list", d, changes=changes.expr))
    pairs = {(str(k), c) for k, c in zip(listed["key"], listed["column_name"])}
    if not decided <= pairs:
        problems.append(f"{len(decided - pairs)} decided cell(s) missing from the changes table")
    for k, c in pairs:
        if k in at and not pd.isna(frame.iloc[at[k]][c]):
            problems.append(f"changes table lists ({inp.key} = {k}, {c}) but the cell is not NULL")
    deleted = {str(keys[i]) for i in deleted_rows}
    for r in results:
        k, name = str(keys[r.cell.row]), inp.columns[r.cell.target]
        if k not in at:
            if not (removed and k in deleted):
                problems.append(f"row {inp.key} = {k} is missing")
            continue
        row = frame.iloc[at[k], 1:]
        if not pd.isna(row[name]):
            problems.append(f"cell ({inp.key} = {k}, {name}) is not hidden")
        if k in deleted and not row.isna().all():
            problems.append(f"deleted tuple {inp.key} = {k} still has values")
    if removed and deleted & set(at):
        problems.append("a tuple that had to be deleted is still in the table")
    checked = [r for r in results if r.status not in (COIN_KEPT, DELETED)]
    if "nb" in CLASSIFIERS[method]:
        for t in {r.cell.target for r in checked}:
            scorer = _sql_naive_bayes(engine, out, inp.columns[t], inp.predictors[inp.columns[t]])
            for r in (r for r in checked if r.cell.target == t):
                k = str(keys[r.cell.row])
                scores = scorer(frame.iloc[at[k]])
                truth = values[t][r.cell.value]
                if truth in scores and is_predicted(list(scores.values()), list(scores).index(truth)):
                    problems.append(f"naive Bayes still predicts cell ({inp.key} = {k}, {inp.columns[t]})")
    if "id3" in CLASSIFIERS[method]:
        codes = {c: {v: i for i, v in enumerate(values[j])} for j, c in enumerate(inp.columns)}
        Xo = np.column_stack([[NU if pd.isna(v) else codes[c][v] for v in frame[c]] for c in inp.columns])
        domains = [len(v) for v in values]
        for r in checked:
            k, name = str(keys[r.cell.row]), inp.columns[r.cell.target]
            preds = [inp.columns.index(c) for c in inp.predictors[name]]
            tree = id3.train(Xo, at[k], r.cell.target, preds, domains)
            if tree.predict(Xo[at[k]]) == r.cell.value:
                problems.append(f"ID3 still predicts cell ({inp.key} = {k}, {name})")
    return problems


def _sql_naive_bayes(engine: Engine, tbl: sql.TableName, target: str, predictors: list[str]):
    """NB of Def. 2.2 from SQL GROUP BY counts on the published table, with the thesis's
    conventions; returns tuple -> {class value: p(v|d)} (d_i's own target is NULL, so the
    training set is D - d_i)."""
    text, params = sql.render("protect_nb_counts", engine.dialect, tbl=tbl.expr, attr=sql.columns(predictors),
                              cls=sql.column(target))
    df = engine.fetch_df(text, params)
    m = len(predictors)
    pair: dict[tuple[int, Any, Any], int] = {}
    totals: dict[Any, int] = {}
    for row in df.itertuples(index=False):
        j = next(j for j in range(m) if row[j] == 0)
        c, n = row[2 * m], int(row[2 * m + 1])
        if j == 0:
            totals[c] = totals.get(c, 0) + n
        if not pd.isna(row[m + j]):
            pair[(j, row[m + j], c)] = n
    size = sum(totals.values())

    def score(tuple_: pd.Series) -> dict[Any, Fraction]:
        out = {}
        for c, total in sorted(totals.items(), key=lambda kv: str(kv[0])):
            p = Fraction(total, size)
            for j, a in enumerate(predictors):
                if not pd.isna(tuple_[a]):
                    p *= Fraction(pair.get((j, tuple_[a], c), 0), total)
            out[c] = p
        return out

    return score


def _distributions(engine: Engine, tbl, cols: list[str]) -> tuple[list[dict], dict[tuple[int, int], dict]]:
    """First-order counts per attribute (None = ν) and joint counts of non-ν pairs, by SQL."""
    m = len(cols)
    df = engine.fetch_df(*sql.render("protect_value_counts", engine.dialect, tbl=tbl, attr=sql.columns(cols)))
    single: list[dict] = [{} for _ in cols]
    for row in df.itertuples(index=False):
        j = next(j for j in range(m) if row[j] == 0)
        single[j][None if pd.isna(row[m + j]) else row[m + j]] = int(row[2 * m])
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    joint: dict[tuple[int, int], dict] = {q: {} for q in pairs}
    if pairs:
        P = len(pairs)
        text, params = sql.render("protect_pair_counts", engine.dialect, tbl=tbl,
                                  a=sql.columns([cols[i] for i, _ in pairs]), b=sql.columns([cols[j] for _, j in pairs]))
        for row in engine.fetch_df(text, params).itertuples(index=False):
            q = next(q for q in range(P) if row[q] == 0 and row[P + q] == 0)
            a, b = row[2 * P + q], row[3 * P + q]
            if not (pd.isna(a) or pd.isna(b)):
                joint[pairs[q]][(a, b)] = int(row[4 * P])
    return single, joint


def _metrics(engine: Engine, before, after, changes: sql.TableName, cols: list[str], m: int,
             direct: int, removed: int) -> dict[str, float | None]:
    """Section 2.4: DD (eq. 2.7), SKLD (2.9), ACMI (2.11), SCE (2.13). A removed row's cells
    count as ν, as in the NRD deletion they stand for."""
    (b1, b2), (a1, a2) = before, after
    known = [{v: n for v, n in d.items() if v is not None} for d in b1]
    known_after = [{v: n for v, n in d.items() if v is not None} for d in a1]
    skld = sum(metrics.kl_distance(b, a, m) for b, a in zip(known, known_after))
    acmi = None
    if len(cols) > 1:
        mi_b = [metrics.mutual_information(b2[q], known[q[0]], known[q[1]], m) for q in b2]
        mi_a = [metrics.mutual_information(a2[q], known_after[q[0]], known_after[q[1]], m) for q in b2]
        acmi = metrics.average_change_in_mi(mi_b, mi_a, len(cols))
    hidden: dict[str, dict] = {}
    for name, old, n in engine.fetch_all(*sql.render("protect_change_counts", engine.dialect, changes=changes.expr)):
        hidden.setdefault(name, {})[old] = int(n)
    sce = sum(metrics.conditional_entropy(hidden.get(c, {}), a1[j].get(None, 0) + removed, m) for j, c in enumerate(cols))
    return {"direct_distance": direct, "sum_kl_distance": skld, "avg_change_mutual_information": acmi,
            "sum_conditional_entropy": sce}
