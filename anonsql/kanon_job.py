"""The kanon job: SQL statistics → Kameya & Hayashi loop → set-based UPDATE → SQL verify → report.

The rewrite and the verification run in ONE transaction: a failed check rolls back the new
table (or, with in_place, every change to the source) before the error is raised.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import kanon, sql, stats, verify
from .catalog import Table, get_table, output_table
from .engine import Engine
from .errors import AnonsqlError
from .loading import drop_table
from .rewrite import suppression_plan


@dataclass
class KanonReport:
    table: str
    out: str
    in_place: bool
    qi: list[str]
    class_column: str
    k: int
    cost: str
    alpha: float
    seed: int
    rows: int
    qi_cells: int
    suppressed_cells: int  # cells newly NULL, recounted by SQL on the output
    suppressed_ratio: float
    kl_divergence: float  # eq. 7, original vs output, from SQL counts
    iterations: int
    groups: int  # distinct (QI, class) tuples |S| of the source
    changed_groups: int  # groups whose rows got a new pattern
    verified: bool
    seconds: dict[str, float] = field(default_factory=dict)
    gamma_sum: float = 0.0  # Σ Γ over all merges; equals kl_divergence for cost 'mar'
    notes: list[str] = field(default_factory=list)
    emitted_sql: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def aligned_counts(src: stats.AttrClassCounts, other: stats.AttrClassCounts) -> list[np.ndarray]:
    """`other`'s N(x_j, c) tables laid out on `src`'s value dictionaries and class order."""
    out = []
    cls = [list(other.class_values).index(c) if c in other.class_values else None for c in src.class_values]
    for j in range(len(src.attrs)):
        pos = {v: i for i, v in enumerate(other.values[j])}
        table = np.zeros_like(src.counts[j])
        for i, v in enumerate(src.values[j]):
            if v in pos:
                table[i] = [other.counts[j][pos[v], c] if c is not None else 0 for c in cls]
        out.append(table)
    return out


def run_kanon(engine: Engine, source: Table, rows: int, qi: Sequence[str], class_col: str, k: int, *,
              cost: str, alpha: float, seed: int, out: str | None, in_place: bool, replace: bool,
              emit_sql: str | None, execute: bool,
              progress: Callable[[str], None] | None = None) -> KanonReport:
    """Run the whole job on validated input (see anonsql.api.k_anonymize for the checks)."""
    say = progress or (lambda _msg: None)
    seconds: dict[str, float] = {}
    target, replaced = output_table(engine, source, out, f"{source.name}_k{k}", replace, in_place)

    start = time.perf_counter()
    groups = stats.qi_class_counts(engine, source, qi, class_col)
    src_attrs = stats.attr_class_counts(engine, source, qi, class_col)
    src_classes = stats.class_counts(engine, source, class_col)
    seconds["statistics"] = time.perf_counter() - start
    say(f"statistics: {rows:,} rows, {len(groups.counts):,} distinct (QI, class) tuples "
        f"({seconds['statistics']:.2f} s)")

    notes = _cardinality_warnings(groups)
    for note in notes:
        say("warning: " + note)

    start = time.perf_counter()
    loop_progress = (lambda it, left: say(f"  iteration {it:,}: {left:,} violating tuples left")) if progress else None
    result = kanon.anonymize(groups.codes, groups.classes, groups.counts, groups.domain_sizes,
                             k=k, cost=cost, alpha=alpha, seed=seed, progress=loop_progress)
    seconds["loop"] = time.perf_counter() - start
    say(f"loop: {result.iterations:,} merges ({seconds['loop']:.2f} s)")

    plan = suppression_plan(source.expr, target.expr, qi, class_col,
                            groups.keys, groups.codes, result.final_codes, copy=not in_place)
    if emit_sql:
        with open(emit_sql, "w") as fh:
            fh.write(_script_header(source, target, k, cost, seed) + plan.script(engine))
    report = KanonReport(
        table=str(source), out=str(target), in_place=in_place, qi=list(qi), class_column=class_col, k=k,
        cost=cost, alpha=alpha, seed=seed, rows=rows, qi_cells=rows * len(qi),
        suppressed_cells=int(result.suppressed_cells), suppressed_ratio=0.0, kl_divergence=float("nan"),
        iterations=result.iterations, groups=len(groups.counts), changed_groups=len(plan.keys),
        verified=False, seconds=seconds, gamma_sum=float(np.sum(result.gammas)), emitted_sql=emit_sql,
        notes=notes,
    )
    report.suppressed_ratio = report.suppressed_cells / report.qi_cells
    if not execute:
        report.notes.append("not executed (--emit-sql only): nothing in the database changed")
        return report

    with engine.transaction():
        start = time.perf_counter()
        if replaced is not None:
            drop_table(engine, replaced.expr)
        plan.execute(engine)
        seconds["rewrite"] = time.perf_counter() - start
        say(f"rewrite: {len(plan.keys):,} groups changed ({seconds['rewrite']:.2f} s)")

        start = time.perf_counter()
        written = get_table(engine, target)
        out_attrs = stats.attr_class_counts(engine, written, qi, class_col)
        check = verify.suppression(
            engine, written, qi, class_col, k, source_rows=rows, source_attrs=src_attrs,
            source_classes=src_classes, out_attrs=out_attrs, source=None if in_place else source,
        )
        if check.suppressed_cells != result.suppressed_cells:
            check.problems.append(f"SQL counts {check.suppressed_cells} newly NULL cells, "
                                  f"the algorithm {result.suppressed_cells}")
        seconds["verify"] = time.perf_counter() - start
        if check.problems:
            raise AnonsqlError("verification failed, nothing was changed: " + "; ".join(check.problems))
    say(f"verify: k-anonymous, rows and classes kept, only NULLs added ({seconds['verify']:.2f} s)")
    report.verified = True
    report.suppressed_cells = check.suppressed_cells
    report.suppressed_ratio = check.suppressed_cells / report.qi_cells
    report.kl_divergence = kanon.kl_divergence(src_attrs.counts, aligned_counts(src_attrs, out_attrs),
                                               src_classes.counts, alpha)
    return report


#: A QI with more distinct values than this is almost unique per row: suppression must blank
#: nearly all of it, so anonsql suggests binning it first.
MANY_VALUES = 1000


def _cardinality_warnings(groups: stats.QIClassCounts) -> list[str]:
    return [
        f"quasi-identifier '{name}' has {size:,} distinct values: cell suppression will blank most of it; "
        f"bin it first: anonsql bin --bin {name}=width:W (or {name}=quantiles:Q)"
        for name, size in zip(groups.qi, groups.domain_sizes) if size > MANY_VALUES
    ]


def _script_header(source: Table, target: sql.TableName, k: int, cost: str, seed: int) -> str:
    return (f"-- anonsql kanon: {source} -> {target}, k = {k}, cost = {cost}, seed = {seed}\n"
            "-- Kameya & Hayashi (2016) bottom-up cell suppression, written back set-based:\n"
            "-- one decisions relation (group key -> cells to suppress) and one UPDATE.\n"
            "-- The group keys spell out ORIGINAL quasi-identifier values: keep this file as\n"
            "-- private as the source table, never publish it with the output.\n\n")
