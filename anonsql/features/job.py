"""The jobs of feature selection (Zhang et al. 2017): binarize, select (features) and ac.

select: SQL statistics (masks, class sums) → a method of anonsql.features → the published
projection (a table; a view on request) → AC >= k re-checked by SQL on the output, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .. import identifiers, sql, validate
from ..catalog import Table, drop_table, find_table, get_table, output_table, staged_output
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, save, silent
from . import rewrite, stats, verify
from .containment import BinaryCounts, distcnt_from_groups, feature_hamdist
from .greedy import Selection, greedy_distcnt, greedy_hamdist
from .maximal import maximal_select
from .spec import BinaryRule


@dataclass(kw_only=True)
class BinarizeReport(Report):
    """`anonsql binarize`: the derived 0/1 columns of a table."""

    rows: int
    columns: list[str]  # the derived 0/1 columns, in spec order
    ones: dict[str, int] = field(default_factory=dict)  # rows with a 1 per column, counted by SQL on the output
    density: float | None = None  # share of 1 cells (Zhang et al. Table 3's "Density")

    def lines(self) -> list[str]:
        density = f"density (share of 1 cells) {self.density:.1%}" if self.density is not None else "dry run"
        return ([f"{self.table} -> {self.out}: {len(self.columns)} binary columns, {self.rows:,} rows, {density}"]
                + [f"  {c}: {n:,} rows with 1" for c, n in self.ones.items()])


@dataclass(kw_only=True)
class FeaturesReport(Report):
    """`anonsql features`: the published columns and how well they keep the class signal."""

    PROTECTS: ClassVar[str] = ("linking a person by their set of 1-features: every row's 1s are 1s in at least "
                               "k rows (k-anonymity by containment, k-AC; Zhang et al. 2017)")

    materialized: bool
    class_column: str
    classes: list[Any]  # [C_1, C_2]
    k: int
    method: str
    privacy: str
    mode: str
    top_r: int | None
    rows: int
    attrs_considered: int
    selected: list[str] = field(default_factory=list)  # in the order the method added them
    ac: int | None = None  # AC of the published projection, recomputed by SQL on the output
    kanon: int | None = None  # its k-anonymity level (smallest group of equal projections)
    hamdist: float | None = None
    distcnt: float | None = None
    full_hamdist: float = 0.0  # HamDist of all considered features (the ceiling)
    full_distcnt: float = 0.0
    stopped_by: str | None = None  # mode 'stop': the first infeasible feature
    skipped: int = 0  # mode 'skip': infeasible features passed over
    candidates: list[list[str]] = field(default_factory=list)  # maximal: the r largest of M_k

    def lines(self) -> list[str]:
        kind = "table" if self.materialized else "view"
        model = "k-anonymity by containment (k-AC)" if self.privacy == "ac" else "k-anonymity"
        lines = [f"{self.table} -> {self.out} ({kind}): {len(self.selected)} of {self.attrs_considered} features "
                 f"by {self.method} ({model}, k = {self.k}, mode {self.mode})",
                 f"  selected, in order: {', '.join(self.selected) if self.selected else '(none)'}"]
        if self.ac is not None:
            lines += [f"  anonymity by containment of the projection (AC) {self.ac}; k-anonymous for k = {self.kanon}",
                      f"  class separation by Hamming distance (HamDist) {self.hamdist:.4f} "
                      f"(all features {self.full_hamdist:.4f}); by distinct counts (DistCnt) {self.distcnt:.4f} "
                      f"(all features {self.full_distcnt:.4f})"]
        if self.stopped_by:
            lines.append(f"  stopped at {self.stopped_by}: adding it breaks the constraint "
                         "(--mode skip passes over it)")
        if self.skipped:
            lines.append(f"  skipped {self.skipped} infeasible feature(s)")
        return lines


@dataclass(kw_only=True)
class AcReport(Report):
    """`anonsql ac`: AC(D) of a table over its feature columns (reads only, promises nothing)."""

    PROVES: ClassVar[bool] = False

    attrs: list[str]
    class_column: str | None
    rows: int
    distinct_masks: int
    ac: int
    kanon: int
    rows_by_ac: dict[int, int]
    distcnt: float | None
    hamdist: float | None

    def lines(self) -> list[str]:
        lines = [f"{self.table}: anonymity by containment (AC(D)) = {self.ac} over {len(self.attrs)} features "
                 f"({self.rows:,} rows, {self.distinct_masks:,} distinct containment sets); "
                 f"k-anonymous for k = {self.kanon}",
                 "  rows by containment support (AC(e)), smallest first: "
                 + ", ".join(f"{a}: {n:,}" for a, n in self.rows_by_ac.items())]
        if self.distcnt is not None:
            lines.append(f"  class separation by distinct counts (DistCnt) {self.distcnt:.4f}, "
                         f"by Hamming distance (HamDist) {self.hamdist:.4f}")
        return lines


# ---------------------------------------------------------------- select (features)

#: The note of a run published as a view (--view): the guarantee holds for today's rows only.
VIEW_WARNING = ("{view} is a view: it reads {table} at every query, so any change to {table} after this run voids "
                "the guarantee (AC >= k was proved on the rows of today); publish a table (no --view) to keep it")



def select(data: BinaryCounts, values: np.ndarray, k: int, method: str, privacy: str, mode: str,
           top_r: int) -> tuple[Selection, list[tuple[int, ...]]]:
    """Run one method of anonsql.features on the statistics; (selection, maximal's candidates)."""
    if method == "hamdist":
        return greedy_hamdist(data, k, privacy=privacy, mode=mode, values=values), []  # type: ignore[arg-type]
    if method == "maximal":
        best, candidates = maximal_select(data, k, top_r, values=values)
        return Selection(best, [float(values[x]) for x in best]), candidates
    return greedy_distcnt(data, k, privacy=privacy, mode=mode, criterion=method), []  # type: ignore[arg-type]


def select_features(engine: Engine, table: str | sql.TableName, class_column: str, k: int, *,
                    key: str | None = None, attrs: Sequence[str] = (), method: str = "distcnt",
                    privacy: str = "ac", mode: str = "stop", top_r: int = 20, out: str | None = None,
                    materialize: bool = True, replace: bool = False, emit_sql: str | None = None,
                    execute: bool = True, progress: Progress | None = None, label: str | None = None,
                    before: Sequence[rewrite.Step] = (), after: Sequence[rewrite.Step] = ()) -> FeaturesReport:
    """Check the table (one AnonsqlError, nothing written) and run the job; `method`, `privacy`,
    `mode`, `k` and `top_r` are validated by anonsql.api. `before`/`after` are steps the caller
    runs around the job (the long input's staging pivot), for the script."""
    source = get_table(engine, table)
    key_col = source.column(key).name if key else None
    cls = validate.class_column(engine, source, class_column)
    if cls == key_col:
        raise AnonsqlError(f"column '{cls}' cannot be both the class and the key")
    rows = validate.rows(engine, source)
    engine.expect_rows(rows)
    validate.k_within(k, rows)
    classes = stats.two_classes(engine, source, cls)
    cols = stats.attr_columns(source, cls, key_col, attrs)
    stats.require_binary(engine, source, cols)
    target, replaced = output_table(engine, source, out, f"{source.name}_ac{k}", replace)
    if not materialize and not engine.supports_transactions:
        raise AnonsqlError(f"--view is not available on {engine.dialect}: without transactions the view could not "
                           "be verified before it has its name; publish a table (no --view)")
    say = progress or silent
    report = FeaturesReport(table=label or str(source), out=str(target), materialized=materialize,
                            class_column=cls, classes=classes, k=k, method=method, privacy=privacy, mode=mode,
                            top_r=top_r if method == "maximal" else None, rows=rows, attrs_considered=len(cols))

    with report.timed("statistics"):
        data = stats.mask_counts(engine, source, cols, cls, classes[0])
        values = feature_hamdist(data)  # the per-class column sums of SQL's class_sums, from the same counts
    say(f"statistics: {rows:,} rows, {len(cols):,} features, {len(data.n1):,} distinct containment sets "
        f"({report.seconds['statistics']:.2f} s)")
    with report.timed("selection"):
        choice, candidates = select(data, values, k, method, privacy, mode, top_r)
    chosen = [cols[x] for x in choice.selected]
    report.selected, report.skipped = chosen, len(choice.skipped)
    report.stopped_by = cols[choice.stopped_by] if choice.stopped_by is not None else None
    report.candidates = [[cols[x] for x in c] for c in candidates]
    # the masks are distinct (grouped by SQL), so they are the groups of equal projections on all features
    report.full_hamdist, report.full_distcnt = float(values.sum()), distcnt_from_groups(data.n1, data.n2)
    say(f"selection: {len(chosen)} feature(s) by {method} ({report.seconds['selection']:.2f} s)")

    if emit_sql:
        steps = ([rewrite.replace_step(engine, replaced)] if replaced is not None else []) + [
            rewrite.publish_step(source, target, chosen, cls, materialize)]
        report.script = rewrite.features_script(engine.dialect, report.table, target, [*before, *steps, *after], k,
                                                chosen, rows).text()
    if _dry_run(report, emit_sql, execute):
        return report
    with _output(engine, target, replaced) as written:
        with report.timed("write"):
            rewrite.publish_step(source, written, chosen, cls, materialize).run(engine)
        with report.timed("verify"):
            figures = verify.published(engine, report, get_table(engine, written), chosen, cls, classes,
                                       rows=rows, k=k, privacy=privacy)
        if not report.ok:
            raise VerificationError(report.checks)
    identifiers.warn(engine, report, get_table(engine, target), chosen, say)
    if not materialize:
        report.notes.append(VIEW_WARNING.format(view=target, table=report.table))
        say("warning: " + report.notes[-1])
    report.ac, report.kanon = figures.ac, figures.kanon
    report.hamdist, report.distcnt = figures.hamdist, figures.distcnt
    _save(report, emit_sql)
    say(f"verify: AC = {figures.ac} >= {k} on {target} ({report.seconds['verify']:.2f} s)")
    return report


def select_features_long(engine: Engine, table: str, items: str, class_column: str, key: str, item_column: str,
                         k: int, *, out: str | None = None, **options: Any) -> FeaturesReport:
    """Feature selection on a long (row key, item) table: `table` holds one row per entity
    (key, class), `items` its (key, item) pairs. The items are pivoted in SQL into a staging
    table of 0/1 columns (one per distinct item), the wide job runs on it, and the result is
    materialized (a view would have to repeat the pivot) before the staging table is dropped."""
    rows_tab, items_tab = get_table(engine, table), get_table(engine, items)
    key_col, ikey, icol = rows_tab.column(key).name, items_tab.column(key).name, items_tab.column(item_column).name
    if ikey == icol:
        raise AnonsqlError(f"--item '{icol}' is the key column of {items_tab}")
    cls = validate.class_column(engine, rows_tab, class_column)
    values = stats.distinct_items(engine, items_tab, icol, cls)
    target = sql.TableName.parse(out) if out else sql.TableName(f"{rows_tab.name}_ac{k}")
    staging = sql.TableName(f"{target.name}__items", target.schema)
    create, drop = rewrite.pivot_steps(rows_tab, items_tab, staging, key_col, ikey, icol, cls, values)
    with engine.transaction():
        if find_table(engine, staging) is not None:
            raise AnonsqlError(f"staging table {staging} exists (a failed earlier run?); drop it first")
        create.run(engine)
    try:
        return select_features(engine, staging, cls, k, out=str(target), materialize=True,
                               label=f"{rows_tab} + {items_tab}", before=[create], after=[drop], **options)
    finally:
        drop_table(engine, staging.expr)


# ---------------------------------------------------------------- ac, binarize


def ac(engine: Engine, table: str, *, class_column: str | None = None, key: str | None = None,
       attrs: Sequence[str] = ()) -> AcReport:
    """AC(D) of `table` over its 0/1 feature columns (and DistCnt, HamDist with a class). Reads only."""
    tab = get_table(engine, table)
    key_col = tab.column(key).name if key else None
    cls = validate.class_column(engine, tab, class_column) if class_column else None
    engine.expect_rows(validate.rows(engine, tab))
    classes = stats.two_classes(engine, tab, cls) if cls else None
    cols = stats.attr_columns(tab, cls, key_col, attrs)
    stats.require_binary(engine, tab, cols)
    report = AcReport(table=str(tab), attrs=cols, class_column=cls, rows=0, distinct_masks=0, ac=0, kanon=0,
                      rows_by_ac={}, distcnt=None, hamdist=None)
    with report.timed("statistics"):
        c = stats.containment(engine, tab, cols, cls, classes)
    report.rows, report.distinct_masks, report.ac, report.kanon = c.rows, c.masks, c.ac, c.kanon
    report.rows_by_ac, report.distcnt, report.hamdist = c.rows_by_ac, c.distcnt, c.hamdist
    return report


def binarize(engine: Engine, table: str, rules: Sequence[BinaryRule], out: str, *, keep: Sequence[str] = (),
             replace: bool = False, emit_sql: str | None = None, execute: bool = True) -> BinarizeReport:
    """A new table with the `keep` columns (key, class) and one 0/1 column per rule, in SQL."""
    source = get_table(engine, table)
    rows = validate.rows(engine, source)
    engine.expect_rows(rows)
    kept = source.resolve(keep)
    clash = sorted({r.name.lower() for r in rules} & {k.lower() for k in kept})
    if clash:
        raise AnonsqlError(f"derived column '{clash[0]}' has the name of a kept column")
    target, existing = output_table(engine, source, out, out, replace)
    create = rewrite.binarize_step(source, target, rules, kept)  # checks the rules before any work
    names = [r.name for r in rules]
    report = BinarizeReport(table=str(source), out=str(target), rows=rows, columns=names)
    if emit_sql:
        steps = ([rewrite.replace_step(engine, existing)] if existing is not None else []) + [create]
        report.script = rewrite.binarize_script(engine.dialect, source, target, steps, names, rows).text()
    if _dry_run(report, emit_sql, execute):
        return report
    with _output(engine, target, existing) as written:
        with report.timed("write"):
            rewrite.binarize_step(source, written, rules, kept).run(engine)
        with report.timed("verify"):
            report.ones = verify.binarized(engine, report, get_table(engine, written), names, rows)
        if not report.ok:
            raise VerificationError(report.checks)
    report.out = str(get_table(engine, target))
    report.density = sum(report.ones.values()) / (rows * len(names))
    _save(report, emit_sql)
    return report


@contextmanager
def _output(engine: Engine, target: sql.TableName, replaced: Table | None) -> Iterator[sql.TableName]:
    """The name a run writes and verifies its output under, in one engine.transaction(). With
    transactions: the target, after dropping the table or view --replace overwrites (a failure
    rolls both back). Without (Spark): a staging name (anonsql.catalog.staged_output), given
    the target's name only when the block succeeds, so a failed check leaves nothing behind."""
    with engine.transaction():
        if engine.supports_transactions:
            if replaced is not None:
                rewrite.replace_step(engine, replaced).run(engine)
            yield target
            return
        with staged_output(engine, target, replaced) as staged:
            yield staged


def _dry_run(report: Report, emit_sql: str | None, execute: bool) -> bool:
    """A dry run (not `execute`) writes the script and notes that nothing changed; True when it stops here."""
    if not execute:
        _save(report, emit_sql)
        where = "on standard output" if emit_sql == "-" else f"in {emit_sql}"
        report.notes.append(f"dry run: the script is {where}; nothing in the database changed")
    return not execute


def _save(report: Report, emit_sql: str | None) -> None:
    """Write the run's script, carried by its report (after the run committed, or for a dry run)."""
    if report.script is not None and emit_sql:
        save(emit_sql, report.script)
