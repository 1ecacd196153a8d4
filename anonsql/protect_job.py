"""The protect job (Hintoglu 2011): hide confidential cells so that classifiers miss them.

SQL fetches the coded microdata once → the pure algorithms of anonsql.inference decide which
cells to hide → one transaction writes them back set-based (one UPDATE per column), records
`<out>_changes(key, column_name, old_value, new_value)`, and re-checks independently, from
SQL counts over the published table, that every confidential cell is hidden and no longer
predicted. A failed check rolls everything back before the error is raised.

"Delete" (the algorithms' fallback, and the NRD baseline) means what NRD does: every cell of
the tuple except the key becomes NULL; the row stays, so it is reported and never silently
dropped. `delete_rows=True` removes such rows instead.

The -g methods (Chapter 4) generalize instead: cells are rewritten as the label of a taxonomy
node (stored by `taxonomy load`), a column receiving labels is turned into text first, and
the check re-trains the partial-count naive Bayes of Def. 4.1 from SQL counts.
"""

from __future__ import annotations

import csv
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from . import sql, stats
from .catalog import Table, find_table, get_table, output_table
from .engine import Engine
from .errors import AnonsqlError
from .inference import id3, metrics
from .inference.deletion import COIN_KEPT, DELETED, NU, Cell, Problem, SeededChance
from .inference.generalization import GProblem, id3_g_predicts
from .inference.naive_bayes import is_predicted
from .inference.partial_counts import estimate
from .inference.protect import CLASSIFIERS, GENERALIZING, NAMES, suppress_cells, suppress_cells_g
from .inference.taxonomy import Taxonomy
from .taxonomy_job import parse_assignment, read_taxonomies

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
    side_effects: int  # other cells this cell's runs hid (or generalized)
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
    taxonomies: dict[str, str] = field(default_factory=dict)  # column -> stored taxonomy (-g methods)
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
                  in_place: bool = False, replace: bool = False, delete_rows: bool = False,
                  taxonomies: Mapping[str, str] | str | None = None) -> ProtectReport:
    """Validate, decide and write (the body of anonsql.api.protect, on an open engine);
    `taxonomies` (column -> stored taxonomy name, or `attr=name,...`) go with the -g methods."""
    source = get_table(engine, table)
    inp, frame = validate(engine, source, key, method, target=target, rows=rows, cells=cells,
                          predictors=predictors, top_k=top_k)
    assignment = parse_assignment(taxonomies)
    if method not in GENERALIZING:
        if assignment:
            raise AnonsqlError(f"--taxonomy goes with the generalization methods ({', '.join(GENERALIZING)}), "
                               f"not {method}")
        return run_protect(engine, source, inp, frame, method=method, top_k=top_k, seed=seed, out=out,
                           in_place=in_place, replace=replace, delete_rows=delete_rows)
    taxes = validate_taxonomies(engine, source, inp, frame, assignment)
    return run_protect(engine, source, inp, frame, method=method, top_k=top_k, seed=seed, out=out,
                       in_place=in_place, replace=replace, delete_rows=delete_rows, taxonomies=taxes)


def _text(v: Any) -> str:
    """A data value as the text a taxonomy label is matched with: 4, '4' and 4.0 are all '4'
    (an integer column with NULLs reaches pandas as floats)."""
    v = _plain(v)
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def validate_taxonomies(engine: Engine, source: Table, inp: _Input, frame: pd.DataFrame,
                        assignment: Mapping[str, str]) -> dict[str, Taxonomy]:
    """The -g methods' user errors: a taxonomy per target, only for used columns, stored, holding
    every value of its column; each confidential value a leaf below the root."""
    if not assignment:
        raise AnonsqlError("the generalization methods need --taxonomy attr=name,... (at least the target's)")
    named = {source.column(c).name: name for c, name in assignment.items()}
    unused = [c for c in named if c not in inp.columns]
    if unused:
        raise AnonsqlError(f"--taxonomy names column(s) {', '.join(unused)} that are neither a target nor a predictor")
    missing = [t for t in inp.targets if t not in named]
    if missing:
        raise AnonsqlError(f"target column(s) {', '.join(missing)} need a taxonomy (--taxonomy {missing[0]}=name)")
    taxes = read_taxonomies(engine, named)
    for c, tax in taxes.items():
        col = frame.iloc[:, 1 + inp.columns.index(c)]
        tax.check_values(c, list(dict.fromkeys(_text(v) for v in col if not pd.isna(v))))
    for i, c in inp.cells:
        node = taxes[c].index(_text(frame.iloc[i, 1 + inp.columns.index(c)]))
        if taxes[c].children[node] or node == 0:
            raise AnonsqlError(f"cell ({inp.key} = {_plain(frame.iloc[i, 0])}, {c}) holds "
                               f"{taxes[c].labels[node]!r}, not a leaf below the root of taxonomy "
                               f"{taxes[c].name!r}: there is no confidential value to generalize")
    return taxes


def run_protect(engine: Engine, source: Table, inp: _Input, frame: pd.DataFrame, *, method: str, top_k: int,
                seed: int, out: str | None, in_place: bool, replace: bool, delete_rows: bool,
                max_runs: int = 3, taxonomies: dict[str, Taxonomy] | None = None) -> ProtectReport:
    """Decide in memory, then write back and verify in one transaction (see module docstring);
    with `taxonomies` (the -g methods) those columns are coded by taxonomy node."""
    seconds: dict[str, float] = {}
    target, replaced = output_table(engine, source, out, f"{source.name}_protected", replace, in_place)
    changes_name = sql.TableName(f"{target.name}_changes", target.schema)
    changes_existing = find_table(engine, changes_name)
    if changes_existing is not None and not replace:
        raise AnonsqlError(f"changes table {changes_existing} already exists (use --replace to overwrite it)")

    start = time.perf_counter()
    keys = frame.iloc[:, 0].tolist()
    taxes = [None if taxonomies is None else taxonomies.get(c) for c in inp.columns]
    coded = [stats.encode(frame.iloc[:, 1 + j]) if tax is None else _encode_nodes(frame.iloc[:, 1 + j], tax)
             for j, tax in enumerate(taxes)]
    X = np.column_stack([c for c, _ in coded]).astype(np.int64)
    values = [v for _, v in coded]
    col = {c: j for j, c in enumerate(inp.columns)}
    original = X.copy()
    domains, preds = [len(v) for v in values], {col[t]: [col[c] for c in inp.predictors[t]] for t in inp.targets}
    cells = [Cell(i, col[c], int(X[i, col[c]])) for i, c in inp.cells]
    if taxonomies is None:
        results = suppress_cells(Problem(X, domains, preds, k=top_k), cells, method, SeededChance(seed),
                                 max_runs=max_runs)
    else:
        results = suppress_cells_g(GProblem(X, domains, preds, k=top_k, taxonomies=taxes), cells, method,
                                   SeededChance(seed), max_runs=max_runs)
    seconds["algorithm"] = time.perf_counter() - start

    decided = np.argwhere((original != NU) & (X != original))
    deleted_rows = sorted({r.cell.row for r in results if r.status == DELETED})
    extra = [c for c in source.column_names if c != inp.key and c not in col]
    decisions = pd.DataFrame(
        [(keys[i], inp.columns[j], None if X[i, j] == NU else values[j][X[i, j]]) for i, j in decided.tolist()]
        + [(keys[i], c, None) for i in deleted_rows for c in extra],
        columns=["row_key", "column_name", "new_value"])

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
            side_effects=len(set(r.changes) - {(r.cell.row, j)}),  # a cell generalized twice counts once
            next_best_guess=None if r.next_best is None else value(j, r.next_best), runs=r.runs))
    report = ProtectReport(
        table=str(source), out=str(target), changes_table=str(changes_name), in_place=in_place, key=inp.key,
        method=method, top_k=top_k, seed=seed, predictors=inp.predictors, rows=len(keys), cells=reports,
        changed_cells=0, deleted_tuples=len(deleted_rows), rows_removed=delete_rows and bool(deleted_rows),
        taxonomies={c: t.name for c, t in (taxonomies or {}).items()}, seconds=seconds)

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
        removed = [keys[i] for i in deleted_rows] if delete_rows else []
        if taxonomies is None:
            _write_back(engine, source, target, changes_name, inp.key, decisions[["row_key", "column_name"]],
                        removed)
        else:
            _write_back_g(engine, source, target, changes_name, inp.key, decisions, removed)
        seconds["rewrite"] = time.perf_counter() - start

        start = time.perf_counter()
        decided_cells = {(str(k), c) for k, c in zip(decisions["row_key"], decisions["column_name"]) if c in col}
        if taxonomies is None:
            problems = _verify(engine, target, changes_name, inp, values, keys, results, method, decided_cells,
                               deleted_rows, delete_rows, source.column_names)
        else:
            problems = _verify_g(engine, target, changes_name, inp, taxonomies, values, keys, results, method,
                                 decisions, deleted_rows, delete_rows, source.column_names)
        seconds["verify"] = time.perf_counter() - start
        if problems:
            raise AnonsqlError("verification failed, nothing was changed: " + "; ".join(problems))
        changes = engine.fetch_df(*sql.render("protect_changes_list", engine.dialect, changes=changes_name.expr))
        start = time.perf_counter()
        report.metrics = _metrics(engine, before, _distributions(engine, target.expr, published), changes_name,
                                  published, len(keys), len(changes), len(deleted_rows) if delete_rows else 0,
                                  generalized=taxonomies is not None)
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


def _confidential_rows(inp, keys, results, frame, at, deleted_rows, removed, problems):
    """Each confidential cell's (key, column, published row), after the checks both suites
    share: its row is present unless removed, a deleted tuple keeps no value, a removed one
    is gone. Problems found are appended to `problems`."""
    deleted = {str(keys[i]) for i in deleted_rows}
    for r in results:
        k, name = str(keys[r.cell.row]), inp.columns[r.cell.target]
        if k not in at:
            if not (removed and k in deleted):
                problems.append(f"row {inp.key} = {k} is missing")
            continue
        row = frame.iloc[at[k], 1:]
        if k in deleted and not row.isna().all():
            problems.append(f"deleted tuple {inp.key} = {k} still has values")
        yield k, name, row
    if removed and deleted & set(at):
        problems.append("a tuple that had to be deleted is still in the table")


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


def _encode_nodes(series: pd.Series, tax: Taxonomy) -> tuple[np.ndarray, np.ndarray]:
    """A column coded by taxonomy node (ν = -1), with the labels as its value dictionary."""
    codes = np.array([NU if pd.isna(v) else tax.index(_text(v)) for v in series], dtype=np.int64)
    return codes, np.array(tax.labels, dtype=object)


def _write_back_g(engine: Engine, source: Table, out: sql.TableName, changes: sql.TableName, key: str,
                  decisions: pd.DataFrame, removed: list) -> None:
    """The -g write-back: columns receiving labels become text, the old and new values are
    recorded, then one UPDATE per column writes the labels and one the NULLs of deleted tuples."""
    d = engine.dialect
    dec, gone = sql.TableName(DECISIONS).expr, sql.TableName(DELETED_ROWS).expr
    k = sql.column(key)
    engine.execute(*sql.render("protect_changes_table", d, changes=changes.expr, tbl=source.expr, key=k))
    engine.execute(*sql.render("drop_temp_table", d, tbl=dec))
    engine.execute(*sql.render("taxonomy_decisions_table", d, decisions=dec, tbl=source.expr, key=k))
    if len(decisions):
        engine.insert_rows(dec.sql(d), "row_key, column_name, new_value", decisions.astype(object))
    engine.execute(*sql.render("drop_temp_table", d, tbl=gone))
    engine.execute(*sql.render("protect_key_table", d, decisions=gone, tbl=source.expr, key=k))
    if removed:
        engine.insert_rows(gone.sql(d), "row_key, column_name",
                           pd.DataFrame({"row_key": removed, "column_name": None}).astype(object))
    names = list(dict.fromkeys(decisions["column_name"]))
    labelled = set(decisions.loc[decisions["new_value"].notna(), "column_name"])
    for name in names:
        if name in labelled and source.column(name).kind != "text":
            engine.execute(*sql.render("taxonomy_column_text", d, out=out.expr, col=sql.ident(name)))
        engine.execute(*sql.render("taxonomy_record_changes", d, changes=changes.expr, out=out.expr,
                                   decisions=dec, key=k, col=sql.column(name), col_name=name))
    for name in names:
        for update in ("taxonomy_generalize_cells", "taxonomy_null_cells"):
            engine.execute(*sql.render(update, d, out=out.expr, decisions=dec, key=k, col=sql.ident(name),
                                       col_name=name))
    if removed:
        engine.execute(*sql.render("protect_delete_rows", d, out=out.expr, deleted=gone, key=k))
    for tbl in (dec, gone):
        engine.execute(*sql.render("drop_temp_table", d, tbl=tbl))


def _verify_g(engine: Engine, out: sql.TableName, changes: sql.TableName, inp: _Input,
              taxonomies: dict[str, Taxonomy], values: list[np.ndarray], keys: list, results: list, method: str,
              decisions: pd.DataFrame, deleted_rows: list[int], removed: bool, all_columns: list[str]) -> list[str]:
    """The -g check, from SQL over the written table: the changes table lists exactly the
    decided cells, each written cell holds its new value, a label is a strict ancestor of
    the old value, every confidential cell is generalized (or its tuple deleted), and the
    partial-count naive Bayes of Def. 4.1 re-trained from SQL counts (HID3-G: the ID3 tree
    re-trained on the table read back) misses it."""
    d, problems = engine.dialect, []
    published = [c for c in all_columns if c != inp.key]
    text, params = sql.render("protect_rows", d, tbl=out.expr, key=sql.column(inp.key), col=sql.columns(published))
    frame = engine.fetch_df(text, params)
    at = {str(v): i for i, v in enumerate(frame.iloc[:, 0].tolist())}
    listed = engine.fetch_df(*sql.render("protect_changes_list", d, changes=changes.expr))
    change = {(str(k), c): (o, None if pd.isna(n) else n)
              for k, c, o, n in zip(listed["key"], listed["column_name"], listed["old_value"], listed["new_value"])}
    decided = {(str(k), c) for k, c in zip(decisions["row_key"], decisions["column_name"])}
    if decided != set(change):
        problems.append(f"the changes table lists {len(set(change) ^ decided)} cell(s) other than the decided ones")
    for (k, c), (old, new) in change.items():
        if k not in at:
            continue
        now = frame.iloc[at[k]][c]
        if (None if pd.isna(now) else _text(now)) != new:
            problems.append(f"cell ({inp.key} = {k}, {c}) holds {_plain(now)!r}, not {new!r}")
        elif new is not None:
            tax = taxonomies.get(c)
            if tax is None or tax.find(new) is None or tax.find(old) is None \
                    or not tax.is_descendant(tax.index(old), tax.index(new)):
                problems.append(f"cell ({inp.key} = {k}, {c}): {new!r} is not a generalization of its value")
    for k, name, row in _confidential_rows(inp, keys, results, frame, at, deleted_rows, removed, problems):
        if (k, name) not in change:
            problems.append(f"cell ({inp.key} = {k}, {name}) is not generalized")
    checked = [r for r in results if r.status not in (COIN_KEPT, DELETED)]
    if "id3" in CLASSIFIERS[method]:
        taxes = [taxonomies.get(c) for c in inp.columns]
        codes = [None if tax else {_text(v): n for n, v in enumerate(values[j])} for j, tax in enumerate(taxes)]
        Xo = np.column_stack([[NU if pd.isna(v) else (tax.index(_text(v)) if tax else codes[j][_text(v)])
                               for v in frame[c]] for j, (c, tax) in enumerate(zip(inp.columns, taxes))])
        for r in checked:
            k, t = str(keys[r.cell.row]), r.cell.target
            view = GProblem(Xo, [len(v) for v in values], {t: [inp.columns.index(c) for c in
                                                               inp.predictors[inp.columns[t]]]}, taxonomies=taxes)
            if id3_g_predicts(view, Cell(at[k], t, r.cell.value)):
                problems.append(f"ID3 still predicts cell ({inp.key} = {k}, {inp.columns[t]})")
    for t in {inp.columns[r.cell.target] for r in checked} if "nb" in CLASSIFIERS[method] else ():
        scorer = _sql_naive_bayes_g(engine, out, t, inp.predictors[t], taxonomies)
        for r in (r for r in checked if inp.columns[r.cell.target] == t):
            k = str(keys[r.cell.row])
            scores = scorer(frame.iloc[at[k]])
            truth = change[(k, t)][0] if (k, t) in change else None
            if truth in scores and all(scores[truth] > x for v, x in scores.items() if v != truth):
                problems.append(f"naive Bayes still predicts cell ({inp.key} = {k}, {t})")
    return problems


def _sql_naive_bayes_g(engine: Engine, tbl: sql.TableName, target: str, predictors: list[str],
                       taxonomies: dict[str, Taxonomy]):
    """Def. 4.1 from SQL GROUP BY counts on the published table: tuple -> {candidate label:
    p(v|d)}, the candidates being the leaves under the tuple's generalized target, class and
    predictor counts estimated with partially specified values (Section 4.1.1)."""
    text, params = sql.render("protect_nb_counts", engine.dialect, tbl=tbl.expr, attr=sql.columns(predictors),
                              cls=sql.column(target))
    df = engine.fetch_df(text, params)
    m, tax = len(predictors), taxonomies[target]
    pair: dict[tuple[int, str], dict[str, int]] = {}
    totals = [0] * len(tax)
    for row in df.itertuples(index=False):
        j = next(j for j in range(m) if row[j] == 0)
        c, n = tax.index(_text(row[2 * m])), int(row[2 * m + 1])
        if j == 0:
            totals[c] += n
        if not pd.isna(row[m + j]):
            pair.setdefault((j, tax.labels[c]), {})[_text(row[m + j])] = n

    def score(tuple_: pd.Series) -> dict[str, Fraction]:
        g = tax.index(_text(tuple_[target]))
        own = list(totals)
        own[g] -= 1  # the tuple itself: D - d_i
        nodes = tax.subtree(g)
        n = sum(own[x] for x in nodes)
        classes = estimate(tax, own, root=g)
        out = {}
        for v in tax.leaves_under(g):
            label, total = tax.labels[v], classes[v]
            p = total / n if n else Fraction(0)
            for j, a in enumerate(predictors):
                if pd.isna(tuple_[a]) or not p:
                    continue
                x, seen = _text(tuple_[a]), pair.get((j, label), {})
                ta = taxonomies.get(a)
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
    for k, name, row in _confidential_rows(inp, keys, results, frame, at, deleted_rows, removed, problems):
        if not pd.isna(row[name]):
            problems.append(f"cell ({inp.key} = {k}, {name}) is not hidden")
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


def _as_text(dist: tuple[list[dict], dict]) -> tuple[list[dict], dict]:
    """Distributions keyed by value text (None stays ν): a generalized column turned into text
    must still match its source's values."""
    single, joint = dist
    t = lambda v: None if v is None else _text(v)  # noqa: E731
    return ([{t(v): n for v, n in d.items()} for d in single],
            {q: {(t(a), t(b)): n for (a, b), n in d.items()} for q, d in joint.items()})


def _metrics(engine: Engine, before, after, changes: sql.TableName, cols: list[str], m: int,
             direct: int, removed: int, generalized: bool = False) -> dict[str, float | None]:
    """Section 2.4: DD (eq. 2.7), SKLD (2.9), ACMI (2.11), SCE (2.13). A removed row's cells
    count as ν, as in the NRD deletion they stand for. `generalized`: values compare as text
    and a label L contributes -Σ_v p(v, L) log p(v|L) to SCE, its unchanged cells included."""
    if generalized:
        before, after = _as_text(before), _as_text(after)
    (b1, b2), (a1, a2) = before, after
    known = [{v: n for v, n in d.items() if v is not None} for d in b1]
    known_after = [{v: n for v, n in d.items() if v is not None} for d in a1]
    skld = sum(metrics.kl_distance(b, a, m) for b, a in zip(known, known_after))
    acmi = None
    if len(cols) > 1:
        mi_b = [metrics.mutual_information(b2[q], known[q[0]], known[q[1]], m) for q in b2]
        mi_a = [metrics.mutual_information(a2[q], known_after[q[0]], known_after[q[1]], m) for q in b2]
        acmi = metrics.average_change_in_mi(mi_b, mi_a, len(cols))
    if generalized:
        sce = _generalized_entropy(engine, changes, cols, a1, m, removed)
    else:
        hidden: dict[str, dict] = {}
        for name, old, n in engine.fetch_all(*sql.render("protect_change_counts", engine.dialect,
                                                         changes=changes.expr)):
            hidden.setdefault(name, {})[old] = int(n)
        sce = sum(metrics.conditional_entropy(hidden.get(c, {}), a1[j].get(None, 0) + removed, m)
                  for j, c in enumerate(cols))
    return {"direct_distance": direct, "sum_kl_distance": skld, "avg_change_mutual_information": acmi,
            "sum_conditional_entropy": sce}


def _generalized_entropy(engine: Engine, changes: sql.TableName, cols: list[str], after: list[dict], m: int,
                         removed: int) -> float:
    """SCE (eq. 2.13) when cells become labels or ν: for each published value L reached by a
    change, the joint counts (v, L) from the changes table plus L's unchanged cells (none for
    ν, as in the deletion path), over L's count in the output."""
    into: dict[tuple[str, Any], dict] = {}
    for name, old, new, n in engine.fetch_all(*sql.render("taxonomy_change_counts", engine.dialect,
                                                          changes=changes.expr)):
        into.setdefault((name, None if new is None else new), {})[old] = int(n)
    total = 0.0
    for (name, new), joint in into.items():
        j = cols.index(name)
        if new is None:
            total += metrics.conditional_entropy(joint, after[j].get(None, 0) + removed, m)
            continue
        kept = after[j].get(new, 0) - sum(joint.values())
        total += metrics.conditional_entropy({**joint, ("kept", new): kept}, after[j].get(new, 0), m)
    return total
