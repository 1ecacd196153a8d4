"""The kanon job: SQL statistics → Kameya & Hayashi loop → set-based UPDATE → SQL checks → report.

The rewrite and the checks run in ONE transaction: a failed check raises VerificationError
inside it, which rolls back the new table (or, in place, every change to the source).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import sql
from ..catalog import Table, drop_table, get_table, output_table
from ..engine import Engine
from ..errors import VerificationError
from ..report import Progress, Report, save, silent
from ..stats import attr_class_counts
from . import verify
from .algorithm import anonymize
from .model import kl_divergence
from .rewrite import suppression_plan
from .stats import aligned_counts, cardinality_warnings, gather


@dataclass(kw_only=True)
class KanonReport(Report):
    """A k-anonymization by cell suppression: the run's parameters and the paper's figures."""

    in_place: bool
    qi: list[str]
    class_column: str
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
    emitted_sql: str | None = None

    def lines(self) -> list[str]:
        head = (f"{self.table} -> {self.out}: {self.k}-anonymous over {len(self.qi)} quasi-identifiers "
                f"(cost {self.cost}, pseudo count alpha {self.alpha:g}, seed {self.seed})" if self.checks else
                f"{self.table}: dry run, script written to {self.emitted_sql}; the database is unchanged")
        return [
            head,
            f"  rows {self.rows:,}; distinct (QI, class) tuples {self.groups:,}; merges {self.iterations:,}",
            f"  suppressed cells {self.suppressed_cells:,} of {self.qi_cells:,} ({self.suppressed_ratio:.1%})",
            f"  KL divergence between original and output (eq. 7) {self.kl_divergence:.6f}" if self.checks
            else f"  sum of the merge costs (sum of Γ) {self.gamma_sum:.6f}",
        ]


def run(engine: Engine, source: Table, rows: int, qi: Sequence[str], class_column: str, k: int, *,
        cost: str, alpha: float, seed: int, out: str | None, in_place: bool, replace: bool,
        emit_sql: str | None, execute: bool, progress: Progress | None = None) -> KanonReport:
    """Run the whole job on validated input (see anonsql.api.k_anonymize for the checks)."""
    say = progress or silent
    target, replaced = output_table(engine, source, out, f"{source.name}_k{k}", replace, in_place)
    report = KanonReport(table=str(source), out=str(target), in_place=in_place, qi=list(qi),
                         class_column=class_column, k=k, cost=cost, alpha=alpha, seed=seed, rows=rows,
                         qi_cells=rows * len(qi), suppressed_cells=0, suppressed_ratio=0.0,
                         kl_divergence=float("nan"), iterations=0, groups=0, changed_groups=0, emitted_sql=emit_sql)

    with report.timed("statistics"):
        before = gather(engine, source, qi, class_column)
    groups = before.groups
    say(f"statistics: {rows:,} rows, {len(groups.counts):,} distinct (QI, class) tuples "
        f"({report.seconds['statistics']:.2f} s)")
    report.notes += cardinality_warnings(groups)
    for note in report.notes:
        say("warning: " + note)

    def loop_progress(iteration: int, left: int) -> None:
        say(f"  iteration {iteration:,}: {left:,} violating tuples left")

    with report.timed("loop"):
        result = anonymize(groups.codes, groups.classes, groups.counts, groups.domain_sizes, k=k, cost=cost,
                           alpha=alpha, seed=seed, progress=loop_progress if progress else None)
    say(f"loop: {result.iterations:,} merges ({report.seconds['loop']:.2f} s)")
    plan = suppression_plan(source.expr, target.expr, groups, class_column, result.final_codes, copy=not in_place)
    report.iterations, report.groups, report.changed_groups = result.iterations, len(groups.counts), len(plan.keys)
    report.gamma_sum = float(np.sum(result.gammas))
    _set_suppressed(report, int(result.suppressed_cells))
    if emit_sql:
        save(emit_sql, plan.script(engine.dialect, *_script_texts(engine.dialect, report, source, target),
                                   replace=replaced is not None))
    if not execute:
        report.notes.append("dry run (--emit-sql only): nothing in the database changed, nothing was checked")
        return report

    with engine.transaction():
        with report.timed("rewrite"):
            if replaced is not None:
                drop_table(engine, replaced.expr)
            plan.execute(engine)
        say(f"rewrite: {len(plan.keys):,} groups changed ({report.seconds['rewrite']:.2f} s)")
        with report.timed("verify"):
            written = get_table(engine, target)
            out_attrs = attr_class_counts(engine, written, qi, class_column)
            suppressed = verify.suppression(engine, report, written, qi, class_column, k, before=before,
                                            out_attrs=out_attrs, source=None if in_place else source,
                                            decided_cells=int(result.suppressed_cells))
        if not report.ok:
            raise VerificationError(report.checks)
    say(f"verify: k-anonymous, rows and classes kept, only NULLs added ({report.seconds['verify']:.2f} s)")
    _set_suppressed(report, suppressed)
    report.kl_divergence = kl_divergence(before.attrs.counts, aligned_counts(before.attrs, out_attrs),
                                         before.classes.counts, alpha)
    return report


def _set_suppressed(report: KanonReport, cells: int) -> None:
    report.suppressed_cells = cells
    report.suppressed_ratio = cells / report.qi_cells


def _script_texts(dialect: str, report: KanonReport, source: Table, target: sql.TableName
                  ) -> tuple[str, list[str], list[tuple[str, str]]]:
    """Title, warnings and verification queries of the `--emit-sql` script."""
    title = (f"anonsql kanon: {source} -> {target}, k = {report.k}, cost = {report.cost}, "
             f"alpha = {report.alpha:g}, seed = {report.seed}\n"
             "-- Kameya & Hayashi (2016) bottom-up cell suppression, written back set-based:\n"
             "-- one decisions relation (group values -> cells to suppress) and one UPDATE.")
    warnings = ["PRIVATE: the decisions spell out ORIGINAL quasi-identifier values; keep this file as",
                "private as the source table, never publish it with the output."]
    out, qi = target.expr, sql.columns(report.qi)
    checks = [
        (f"k-anonymity: must return groups = 0, rows = 0 (no QI combination shared by fewer than {report.k} rows)",
         sql.readable("common/violations_summary", dialect, tbl=out, qi=qi, k=report.k)),
        (f"row count: must return {report.rows}",
         sql.readable("common/row_count", dialect, tbl=out)),
    ]
    if not report.in_place:
        others = sql.columns([c for c in source.column_names if c not in report.qi])
        checks += [(f"non-QI columns unchanged: must return 0 ({label})",
                    sql.readable("common/rows_not_in", dialect, a=a, b=b, col=others))
                   for label, a, b in (("source rows missing from the output", source.expr, out),
                                       ("output rows not in the source", out, source.expr))]
    return title, warnings, checks
