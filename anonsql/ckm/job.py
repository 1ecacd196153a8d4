"""The CKM job: ptable from its parameters -> the published table by one SQL statement -> an
independent recount with the ptable lookup redone in numpy -> utility -> report; `audit`
re-derives a published CKM table from its public spec and re-checks it.

Writing and checking run in ONE transaction (staged outputs without transactions): a failed
check raises VerificationError inside it, so nothing is left behind. Three tables are written,
all public: <out> (labels, grouping_id, value; cells published as 0 left out), <out>_ptable
(the noise's law) and <out>_ckm_spec (names and parameters, never the key).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .. import sql
from ..catalog import Table, find_table, get_table, output_table, staged_outputs
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, save, silent
from ..tables.rewrite import check_names
from ..tables.spec import Spec, parse_assignment, parse_tables
from . import rewrite, verify
from .keys import RecordKeys
from .ptable import Params, Ptable, fingerprint, ptable
from .rewrite import Magnitude
from .utility import utility

PTABLE = "_ptable"
SPEC = "_ckm_spec"
#: The public tables written beside <out>, by their suffixes.
CKM_TABLES = (PTABLE, SPEC)


@dataclass(kw_only=True)
class CkmReport(Report):
    """A table published by the cell key method: where, how, and what the noise cost."""

    method: str = "ckm"
    ptable_table: str
    spec_table: str
    dims: list[str]
    tables: list[str]
    margins: str
    hierarchy: dict[str, str] = field(default_factory=dict)  # dimension -> stored taxonomy whose nodes are its totals
    record_keys: str  # "hmac-sha256" (from a unit key, the key never stored), "column" or "column-units"
    record_key_column: str
    D: int
    V: float
    js: int
    pstay: float | None
    ptable_fingerprint: str
    measure: str | None = None  # a magnitude table: the summed column
    contributor: str | None = None  # whose contributions scale its noise (None: the record key's unit)
    top_k: int | None = None
    scale: str | None = None  # 'top' (the sum of the top_k largest contributions) or 'mean'
    m: float | None = None  # the total's noise is m * scale * v
    #: ptable rows (original counts) whose variance is short of V (small counts: closest reached)
    variance_short: dict[str, float] = field(default_factory=dict)
    cells: int = 0  # published rows
    utility: dict = field(default_factory=dict)
    #: for comparison (--compare-suppression): the share of cells suppression would hide
    suppressed_share: float | None = None
    suppression_min_count: int | None = None
    suppression_cells: int | None = None  # its grid: every cell of the grouping sets, empty ones included
    emitted_sql: str | None = None  # where the reviewable script went (--emit-sql)

    def lines(self) -> list[str]:
        if not self.checks:  # a dry run: what it would write
            return [f"{self.table}: dry run, script written to {self.emitted_sql}; the database is unchanged",
                    f"  would write {self.out} ({', '.join(self.tables)}, margins {self.margins}; cell key method "
                    f"D={self.D} V={self.V:g} js={self.js}), {self.ptable_table} and {self.spec_table}"]
        u = self.utility
        short = "" if not self.variance_short else \
            f"; variance short of V for counts {', '.join(f'{k} ({v:.3g})' for k, v in self.variance_short.items())}"
        trees = "".join(f", {d} along taxonomy {t!r}" for d, t in self.hierarchy.items())
        out = [f"{self.table} -> {self.out} (ptable: {self.ptable_table}, spec: {self.spec_table}): "
               f"{', '.join(self.tables)}, margins {self.margins}{trees}; cell key method, record keys "
               f"{self.record_keys} of {self.record_key_column}",
               f"  ptable D={self.D} V={self.V:g} js={self.js} pstay={self.pstay if self.pstay is not None else '-'} "
               f"(fingerprint {self.ptable_fingerprint[:16]}){short}"]
        if u:
            sizes = ", ".join(f"{k}: {v:.3f}" for k, v in u["relative_by_size"].items())
            out.append(f"  cells {u['cells']:,} (published rows {self.cells:,}): changed {u['changed_share']:.1%}, "
                       f"mean |deviation| {u['mean_abs_deviation']:.3f}, largest {u['max_abs_deviation']}, "
                       f"Hellinger distance {u['hellinger']:.4f}; mean |deviation|/count by size {sizes}")
        if self.measure:
            scale = f"the {self.top_k} largest contribution(s)" if self.scale == "top" else "the mean contribution"
            out.append(f"  magnitude: sum of {self.measure}, noise {self.m:g} x scale x v, scale {scale}"
                       f" of {self.contributor or self.record_key_column}; mean |deviation|/total "
                       f"{u.get('total_mean_relative_deviation', 0):.4f}")
        if self.suppressed_share is not None:
            out += self.beside_suppression()
        return out


    def beside_suppression(self) -> list[str]:
        """CKM's changed cells beside the cells suppression would hide, as a small table: on the
        non-empty cells, and on suppression's whole grid (empty cells stay 0 under CKM)."""
        u, grid = self.utility, self.suppression_cells or 0
        changed = round(u.get("changed_share", 0) * u.get("cells", 0))
        rows = [("ckm, non-empty cells", u.get("cells", 0), f"{changed:,} changed", u.get("changed_share", 0),
                 f"{u.get('mean_abs_deviation', 0):.3f}"),
                ("ckm, whole grid", grid, f"{changed:,} changed", changed / grid if grid else 0.0,
                 f"{u.get('mean_abs_deviation', 0) * u.get('cells', 0) / grid if grid else 0:.3f}"),
                (f"suppression, min count {self.suppression_min_count}", grid,
                 f"{round((self.suppressed_share or 0) * grid):,} hidden", self.suppressed_share or 0.0, "-")]
        return ["  beside suppression on the same table:",
                f"    {'method':<28} {'cells':>10} {'affected':>18} {'share':>7} {'mean |deviation|':>17}",
                *[f"    {m:<28} {c:>10,} {a:>18} {s:>7.1%} {d:>17}" for m, c, a, s, d in rows]]


def run(engine: Engine, source: Table, spec: Spec, keys: RecordKeys, params: Params, *, out: str | None,
        replace: bool, magnitude: Magnitude | None = None, compare_min_count: int | None = None,
        progress: Progress | None = None, emit_sql: str | None = None, execute: bool = True,
        script: bool = False) -> CkmReport:
    """The whole job on validated input (anonsql.ckm.entry); its reviewable script (report.script)
    is built with `emit_sql` (then written there) or `script`; `execute` False: a dry run, nothing
    written to the database."""
    say = progress or silent
    check_names(spec.dims)
    taken = [d for d in spec.dims if d in rewrite.PUBLISHED or d.lower().startswith("ckm_")]
    if taken:
        raise AnonsqlError(f"dimension name(s) {', '.join(taken)} collide with the cell key method's columns "
                           f"({', '.join(rewrite.PUBLISHED)}, ckm_*); rename them in a view first")
    table = ptable(params.D, params.V, params.js, params.pstay)
    target, replaced = output_table(engine, source, out, f"{source.name}_ckm", replace)
    extra = [sql.TableName(f"{target.name}{suffix}", target.schema) for suffix in (PTABLE, SPEC)]
    olds = [find_table(engine, t) for t in extra]
    for old in olds:
        if old is not None and not replace:
            raise AnonsqlError(f"table {old} already exists (use --replace to overwrite it)")
    report = CkmReport(table=str(source), out=str(target), ptable_table=str(extra[0]), spec_table=str(extra[1]),
                       dims=spec.dims, tables=spec.names, margins=spec.margins, hierarchy=dict(spec.hierarchy),
                       record_keys=keys.kind,
                       record_key_column=keys.column, D=params.D, V=params.V, js=params.js, pstay=params.pstay,
                       ptable_fingerprint=table.fingerprint(), variance_short=_short(table))
    if spec.measure:
        magnitude = magnitude or Magnitude()
        report.measure, report.contributor = spec.measure, spec.contributor
        report.top_k, report.scale, report.m = magnitude.top_k, magnitude.scale, magnitude.m
    else:
        magnitude = None
    entries = spec_entries(source, spec, keys, table, magnitude)
    if emit_sql or script:
        dropped = [t.expr for t in (replaced, *olds) if t is not None]
        report.script = rewrite.script(engine.dialect, source, spec, keys, table,
                                       (target.expr, extra[0].expr, extra[1].expr), entries, dropped, magnitude)
        if emit_sql:
            save(emit_sql, report.script)
            report.emitted_sql = emit_sql
    if not execute:
        report.notes.append("dry run (--emit-sql only): nothing in the database changed, nothing was checked")
        return report
    if compare_min_count is not None:
        with report.timed("suppression (comparison)"):
            report.suppressed_share, report.suppression_cells = suppressed_share(engine, source, spec,
                                                                                 compare_min_count)
            report.suppression_min_count = compare_min_count
    outputs = [(target, replaced), *zip(extra, olds)]
    with engine.transaction(), staged_outputs(engine, outputs) as (staged, staged_ptable, staged_spec):
        with report.timed("rewrite"):
            rewrite.publish(engine, source, spec, keys, table, staged.expr, staged_ptable.expr, magnitude)
            rewrite.write_spec(engine, entries, staged_spec.expr)
        say(f"rewrite: one statement ({report.seconds['rewrite']:.2f} s)")
        with report.timed("verify"):
            written = get_table(engine, staged)
            cells = verify.recount(engine, source, written, spec, keys, magnitude)
            verify.checks(report, cells, table, stored_fingerprint(engine, staged_ptable), magnitude)
            report.cells = int((cells.published != 0).sum())
            report.utility = utility(cells.gid, cells.n, cells.published, cells.total, cells.value).as_dict()
        if not report.ok:
            raise VerificationError(report.checks)
    say(f"verify: every cell recounted, its noise looked up again ({report.seconds['verify']:.2f} s)")
    return report


def _short(table: Ptable) -> dict[str, float]:
    """The rows whose variance is not V (to 1e-9), by original count, with the variance reached."""
    return {str(i): float(v) for i, v in enumerate(table.variance) if i and abs(v - table.params.V) > 1e-9}


def spec_entries(source: Table, spec: Spec, keys: RecordKeys, table: Ptable,
                 magnitude: Magnitude | None = None) -> dict[str, str]:
    p = table.params
    out = {"method": "ckm", "source": str(source), "tables": ",".join(spec.names), "margins": spec.margins,
           "record_keys": keys.kind, "record_key_column": keys.column, "D": str(p.D), "V": repr(p.V),
           "js": str(p.js), "pstay": "" if p.pstay is None else repr(p.pstay), "fingerprint": table.fingerprint()}
    if spec.hierarchy:
        out["hierarchy"] = ",".join(f"{d}={t}" for d, t in spec.hierarchy.items())
    if spec.measure and magnitude is not None:
        out.update(measure=spec.measure, contributor=spec.contributor or "", top_k=str(magnitude.top_k),
                   scale=magnitude.scale, m=repr(magnitude.m))
    return out


def stored_fingerprint(engine: Engine, name: sql.TableName) -> str:
    """The fingerprint of a written ptable, from its rows."""
    rows = engine.fetch_all(*sql.render("ckm/read_table", engine.dialect, tbl=name.expr))
    arr = np.array([[int(r[0]), int(r[1]), int(r[3]), int(r[4])] for r in rows], np.int64).reshape(-1, 4)
    return fingerprint(*arr.T)


def suppressed_share(engine: Engine, source: Table, spec: Spec, min_count: int) -> tuple[float, int]:
    """The share of cells suppression (anonsql tables, min count `min_count`) would hide on the
    same table, and its cells (empty ones included): its job run without writing."""
    from ..tables import job as tables_job
    from ..tables.rules import Rules

    plain = Spec(spec.dims, spec.tables, spec.margins, rules=Rules(min_count), hierarchy=spec.hierarchy)
    done = tables_job.run(engine, source, plain, out=f"{source.name}_ckm_comparison", replace=True, bounds=False,
                          emit_sql=None, execute=False)
    return done.suppressed_share, done.cells


@dataclass(kw_only=True)
class PtableReport(Report):
    """A ptable shown (`anonsql tables ptable`): its parameters, rows and fingerprint."""

    PROVES: ClassVar[bool] = False

    D: int
    V: float
    js: int
    pstay: float | None
    fingerprint: str
    variance: list[float]  # reached by each row (original count)
    rows: list[dict]  # i, v, p, lo, hi

    def lines(self) -> list[str]:
        out = [f"ptable D={self.D} V={self.V:g} js={self.js} pstay={self.pstay if self.pstay is not None else '-'} "
               f"(fingerprint {self.fingerprint}); row i: p(i -> i + v) by noise v, the last row for every larger i"]
        for i, variance in enumerate(self.variance):
            cells = ", ".join(f"{r['v']:+d}: {r['p']:.6f}" for r in self.rows if r["i"] == i)
            out.append(f"  i={i}{'+' if i == len(self.variance) - 1 else ''}: {cells} (variance {variance:.6g})")
        return out


def show_ptable(params: Params) -> PtableReport:
    """The ptable of `params` as a report (nothing is read or written)."""
    table = ptable(params.D, params.V, params.js, params.pstay)
    lo, hi = table.intervals()
    rows = [{"i": int(i), "v": int(v), "p": float(p), "lo": int(a), "hi": int(b)}
            for i, v, p, a, b in zip(table.i, table.v, table.p, lo, hi)]
    return PtableReport(table="(ptable)", D=params.D, V=params.V, js=params.js, pstay=params.pstay,
                        fingerprint=table.fingerprint(), variance=[float(v) for v in table.variance], rows=rows)


@dataclass(kw_only=True)
class CkmAuditReport(Report):
    """A published CKM table re-derived from its spec and the source, and re-checked."""

    method: str = "ckm"
    dims: list[str] = field(default_factory=list)
    cells: int = 0
    ptable_fingerprint: str = ""

    def lines(self) -> list[str]:
        return [f"{self.out}: cell key method table of {self.table} over {', '.join(self.dims)}; {self.cells:,} "
                f"cells re-derived (ptable {self.ptable_fingerprint[:16]})"]


def is_ckm(engine: Engine, published: Table) -> bool:
    """Whether `published` was written by the cell key method (its spec table exists beside it)."""
    return find_table(engine, sql.TableName(f"{published.name}{SPEC}", published.schema)) is not None


def audit(engine: Engine, published: Table, key_file: str | None = None) -> CkmAuditReport:
    """Re-derive a CKM table: its spec read, the ptable rebuilt from the parameters (and compared
    with the stored one), every cell recounted from the source with its record keys (the key again
    from `key_file` or the environment) and the published value required."""
    from .keys import record_keys

    spec_rows = engine.fetch_all(*sql.render("ckm/read_table", engine.dialect, tbl=sql.TableName(
        f"{published.name}{SPEC}", published.schema).expr))
    entries = {str(k): str(v) for k, v in spec_rows}
    source = get_table(engine, entries["source"])
    groups = [source.resolve(g) for g in parse_tables(entries["tables"])]
    names = list(dict.fromkeys(d for g in groups for d in g))
    measure = entries.get("measure")
    trees = parse_assignment(entries["hierarchy"], "hierarchy") if entries.get("hierarchy") else {}
    spec = Spec(names, [[names.index(d) for d in g] for g in groups], entries["margins"], measure,
                entries.get("contributor") or None, hierarchy=trees)
    magnitude = Magnitude(int(entries["top_k"]), entries["scale"], float(entries["m"])) if measure else None
    column = entries["record_key_column"]
    keys = record_keys(column, None, key_file) if entries["record_keys"] == "hmac-sha256" else \
        RecordKeys(column, units=entries["record_keys"] == "column-units")
    table = ptable(int(entries["D"]), float(entries["V"]), int(entries["js"]),
                   float(entries["pstay"]) if entries["pstay"] else None)
    report = CkmAuditReport(table=str(source), out=str(published), dims=names, ptable_fingerprint=table.fingerprint())
    with report.timed("verify"):
        report.check("the spec's fingerprint is the ptable its parameters give",
                     entries["fingerprint"] == table.fingerprint(), "ckm/read_table")
        stored = stored_fingerprint(engine, sql.TableName(f"{published.name}{PTABLE}", published.schema))
        cells = verify.recount(engine, source, published, spec, keys, magnitude)
        verify.checks(report, cells, table, stored, magnitude)
        report.cells = len(cells.n)
    return report
