"""One release step = one existing job through its entry (anonsql.kanon.entry, ...: the job's own
input checks, then the job), on the release's open engine (so it joins the release's
transaction); the report carries the step's reviewable script. Jobs without --emit-sql (bin) and
the release's own drop step get their script from the statements the engine ran for them
(Engine.tracer)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlglot

from .. import sql
from ..catalog import drop_table, get_table, output_table
from ..ckm import entry as ckm
from ..data import binning
from ..data.loading import count_rows
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..kanon import diversity as kanon_models
from ..kanon import entry as kanon
from ..nbc import job as nbc
from ..protect import entry as protect
from ..report import Progress, Report
from ..rewrite import Script
from ..tables import entry as tables
from .plan import PlannedStep
from .spec import names

#: Statements worth putting in a script (reads and catalog look-ups are left out).
_WRITES = ("CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER")
_LEADING_COMMENTS = re.compile(r"^\s*(/\*.*?\*/\s*)*", re.S)


@dataclass(kw_only=True)
class DropReport(Report):
    """A copy of a table without the identifier columns a release drops."""

    dropped: list[str]

    def lines(self) -> list[str]:
        return [f"{self.table} -> {self.out}: dropped {', '.join(self.dropped)}"]


class Writes:
    """A tracer (Engine.tracer) keeping the writing statements a step runs, for its part of the script."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def __call__(self, text: str, params: Mapping[str, Any] | None) -> None:
        if _LEADING_COMMENTS.sub("", text).upper().startswith(_WRITES):
            if params:  # scripts show values as literals: this step's SQL is only shown as run
                text += f" /* parameters: {dict(params)} */"
            self.statements.append(text)

    def script(self, dialect: str, title: str) -> str:
        s = Script(dialect, title)
        for text in self.statements:
            pretty = sqlglot.transpile(text, read=dialect, write=dialect, pretty=True)[0]
            s.step("as executed (this job writes no --emit-sql script of its own)", pretty)
        return s.text()


def run_step(engine: Engine, step: PlannedStep, *, qi: list[str], class_column: str | None, key: str | None,
             replace: bool, progress: Progress | None) -> tuple[Report, str]:
    """Run one step; returns its report and its script, which the report carries (Report.script)."""
    report = _run(engine, step, qi=qi, class_column=class_column, key=key, replace=replace, progress=progress)
    return report, report.script or ""


def _run(engine: Engine, step: PlannedStep, *, qi: list[str], class_column: str | None, key: str | None,
         replace: bool, progress: Progress | None) -> Report:
    o, out = step.options, step.outputs[0]
    title = f"anonsql release step {step.number}: {step.kind} {step.input} -> {out}"
    if step.kind in ("drop", "bin"):
        writes = Writes()
        with engine.tracer(writes):
            if step.kind == "drop":
                report: Report = _drop(engine, step.input, names(o["columns"]), out, replace)
            else:
                report = binning.bin_table(engine, step.input, [f"{c}={r}" for c, r in o["columns"].items()], out,
                                           replace=replace)
        report.script = writes.script(engine.dialect, title)
        return report
    cls = o.get("class", class_column)
    if cls is None and step.kind in ("kanon", "nbc"):
        raise AnonsqlError(f"step {step.number} ({step.kind}) needs class = ... (or [source] class)")
    if step.kind == "kanon":
        report = kanon.k_anonymize(engine, step.input, names(o.get("qi")) or qi, cls, o["k"],
                                   cost=o.get("cost", "mar"), alpha=o.get("alpha", 1.0), seed=step.seed or 0,
                                   out=out, replace=replace, script=True, progress=progress, drop=o.get("drop"),
                                   pseudonymize=o.get("pseudonymize"), key_file=o.get("key_file"),
                                   hierarchy=o.get("hierarchies"),
                                   max_suppressed_records=o.get("max_suppressed_records", 0.05),
                                   hierarchy_bounds=o.get("hierarchy_bounds", False),
                                   search_utility=o.get("search_utility", "loss"),
                                   restore=o.get("restore", False), **{m: o[m] for m in kanon_models.KINDS if m in o})
    elif step.kind == "protect":
        row_key = o.get("key", key)
        if row_key is None:
            raise AnonsqlError(f"step {step.number} (protect) needs key = ... (or [source] key)")
        # qi / k: protect keeps k-anonymity over those QIs (protect's --qi / --k); passed only when given
        keep_k: dict[str, Any] = {"qi": names(o.get("qi")) or qi, "k": o.get("k")} if "qi" in o or "k" in o else {}
        report = protect.protect_table(engine, step.input, row_key, method=o.get("method", "dropp"),
                                       target=o.get("target"), rows=o.get("rows"),
                                       cells=[tuple(c) for c in o["cells"]] if isinstance(o.get("cells"), list)
                                       else o.get("cells"), attrs=o.get("attrs"), top_k=o.get("top_k"),
                                       seed=step.seed or 0, out=out, replace=replace, taxonomies=o.get("taxonomies"),
                                       script=True, progress=progress, **keep_k)
    elif step.kind == "nbc":
        report = nbc.run_publish(engine, step.input, cls, names(o.get("attrs")) or qi, o.get("rho"),  # type: ignore[arg-type]
                                 _prefix(step), replace=replace,
                                 precedence=o.get("precedence"), prior=o.get("prior"), r=o.get("r"),
                                 synthetic=o.get("synthetic", False), script=True, root=o.get("root", "paper"),
                                 progress=progress)
    elif o.get("method", "suppression") == "ckm":
        report = ckm.ckm_table(engine, step.input, names(o.get("dims")) or None, tables=o.get("tables"),
                               margins=o.get("margins", "cube"), record_key=o.get("record_key"),
                               record_key_column=o.get("record_key_column"), key_file=o.get("key_file"),
                               D=o.get("ckm_d", 3), V=o.get("ckm_v", 1.5), js=o.get("ckm_js", 1),
                               pstay=o.get("ckm_pstay"), measure=o.get("sum"), contributor=o.get("contributor"),
                               top_k=o.get("ckm_top_k", 1), scale=o.get("ckm_scale", "top"), m=o.get("ckm_m", 0.05),
                               hierarchy=o.get("hierarchy"), out=out, replace=replace, script=True, progress=progress)
    elif o.get("method", "suppression") != "suppression":
        raise AnonsqlError(f"step {step.number} (tables): method must be 'suppression' or 'ckm', got {o['method']!r}")
    else:
        report = tables.safe_table(engine, step.input, names(o.get("dims")) or None, tables=o.get("tables"),
                                   margins=o.get("margins", "cube"), measure=o.get("sum"),
                                   contributor=o.get("contributor"), min_count=o.get("min_count", 3),
                                   zero_unsafe=o.get("zero_unsafe", False), dominance=o.get("dominance"),
                                   p_percent=o.get("p_percent"), protection=o.get("protection", 0.0),
                                   hierarchy=o.get("hierarchy"), out=out,
                                   replace=replace, script=True, progress=progress, previous=o.get("previous"))
    return report


def _prefix(step: PlannedStep) -> str:
    """An nbc step's `out` is the prefix of <out>_class and <out>_attr."""
    return step.outputs[0].removesuffix("_class")


def _drop(engine: Engine, table: str, columns: list[str], out: str, replace: bool) -> DropReport:
    """CREATE TABLE out AS SELECT <every other column>, checked to keep every row."""
    source = get_table(engine, table)
    gone = source.resolve(columns)
    kept = [c for c in source.column_names if c not in gone]
    if not kept:
        raise AnonsqlError(f"dropping {', '.join(gone)} would leave {source} without columns")
    target, existing = output_table(engine, source, out, out, replace)
    report = DropReport(table=str(source), out=str(target), dropped=gone)
    with engine.transaction():
        if existing is not None:
            drop_table(engine, existing.expr)
        engine.execute(*sql.render("common/create_table_as", engine.dialect, out=target.expr, src=source.expr,
                                   item=sql.columns(kept)))
        before, after = count_rows(engine, source.expr), count_rows(engine, target.expr)
        report.check("same rows as the source", before == after, "common/row_count", f"{after:,} of {before:,}")
        if not report.ok:
            raise VerificationError(report.checks)
    return report
