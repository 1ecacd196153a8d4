"""The protect job (Hintoglu 2011): hide confidential cells so that classifiers miss them.

One transaction: read the coded microdata by SQL -> the pure algorithms decide which cells to
hide (or, for the -g methods, generalize along a stored taxonomy) -> write them back set-based
with `<out>_changes(key, column_name, old_value, new_value)` -> re-check independently by SQL
-> report. A failed check raises VerificationError inside the transaction: nothing is left.

"Delete" (the algorithms' fallback, and the NRD baseline) means what NRD does: every cell of
the tuple except the key becomes NULL; the row stays, so it is reported and never silently
dropped. `delete_rows=True` removes such rows instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .. import identifiers, sql
from ..catalog import Table, exact_text, find_table, get_table, in_place_run, output_table, staged_outputs
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, save, silent
from ..rewrite import Script
from ..verify import k_anonymity
from . import keep_k, metrics, rewrite, stats, verify
from .deletion import COIN_KEPT, DELETED, NU, Cell, Microdata, SeededChance
from .generalization import GeneralizedMicrodata
from .request import ProtectionInput, fetched_rows, resolve
from .suppress import CellResult, protect_cells

if TYPE_CHECKING:
    import pyarrow as pa

#: A cell still predicted after this many runs of its method is deleted (the thesis's fallback).
MAX_RUNS = 3


@dataclass
class ProtectedCell:
    """One confidential cell's outcome. The predictions are value lists (several = a tie, which is
    no prediction): before, with every confidential cell hidden; after, on the published table.
    They hold the ORIGINAL value when it was predicted, so they stay out of the text summary."""

    key: Any
    column: str
    status: str  # suppressed | not_needed | coin_kept | deleted
    suppressed: bool  # hidden (or generalized) and no longer predicted, the tuple kept
    deleted: bool
    prediction_before: dict[str, list[Any]]
    prediction_after: dict[str, list[Any]]
    side_effects: int  # other cells this cell's runs hid (or generalized)
    #: the classifiers whose one prediction before was the cell's TRUE value (a hit, not a guess)
    predicted_true: list[str] = field(default_factory=list)
    next_best_guess: Any = None
    runs: int = 0


@dataclass(kw_only=True)
class ProtectReport(Report):
    """A protect run: the cells, the changes (Def. 2.6's direct distance), Section 2.4's metrics."""

    #: Row keys, predictions and original values: never in a public artefact (Report.public_dict).
    PRIVATE = ("cells", "changes")
    PROTECTS: ClassVar[str] = ("predicting the hidden confidential cells from the rest of their rows with a "
                               "classifier trained on the table (naive Bayes, ID3; Hintoglu 2011)")

    changes_table: str
    in_place: bool
    key: str
    method: str
    top_k: int | None  # None: the next best guess is drawn among every admissible value
    seed: int
    attrs: dict[str, list[str]]
    rows: int
    cells: list[ProtectedCell] = field(default_factory=list)
    changed_cells: int = 0  # rows of the changes table: the direct distance (Def. 2.6)
    deleted_tuples: int = 0
    rows_removed: bool = False
    taxonomies: dict[str, str] = field(default_factory=dict)  # column -> stored taxonomy (-g methods)
    # Section 2.4 between source and output: direct_distance, sum_kl_distance,
    # avg_change_mutual_information, sum_conditional_entropy (counts from SQL)
    metrics: dict[str, float | None] = field(default_factory=dict)
    # the changes table's rows: ORIGINAL values included (JSON only, keep it private)
    changes: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # --drop
    pseudonymized: list[str] = field(default_factory=list)  # --pseudonymize (keyed HMAC-SHA256)
    qi: list[str] = field(default_factory=list)  # --qi: the quasi-identifiers whose k-anonymity is kept or watched
    k: int | None = None  # --k: the output is k-anonymous over qi (checked); None: only watched
    input_k: int | None = None  # the k the input had over qi (its smallest equivalence class)
    k_cells: int = 0  # QI cells hidden beyond the method's to keep k-anonymity (kanon's MAR cost)
    #: not a field (so not in the JSON): --show-values, the summary then prints hidden cells' original values
    show_values = False

    def lines(self) -> list[str]:
        done = "generalized" if self.taxonomies else "hidden"
        shown = self.changes if self.show_values else []
        original = {(str(ch["key"]), ch["column_name"]): ch["old_value"] for ch in shown}
        lines = [f"protected {len(self.cells)} confidential cell(s) of {self.table} -> {self.out} "
                 f"(method {self.method}, next best guess among "
                 f"{'all admissible values' if self.top_k is None else f'the top {self.top_k}'}, seed {self.seed}); "
                 f"original values of changed cells in {self.changes_table} (private)"]
        for c in self.cells:
            wrong = [k for k, v in c.prediction_before.items() if len(v) == 1 and k not in c.predicted_true]
            was = ", ".join(c.predicted_true) or "no classifier"
            if wrong:
                was += f" ({', '.join(wrong)} predicted another value)"
            value = original.get((str(c.key), c.column))
            status = c.status.replace("_", " ") + ("" if value is None else f" (original value {value!r})")
            lines.append(f"  {self.key} = {c.key}, {c.column}: {status}; true value predicted before by "
                         f"{was}; {c.side_effects} other cell(s) {done}" + ("; TUPLE DELETED" if c.deleted else ""))
        fate = " (rows removed)" if self.rows_removed else " (kept, all cells NULL)" if self.deleted_tuples else ""
        lines.append(f"  changed cells {self.changed_cells:,} (direct distance); deleted tuples "
                     f"{self.deleted_tuples}{fate}")
        m = self.metrics
        if m:
            acmi = m["avg_change_mutual_information"]
            lines.append(f"  sum KL distance {m['sum_kl_distance']:.4f}; avg change in mutual information "
                         f"{'n/a' if acmi is None else f'{acmi:.4f}'}; sum conditional entropy "
                         f"{m['sum_conditional_entropy']:.4f}")
        if self.k is not None:
            lines.append(f"  kept {self.k}-anonymity over {', '.join(self.qi)}: {self.k_cells:,} more quasi-identifier "
                         "cell(s) hidden (chosen by kanon's MAR cost)")
        if self.dropped:
            lines.append(f"  dropped direct identifiers: {', '.join(self.dropped)}")
        if self.pseudonymized:
            lines.append(f"  pseudonymized (keyed HMAC-SHA256): {', '.join(self.pseudonymized)}")
        if self.cells and not self.show_values:
            lines.append(f"  original values not shown (--show-values prints them; {self.changes_table} holds them)")
        return lines


def protect_table(engine: Engine, table: str, key: str, *, in_place: bool = False, execute: bool = True,
                  progress: Progress | None = None, **options: Any) -> ProtectReport:
    """The job (`_protect_table`) with an in-place source held stable from its statistics to the
    commit (one transaction and a table lock on PostgreSQL), then scrubbed (catalog.in_place_run)."""
    return in_place_run(engine, get_table(engine, table), in_place and execute, progress or silent,
                        lambda: _protect_table(engine, table, key, in_place=in_place, execute=execute,
                                               progress=progress, **options))


def _protect_table(engine: Engine, table: str, key: str, *, method: str, target: str | None = None,
                  rows: Sequence[str] | None = None, cells: Sequence[tuple[str, str]] | None = None,
                  attrs: Sequence[str] | None = None, top_k: int | None = None, seed: int = 0, out: str | None = None,
                  in_place: bool = False, replace: bool = False, delete_rows: bool = False,
                  taxonomies: Mapping[str, str] | str | None = None, emit_sql: str | None = None,
                  execute: bool = True, progress: Progress | None = None, drop: Sequence[str] = (),
                  pseudonymize: Sequence[str] = (), pseudonym_key: identifiers.Key | None = None,
                  qi: Sequence[str] = (), k: int | None = None, script: bool = False) -> ProtectReport:
    """Resolve the input, decide, write back and verify in one transaction (the body of
    anonsql.api.protect, whose checks of method, top_k, seed, k and the pseudonym key ran already).

    `qi` and `k`: the output is k-anonymous over `qi` (the input must be): where the hidden cells
    move rows out of their classes, further QI cells are hidden (keep_k, kanon's MAR cost), and
    the k-anonymity check runs on the output. `qi` without `k` watches the k the input had and
    warns (Report.warnings) when the output lost it; without `qi` too, a table that looks like a
    kanon output is watched over the columns holding NULLs (see _classes).

    --drop and --pseudonymize run after the protection is verified, in the same transaction:
    dropped columns are no attribute (nothing reads them), and a pseudonym replaces values one
    to one, so naive Bayes and ID3 predict the same from pseudonyms as from the values."""
    say = progress or silent
    source = get_table(engine, table)
    qi = source.resolve(qi)
    drop, pseudonymize = identifiers.check_columns(source, qi, drop, pseudonymize)
    inp = resolve(engine, source, key, method, target=target, rows=rows, cells=cells, attrs=attrs,
                  taxonomies=taxonomies, drop=drop, pseudonymize=pseudonymize)
    watched, classes, had = _classes(engine, source, inp.key, qi, k, drop)
    ctas = not engine.supports_update and not in_place  # Spark: ONE CREATE TABLE AS SELECT (in place is refused)
    if ctas:
        _spark_input(engine.dialect, source, inp, drop, pseudonymize)
    dest, replaced = output_table(engine, source, out, f"{source.name}_protected", replace, in_place)
    changes = sql.TableName(f"{dest.name}_changes", dest.schema)
    existing = find_table(engine, changes)
    if existing is not None and not replace:
        raise AnonsqlError(f"changes table {existing} already exists (use --replace to overwrite it)")
    drop_tables = [t.expr for t in (replaced, existing) if t is not None]
    report = ProtectReport(table=str(source), out=str(dest), changes_table=str(changes), in_place=in_place,
                           key=inp.key, method=method, top_k=top_k, seed=seed, attrs=inp.attrs,
                           rows=inp.n, taxonomies={c: t.name for c, t in inp.taxonomies.items()},
                           dropped=drop, pseudonymized=pseudonymize, qi=qi, k=k, input_k=had)
    say(f"protect: {len(inp.cells)} cell(s) of {source} with {method}")
    # the source's distinct tuples over the run's columns, fetched once: for the algorithm's
    # counts and for the metrics' distributions before the change
    source_tuples = cache(lambda: stats.tuple_table(engine, source.expr, inp.columns))
    with report.timed("algorithm"):
        extra = [c for c in source.column_names if c != inp.key and c not in (*inp.columns, *drop)]
        results, values, decisions = _decide(engine, source, inp, extra, method, top_k, seed, delete_rows,
                                             source_tuples, say)
        if k is not None:
            decisions, report.k_cells = _keep_k(engine, source, inp.key, qi, k, seed, classes, decisions)
    report.cells = _cells(inp, results, values)
    report.deleted_tuples = sum(1 for r in results if r.status == DELETED)
    report.rows_removed = bool(decisions.removed)
    if emit_sql or script:  # the reviewable script (report.script), written to emit_sql when given
        report.script = _script(engine.dialect, source, dest, changes, inp.key, decisions, in_place, drop_tables,
                                drop, pseudonymize, ctas, (qi, k) if k is not None else None)
        if emit_sql:
            save(emit_sql, report.script)
    if not execute:
        report.notes.append("dry run: nothing was changed")
        return report
    published = [c for c in source.column_names if c != inp.key and c not in drop]
    # output and changes table are created under staged_outputs' names (Spark: staging tables, renamed once verified)
    staging = staged_outputs(engine, [(dest, replaced), (changes, existing)])
    with engine.transaction(), staging as (stage, stage_changes):
        with report.timed("statistics"):  # Section 2.4's counts before the change
            before = stats.distributions(engine, source.expr, published, inp.columns, source_tuples)
        source_tuples.cache_clear()  # not needed after this: let it go before the rewrite
        with report.timed("rewrite"):
            rewrite.write_back(rewrite.Apply(engine), source, stage, stage_changes, inp.key, decisions,
                               in_place=in_place, ctas=ctas)
        say("protect: verifying by SQL")
        with report.timed("verify"):
            verify.run(engine, report, inp, stage if in_place else sql.TableName(source.name, source.schema), stage,
                       stage_changes, results, method, values, decisions.removed)
            if watched:
                _k_anonymity(engine, report, get_table(engine, stage), source, watched, k, had, say, guessed=not qi)
        rewrite.cleanup(engine)
        if not report.ok:
            raise VerificationError(report.checks)
        with report.timed("metrics"):
            listed = stats.changes(engine, stage_changes.expr)
            after = stats.distributions(engine, stage.expr, published, inp.columns)
            report.metrics = metrics.information_loss(
                before, after, stats.change_counts(engine, stage_changes.expr), published, inp.n, len(listed),
                len(decisions.removed))
        identifiers.apply(engine, stage.expr, drop=drop, pseudonymize=pseudonymize, key=pseudonym_key)
        written = get_table(engine, stage)
        identifiers.verify(engine, report, written, source=None if in_place else source, drop=drop,
                          pseudonymize=pseudonymize)
        if not report.ok:
            raise VerificationError(report.checks)
        identifiers.warn(engine, report, written, [inp.key, *qi, *pseudonymize], say, named=dest)
        report.notes.append(f"column '{inp.key}' is the row key: it identifies every row of {dest} by design "
                            f"(protect keeps it, and {changes} names cells by it); if it is a direct identifier "
                            "(a patient id), publish a surrogate key in its place")
    report.changed_cells = len(listed)
    report.changes = [{k: stats.plain(v) for k, v in row.items()} for row in listed.to_dict("records")]
    return report


def _classes(engine: Engine, source: Table, key: str, qi: Sequence[str], k: int | None,
             unwatched: Sequence[str]) -> tuple[list[str], list[tuple[tuple, str, int]], int | None]:
    """The quasi-identifiers whose k-anonymity the run keeps or watches, the source's equivalence
    classes over them, and the k it has (its smallest class). `qi` when given (refused with `k`
    when the source is not k-anonymous: protect keeps k-anonymity, kanon makes it); else, when
    the table looks like a kanon output, the guess: the columns holding NULLs (kanon's
    suppressed cells) but the key and `unwatched`, if the table is k-anonymous over them, k >= 2."""
    if key in qi:
        raise AnonsqlError(f"the key column '{key}' cannot be a quasi-identifier (--qi): it is unique in every row")
    watched = list(qi) or stats.columns_with_nulls(
        engine, source.expr, [c for c in source.column_names if c != key and c not in unwatched])
    if not watched:
        return [], [], None
    classes = stats.qi_classes(engine, source.expr, watched)
    had = min(n for *_, n in classes)
    if k is not None and had < k:
        small = sum(1 for *_, n in classes if n < k)
        raise AnonsqlError(f"table {source} is not {k}-anonymous over {', '.join(qi)} ({small:,} classes have fewer "
                           f"than {k} rows, the smallest {had}): protect --k keeps k-anonymity, it does not create "
                           "it; make the table k-anonymous first (anonsql kanon)")
    if not qi and had < 2:
        return [], [], None  # not k-anonymous over the guess: nothing to watch
    return watched, classes, had


def _keep_k(engine: Engine, source: Table, key: str, qi: Sequence[str], k: int, seed: int,
            classes: list[tuple[tuple, str, int]], decisions: rewrite.Decisions) -> tuple[rewrite.Decisions, int]:
    """The decisions with the QI cells keep_k hides further so that the output stays
    k-anonymous over `qi`, and their number. The rows whose QI cells the decisions change are
    read by key; the other rows of a class to repair are found by its group key in SQL."""
    at = {c: j for j, c in enumerate(qi)}
    removed = set(decisions.removed)
    touched = dict.fromkeys([*(r for r, c, _ in decisions.cells if c in at), *decisions.removed])
    was = {r: tuple(stats.rows_where(engine, source.expr, key, qi, [(key, r)])[0][1:]) for r in touched}
    now = {r: list(v) for r, v in was.items()}
    for r, c, value in decisions.cells:
        if c in at:
            now[r][at[c]] = value
    moved = [(was[r], None if r in removed else tuple(now[r])) for r in touched]
    repairs = keep_k.repair({values: n for values, _, n in classes}, moved, k=k, seed=seed)
    if not repairs:
        return decisions, 0
    blank = dict(repairs)
    group = {values: g for values, g, _ in classes}
    # the rows of a class to repair: those the decisions moved there, and those that were there and stayed
    rows = [(r, tuple(now[r])) for r in touched if r not in removed and tuple(now[r]) in blank]
    by_group = {group[p]: p for p in blank if p in group}
    rows += [(r, by_group[g]) for r, g in stats.keys_in_classes(engine, source.expr, key, qi, list(by_group))
             if r not in touched]
    extra = {(r, qi[j]) for r, p in rows for j in blank[p]}
    cells = [(r, c, None if (r, c) in extra else v) for r, c, v in decisions.cells]
    known = {(r, c) for r, c, _ in decisions.cells}
    cells += sorted(((r, c, None) for r, c in extra if (r, c) not in known), key=lambda x: (str(x[0]), x[1]))
    return rewrite.Decisions(cells, decisions.confidential, decisions.removed), len(extra)


def _k_anonymity(engine: Engine, report: ProtectReport, written: Table, source: Table, qi: Sequence[str],
                 k: int | None, had: int | None, say: Progress, *, guessed: bool) -> None:
    """With `k`: the independent k-anonymity check of the output (anonsql.verify). Without: a
    privacy warning when the output lost the k the input had over `qi` (`guessed`: the columns
    holding NULLs, as in a kanon output)."""
    checked = k_anonymity(engine, written, qi, k or had or 1, show=0)
    if k is not None:
        report.checks += checked.checks
    elif checked.violating_groups:
        over = (f"the columns holding NULLs ({', '.join(qi)}), which look like a kanon output's "
                "quasi-identifiers," if guessed else ', '.join(qi))
        report.warn(f"{report.out} is not {had}-anonymous over {over} as {source} was: "
                    f"{checked.violating_groups:,} class(es) holding {checked.violating_rows:,} rows have fewer than "
                    f"{had} rows, moved there by the hidden cells; run protect with {'--qi QIS ' if guessed else ''}"
                    f"--k {had} to hide further quasi-identifier cells and keep it", say)


def _decide(engine: Engine, source: Table, inp: ProtectionInput, extra: list[str], method: str, top_k: int | None,
            seed: int, delete_rows: bool, tuples: Callable[[], pa.Table],
            say: Progress) -> tuple[list[CellResult], list[np.ndarray], rewrite.Decisions]:
    """Run the algorithm on the coded input, its rows read from `source` when needed; its changes
    as decisions (row key, column, label), a deleted tuple's `extra` columns (those no
    classifier reads) turned NULL too."""
    coding = inp.coding()
    values = coding.values
    rows = fetched_rows(engine, source.expr, inp, coding, tuples)
    col = {c: j for j, c in enumerate(inp.columns)}
    domains = [len(v) for v in values]
    preds = {col[t]: [col[a] for a in inp.attrs[t]] for t in inp.targets}
    data = (GeneralizedMicrodata(rows, domains, preds, k=top_k, taxonomies=[inp.taxonomies.get(c) for c in inp.columns])
            if inp.taxonomies else Microdata(rows, domains, preds, k=top_k))
    cells = [Cell(k, col[c], int(rows.row(k)[col[c]])) for k, c in inp.cells]
    results = protect_cells(data, cells, method, SeededChance(seed), max_runs=MAX_RUNS, progress=say)
    keys = inp.key_of
    deleted = sorted({r.cell.row for r in results if r.status == DELETED})
    changed = [(keys(k), inp.columns[j], None if now == NU else str(values[j][now]))
               for k, j, was, now in rows.changed() if was != NU]
    changed += [(keys(k), c, None) for k in deleted for c in extra]
    return results, values, rewrite.Decisions(
        changed, [(keys(k), c) for k, c in inp.cells], [keys(k) for k in deleted] if delete_rows else [])


def _cells(inp: ProtectionInput, results: list[CellResult], values: list[np.ndarray]) -> list[ProtectedCell]:
    """Each cell's outcome in values (not codes)."""
    def value(j: int, code: int) -> Any:
        return None if code == NU else stats.plain(values[j][code])

    return [ProtectedCell(
        key=inp.key_of(r.cell.row), column=inp.columns[r.cell.target], status=r.status,
        suppressed=r.status not in (COIN_KEPT, DELETED), deleted=r.status == DELETED,
        prediction_before={c: [value(r.cell.target, x) for x in v] for c, v in r.before.items()},
        prediction_after={c: [value(r.cell.target, x) for x in v] for c, v in r.after.items()},
        side_effects=len(set(r.changes) - {(r.cell.row, r.cell.target)}),  # a cell changed twice counts once
        predicted_true=[c for c, v in r.before.items() if list(v) == [r.cell.value]],
        next_best_guess=None if r.next_best is None else value(r.cell.target, r.next_best), runs=r.runs)
        for r in results]


def _spark_input(dialect: str, source: Table, inp: ProtectionInput, drop: Sequence[str],
                 pseudonymize: Sequence[str]) -> None:
    """Refuse, before any work, what the one CREATE TABLE AS SELECT of an engine without UPDATE
    cannot give as DuckDB does: --drop / --pseudonymize (run after the verified write-back, by
    ALTER and UPDATE) and floating-point run columns or key (the changes table holds their text)."""
    if drop or pseudonymize:
        raise AnonsqlError(f"--drop and --pseudonymize of protect are not available on {dialect} (they change the "
                           "verified output in place): protect first, then publish the columns you keep")
    exact_text(source, [inp.key, *inp.columns], f"a protect column on {dialect}")


def _script(dialect: str, source: Table, dest: sql.TableName, changes: sql.TableName, key: str,
            decisions: rewrite.Decisions, in_place: bool, drop_tables: list, drop: Sequence[str],
            pseudonymize: Sequence[str], ctas: bool, kept: tuple[Sequence[str], int] | None = None) -> str:
    """The run as a reviewable script, ending with its verification queries (with `kept`, (qi, k)
    of --qi/--k, the k-anonymity check too)."""
    script = Script(dialect, f"anonsql protect: {source} -> {dest}, changes in {changes}", warnings=[
        f"PRIVATE: this script names the confidential cells, and {changes} holds their ORIGINAL values;",
        "keep both as private as the source table. Run it in one session: the verification queries at",
        "the end read its temporary tables."])
    rewrite.write_back(rewrite.Emit(script), source, dest, changes, key, decisions, in_place=in_place,
                       drop=drop_tables, ctas=ctas)
    for comment, statement in identifiers.script_steps(dialect, dest.expr, drop=drop, pseudonymize=pseudonymize):
        script.step(comment, statement)
    # a pseudonymized column no longer holds its recorded new values (its labels are pseudonyms too)
    verify.script_checks(script, dest, changes, key, [c for c in decisions.columns if c not in pseudonymize])
    if kept is not None:
        qi, k = kept
        script.check(f"--k: no class of {', '.join(qi)} has fewer than {k} rows: must return no row",
                     sql.readable("common/violating_groups", dialect, tbl=dest.expr, qi=sql.columns(qi), k=k,
                                  shown=sql.columns(qi, "t"), max_groups=20))
    return script.text()
