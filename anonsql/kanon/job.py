"""The kanon job: SQL statistics → Kameya & Hayashi loop → set-based UPDATE → SQL checks → report.

The rewrite and the checks run in ONE transaction: a failed check raises VerificationError
inside it, which rolls back the new table (or, in place, every change to the source).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from dataclasses import replace as replace_dc
from typing import Any, ClassVar, TypeVar

import numpy as np

from .. import identifiers, sql
from ..catalog import Column, Table, find_table, get_table, in_place_run, output_table, staged_output
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..progress import tick
from ..report import Progress, Report, save, silent
from ..stats import drop_dictionaries
from . import verify
from .algorithm import anonymize
from .diversity import Model, check_whole_table
from .model import kl_divergence
from .rewrite import suppression_plan
from .stats import cardinality_warnings, gather, output_counts


@dataclass(kw_only=True)
class KanonReport(Report):
    """A k-anonymization by cell suppression: the run's parameters and the paper's figures."""

    PROTECTS: ClassVar[str] = ("singling a person out by their quasi-identifiers: every combination of them is "
                               "shared by at least k rows (k-anonymity by cell suppression; Kameya & Hayashi 2016)")

    in_place: bool
    qi: list[str]
    class_column: str | None  # None: one class for all rows (C = 1)
    k: int
    cost: str
    alpha: float
    seed: int
    rows: int  # N
    qi_cells: int  # N x M
    suppressed_cells: int  # cells newly NULL (recounted by SQL on the output after a run)
    suppressed_ratio: float
    kl_divergence: float  # eq. 7, original vs output, from SQL counts (NaN on a dry run)
    iterations: int
    groups: int  # distinct (QI, class) tuples |S| of the source
    changed_groups: int  # groups whose rows got a new pattern
    gamma_sum: float = 0.0  # Σ Γ over all merges; equals kl_divergence for cost 'mar'
    suppressed_by_column: dict[str, int] = field(default_factory=dict)  # cells newly NULL per QI
    original_nulls_by_column: dict[str, int] = field(default_factory=dict)  # NULL in the source already
    dropped: list[str] = field(default_factory=list)  # --drop
    pseudonymized: list[str] = field(default_factory=list)  # --pseudonymize (keyed HMAC-SHA256)
    changes: str | None = None  # the private changes relation (--changes)
    emitted_sql: str | None = None
    models: list[str] = field(default_factory=list)  # attribute-disclosure models enforced (--l-diversity ...)
    recoding: dict[str, Any] | None = None  # --hierarchy: the chosen lattice node (anonsql.kanon.recoding)
    restored_cells: int | None = None  # --restore: cells the pass after the loop gave back (None: not asked)

    def lines(self) -> list[str]:
        classes = f"class {self.class_column}" if self.class_column else "no class column: one class (C = 1)"
        head = (f"{self.table} -> {self.out}: {self.k}-anonymous over {len(self.qi)} quasi-identifiers, {classes} "
                f"(cost {self.cost}, pseudo count alpha {self.alpha:g}, seed {self.seed})" if self.checks else
                f"{self.table}: dry run, script written to {self.emitted_sql}; the database is unchanged")
        lines = [
            head,
            f"  rows {self.rows:,}; distinct combinations of quasi-identifiers and class {self.groups:,} (|S|); "
            f"merges {self.iterations:,}",
            f"  blanked cells (suppressed to NULL) {self.suppressed_cells:,} of {self.qi_cells:,} "
            f"({self.suppressed_ratio:.1%}), by column:",
        ]
        for name, n in self.suppressed_by_column.items():
            before = self.original_nulls_by_column.get(name, 0)
            lines.append(f"    {name}: {n:,} blanked ({n / self.rows:.1%} of rows)"
                         + (f"; {before:,} already empty (NULL) in the source, not counted" if before else ""))
        if self.recoding:
            r = self.recoding
            score = r["kl_divergence"] if "kl_divergence" in r else r["loss_metric"]  # by --search-utility
            lines.append(f"  generalized first (global recoding, optimal by {r['utility']} {score:.4f}; "
                         f"{r['records_in_small_classes']:,} rows left in classes below k, limit "
                         f"{r['max_suppressed_records']:.1%}; {r['nodes_evaluated']:,} of {r['lattice_nodes']:,} "
                         f"lattice nodes evaluated, {r['nodes_per_second']:,.0f} per second):")
            lines += [f"    {name}: {meaning}" for name, meaning in r["meaning"].items()]
            if "local_recoding" in r:
                lines.append(f"  --local-recoding gave {r['local_recoding']['cells_given_back']:,} blanked cells back "
                             "as labels at the node's level or above, every class keeping k (counted above as not "
                             "blanked)")
        if self.restored_cells is not None:
            lines.append(f"  --restore gave {self.restored_cells:,} blanked cells back after the loop, every class "
                         "keeping k and the models (counted above as not blanked)")
        if self.models:
            lines.append(f"  every equivalence class also meets {'; '.join(self.models)} (NULL a value of its own)"
                         + ("; checked by SQL on the output" if self.checks else ""))
        if self.checks:
            lines.append("  distance of the class-conditional value distributions from the original "
                         f"(KL divergence, eq. 7) {self.kl_divergence:.6f}")
            lines.append("  trade-off: " + self.trade_off())
        else:
            lines.append(f"  sum of the merge costs (sum of Γ) {self.gamma_sum:.6f}")
        if self.dropped:
            lines.append(f"  dropped direct identifiers: {', '.join(self.dropped)}")
        if self.pseudonymized:
            lines.append(f"  pseudonymized (keyed HMAC-SHA256): {', '.join(self.pseudonymized)}")
        if self.changes:
            lines.append(f"  what changed, cell by cell: {self.changes} (PRIVATE: holds original values)")
        return lines

    def trade_off(self) -> str:
        """What the cost traded, in words (the figures of this run)."""
        kl, blanked = f"KL {self.kl_divergence:.4f}", f"{self.suppressed_ratio:.1%}"
        return {
            "ham": f"ham blanks the fewest cells ({blanked}) whatever that does to the class-conditional "
                   f"distributions ({kl}); mar keeps those closer at the price of more blanked cells",
            "info": f"info blanks the values that carry the least information ({blanked} of cells), "
                    f"the class-conditional distributions moving by {kl}; ham blanks the fewest cells, "
                    "mar keeps the distributions closest",
            "mar": f"mar keeps the class-conditional distributions ({kl}) at the price of more blanked cells "
                   f"({blanked}); ham blanks the fewest cells",
            "hybrid": f"hybrid weighs mar's change of distributions by the cells blanked: between ham (fewest "
                      f"cells) and mar (closest distributions), here {blanked} of cells and {kl}",
        }[self.cost]


T = TypeVar("T")
U = TypeVar("U")

#: The class column of a run without --class, as the one-class views name it.
ONE_CLASS = "anonsql_one_class"


def run(engine: Engine, source: Table, rows: int, qi: Sequence[str], class_column: str | None, k: int, *,
        in_place: bool, execute: bool, progress: Progress | None = None, **options: Any) -> KanonReport:
    """The job (`_run`) with an in-place source held stable from the statistics to the commit
    (one transaction and a table lock on PostgreSQL), then scrubbed (catalog.in_place_run)."""
    return in_place_run(engine, source, in_place and execute, progress or silent, lambda: _run(
        engine, source, rows, qi, class_column, k, in_place=in_place, execute=execute, progress=progress, **options))


def _run(engine: Engine, source: Table, rows: int, qi: Sequence[str], class_column: str | None, k: int, *,
        cost: str, alpha: float, seed: int, out: str | None, in_place: bool, replace: bool,
        emit_sql: str | None, execute: bool, progress: Progress | None = None, drop: Sequence[str] = (),
        pseudonymize: Sequence[str] = (), key: identifiers.Key | None = None,
        changes: str | None = None, script: bool = False, models: Sequence[Model] = (),
        also_verify: Callable[[Report, Table], None] | None = None,
        script_before: Sequence[tuple[str, str]] = (), script_checks: Sequence[tuple[str, str]] = (),
        follows: Mapping[str, str] | None = None, restore: bool = False) -> KanonReport:
    """Run the whole job on validated input (see anonsql.api.k_anonymize for the checks).

    The reviewable script is built (report.script) with `emit_sql` (then written there) or `script`.
    Without a class column every row shares one class (the paper's costs with C = 1): the
    statistics and checks read the table through a temporary view that adds the constant label.
    `models` (anonsql.kanon.diversity, numbered by sensitive column) are enforced by the loop
    beside k and re-checked by SQL on the output (verify.diversity); `also_verify(report, written)`
    records a caller's own checks in the same transaction (kanon.recoding's labels); the script then
    opens with `script_before` and ends with `script_checks` (their statements, as a reviewer runs them).
    A copy's columns in `follows` turn NULL with their QI (kanon.recoding's bound columns), checked by the caller.
    """
    say = progress or silent
    identifiers.check_same_text(engine, source, pseudonymize)
    if in_place and engine.row_id is not None and engine.row_id in {c.lower() for c in source.column_names}:
        raise AnonsqlError(f"table {source} has a column named {engine.row_id}, which hides the row id that an "
                           "in-place run updates rows by: write a copy (--out) instead of --in-place")
    target, replaced = output_table(engine, source, out, f"{source.name}_k{k}", replace, in_place)
    changes_table = _changes_table(engine, changes, source, target)
    report = KanonReport(table=str(source), out=str(target), in_place=in_place, qi=list(qi),
                         class_column=class_column, k=k, cost=cost, alpha=alpha, seed=seed, rows=rows,
                         qi_cells=rows * len(qi), suppressed_cells=0, suppressed_ratio=0.0,
                         kl_divergence=float("nan"), iterations=0, groups=0, changed_groups=0, emitted_sql=emit_sql,
                         dropped=list(drop), pseudonymized=list(pseudonymize),
                         changes=str(changes_table) if changes_table else None,
                         models=[m.option for m in models])
    cls = class_column or ONE_CLASS
    sensitive = list(dict.fromkeys(m.name for m in models))  # the models' columns, numbered as m.column

    with report.timed("statistics"):
        with _counted(engine, source, class_column) as counted:
            before = gather(engine, counted, qi, cls, sensitive)
    groups = before.groups
    try:  # a model the whole table fails: one error line before any work
        check_whole_table(models, [h.sum(axis=0) for h in before.sensitive])
    except AnonsqlError:
        drop_dictionaries(engine, groups.dictionaries)
        raise
    say(f"statistics: {rows:,} rows, {len(groups.counts):,} distinct combinations of quasi-identifiers and class "
        f"({report.seconds['statistics']:.2f} s)")
    report.notes += cardinality_warnings(groups)  # in the summary: said once, there
    at_start: list[int] = []  # the violating tuples at the loop's first report: the bar's length

    def loop_progress(iteration: int, left: int) -> None:  # every 1024 merges (the loop's own pace)
        if not at_start:
            at_start.append(left)
        total = at_start[0]
        tick(say, "kanon: violating tuples merged", total - left, total,
             f"  iteration {iteration:,}: {left:,} violating tuples left")

    def loop() -> Any:
        return anonymize(groups.codes, groups.classes, groups.counts, groups.domain_sizes, k=k, cost=cost,
                         alpha=alpha, seed=seed, progress=loop_progress if progress else None,
                         sensitive=before.sensitive, models=models, restore=restore)

    # The near-unique warning on the output, read from the source while the loop runs: the output's
    # columns it reads are the source's, written unchanged (a copy checks them below as a multiset:
    # same rows, same distinct values; in place the UPDATE writes QI cells only).
    out_columns = [c for c in source.column_names if c not in drop]
    with report.timed("loop"):
        result, unique = _beside(loop, lambda: identifiers.scan(
            engine, source, identifiers.unlisted(out_columns, [*qi, *pseudonymize, *(follows or {})]), named=target)
            if execute else [])
    say(f"loop: {result.iterations:,} merges ({report.seconds['loop']:.2f} s)")
    # a copy drops and pseudonymizes inside its CREATE TABLE AS SELECT; in place, statements follow the UPDATE
    plan = suppression_plan(source.expr, target.expr, groups, cls, result.final_codes, source.column_names,
                            copy=not in_place, one_class=class_column is None, drop=() if in_place else drop,
                            pseudonymize=() if in_place else pseudonymize, follows=follows)
    report.iterations, report.groups, report.changed_groups = result.iterations, len(groups.counts), len(plan.rows)
    report.restored_cells = result.restored_cells if restore else None
    report.gamma_sum = float(np.sum(result.gammas))
    _set_suppressed(report, int(result.suppressed_cells))
    report.suppressed_by_column = dict(zip(qi, (plan.suppress * plan.rows[:, None]).sum(axis=0).tolist())) \
        if len(plan.rows) else dict.fromkeys(qi, 0)
    report.original_nulls_by_column = dict(zip(qi, before.attrs.null_counts.sum(axis=1).tolist()))
    if emit_sql or script:
        extra = identifiers.script_steps(engine.dialect, target.expr, drop=drop, pseudonymize=pseudonymize) \
            if in_place else []
        title, warnings, checks = _script_texts(engine.dialect, report, source, target, models, follows or {})
        report.script = plan.script(engine.dialect, title, warnings, [*checks, *script_checks],
                                    replace=replaced is not None, extra=extra, before=script_before)
        if emit_sql:
            save(emit_sql, report.script)
    if not execute:
        drop_dictionaries(engine, groups.dictionaries)
        report.notes.append("dry run (--emit-sql only): nothing in the database changed, nothing was checked")
        return report

    # the output is created under staged_output's name (Spark: a staging table, renamed once verified)
    with engine.transaction(), staged_output(engine, target, replaced) as staged:
        with report.timed("rewrite"):
            plan = replace_dc(plan, out=staged.expr)
            plan.execute(engine, key)
            if in_place:
                identifiers.apply(engine, staged.expr, drop=drop, pseudonymize=pseudonymize, key=key)
            if changes_table is not None:
                _write_changes(engine, changes_table, plan.changes())
        say(f"rewrite: {len(plan.rows):,} groups changed ({report.seconds['rewrite']:.2f} s)")
        with report.timed("verify"):
            written = get_table(engine, staged)
            with _counted(engine, written, class_column, "_out") as counted_out:
                out_attrs = output_counts(engine, counted_out, qi, cls, before)
                suppressed = verify.suppression(engine, report, counted_out, qi, class_column, k, before=before,
                                                out_attrs=out_attrs, source=None if in_place else source,
                                                decided_cells=int(result.suppressed_cells),
                                                changed=[*drop, *pseudonymize, *(follows or {})])
            identifiers.verify(engine, report, written, source=None if in_place else source, drop=drop,
                               pseudonymize=pseudonymize)
            verify.diversity(engine, report, written, qi, models)
            if also_verify is not None:
                also_verify(report, written)
        if not report.ok:
            raise VerificationError(report.checks)  # the dictionaries are left to the session (or the next run)
    drop_dictionaries(engine, groups.dictionaries)
    identifiers.tell(report, unique, say)
    say(f"verify: k-anonymous, rows and classes kept, only NULLs added ({report.seconds['verify']:.2f} s)")
    _set_suppressed(report, suppressed)
    report.suppressed_by_column = {name: int(out_attrs.null_counts[j].sum() - before.attrs.null_counts[j].sum())
                                   for j, name in enumerate(qi)}
    report.kl_divergence = kl_divergence(before.attrs.counts, [c[:len(v)] for c, v in zip(out_attrs.counts,
                                                                                        before.attrs.values)],
                                         before.classes.counts, alpha)
    return report


def _beside(work: Callable[[], T], meanwhile: Callable[[], U]) -> tuple[T, U]:
    """(work(), meanwhile()), `work` in a thread while `meanwhile` runs here: the compiled loop
    releases the GIL, so SQL that does not need its result takes no time of its own (the engine
    stays in this thread). An error of either is raised here once both are done."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["result"] = work()
        except BaseException as exc:  # re-raised in the caller's thread
            done["error"] = exc

    thread = threading.Thread(target=run, name="anonsql-kanon-loop", daemon=True)
    thread.start()
    try:
        other = meanwhile()
    finally:
        thread.join()
    if "error" in done:
        raise done["error"]
    return done["result"], other


@contextmanager
def _counted(engine: Engine, table: Table, class_column: str | None, suffix: str = "") -> Iterator[Table]:
    """The table the statistics read: itself, or without a class a temporary view adding the one label."""
    if class_column is not None:
        yield table
        return
    if ONE_CLASS in table.column_names:
        raise AnonsqlError(f"table {table} has a column named {ONE_CLASS}: give --class")
    d = engine.dialect
    view = sql.TableName(f"anonsql_kanon_one_class{suffix}", engine.temp_schema)  # the session's temporary schema
    engine.execute(*sql.render("common/drop_view", d, tbl=view.expr))
    engine.execute(*sql.render("kanon/one_class_view", d, view=view.expr, src=table.expr, cls=sql.ident(ONE_CLASS),
                               one=sql.fragment("kanon/one_class")))
    try:
        yield Table(view.schema or "", view.name, (*table.columns, Column(ONE_CLASS, "VARCHAR")))
    finally:
        engine.execute(*sql.render("common/drop_view", d, tbl=view.expr))


def _changes_table(engine: Engine, changes: str | None, source: Table, target: sql.TableName
                   ) -> sql.TableName | None:
    """Where --changes goes: a new table, neither the source nor the output."""
    if not changes:
        return None
    ref = sql.TableName.parse(changes)
    if (ref.schema, ref.name) in {(source.schema, source.name), (target.schema, target.name)} \
            or find_table(engine, ref) is not None:
        raise AnonsqlError(f"--changes table {ref} already exists or is the source or output; name a new table")
    return ref


def _write_changes(engine: Engine, table: sql.TableName, frame: dict[str, np.ndarray]) -> None:
    """The private changes relation (sql/kanon/create_changes.sql), in the run's transaction."""
    d = engine.dialect
    engine.execute(*sql.render("kanon/create_changes", d, changes=table.expr))
    if len(frame["group_id"]):
        engine.insert_rows(table.expr, list(frame), frame)


def _set_suppressed(report: KanonReport, cells: int) -> None:
    report.suppressed_cells = cells
    report.suppressed_ratio = cells / report.qi_cells


def _script_texts(dialect: str, report: KanonReport, source: Table, target: sql.TableName,
                  models: Sequence[Model] = (), follows: Mapping[str, str] | None = None
                  ) -> tuple[str, list[str], list[tuple[str, str]]]:
    """Title, warnings and verification queries of the `--emit-sql` script."""
    title = (f"anonsql kanon: {source} -> {target}, k = {report.k}, cost = {report.cost}, "
             f"alpha = {report.alpha:g}, seed = {report.seed}\n"
             "-- Kameya & Hayashi (2016) bottom-up cell suppression, written back set-based:\n"
             "-- one decisions relation (group values -> cells to suppress), rows matched to it through\n"
             "-- value dictionaries (by code, or on PostgreSQL by value), then one CREATE TABLE AS SELECT\n"
             "-- (a copy) or one UPDATE (in place).")
    warnings = ["PRIVATE: the decisions spell out ORIGINAL quasi-identifier values; keep this file as",
                "private as the source table, never publish it with the output."]
    out, qi = target.expr, sql.columns(report.qi)
    checks = [
        (f"k-anonymity: must return groups = 0, rows = 0 (no QI combination shared by fewer than {report.k} rows)",
         sql.readable("common/violations_summary", dialect, tbl=out, qi=qi, k=report.k)),
        (f"row count: must return {report.rows}",
         sql.readable("common/row_count", dialect, tbl=out)),
    ]
    changed = {*report.qi, *report.dropped, *report.pseudonymized, *(follows or {})}
    others = [c for c in source.column_names if c not in changed]
    if not report.in_place and others:  # without a column outside the QIs, nothing to compare
        checks.append(("non-QI columns unchanged: must return 0 (rows of either table without a twin in the other)",
                       sql.readable("common/multiset_difference", dialect, a=source.expr, b=out,
                                    col=sql.columns(others), side=sql.unused_ident("side", others))))
    checks += [verify.diversity_script(dialect, out, report.qi, m) for m in models]
    return title, warnings, checks
