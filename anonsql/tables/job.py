"""The tables job: SQL cells -> primary rules -> secondary suppression (exact elimination, then the
attacker's LP) -> published table and audit -> independent SQL and LP checks -> report.

Writing and checking run in ONE transaction: a failed check raises VerificationError inside
it, so neither the published table nor its audit is left behind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .. import sql
from ..catalog import Table, find_table, get_table, output_table, staged_outputs
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, save, silent
from . import verify
from .cells import TOTAL, Grid
from .previous import read as read_pattern
from .protection import Protection
from .rewrite import PUBLISHED, check_names, publication
from .rules import by_magnitude, primary, upper_levels
from .spec import Spec
from .stats import gather
from .suppress import protect
from .unions import Unions, magnitude
from .unions import check as check_unions

#: The private audit's name: the published table's, then this (private by name, as the project's rule asks).
PRIVATE_AUDIT = "_private_audit"


@dataclass(kw_only=True)
class TablesReport(Report):
    """A published aggregate table: its layout, the suppression pattern and the attack's result."""

    PROTECTS: ClassVar[str] = ("reading a small group or a dominant contributor out of published counts or sums, "
                               "directly or by arithmetic on the totals (primary and secondary cell suppression)")

    audit_table: str
    dims: list[str]
    tables: list[str]
    margins: str
    hierarchy: dict[str, str]  # dimension -> stored taxonomy whose nodes are its totals
    measure: str | None
    contributor: str | None
    min_count: int
    zero_unsafe: bool
    dominance: tuple[int, float] | None
    p_percent: float | None
    protection: float  # percent of the cell value each side (0: width > 0)
    allow_empty_secondaries: bool = False
    structural_zeros: int = 0
    cells: int = 0
    statuses: dict[str, int] = field(default_factory=dict)  # s safe, u primary, x secondary, z forced
    reasons: dict[str, int] = field(default_factory=dict)  # hidden and forced cells by reason (private audit's)
    suppressed_share: float = 0.0  # hidden cells / cells
    suppressed_value_share: float = 0.0  # value of hidden cells / value of all cells
    pinned_primary_only: int = 0  # primaries the attacker recomputes exactly when only they are hidden
    exposed_primary_only: int = 0  # ... or bounds short of their protection (whole numbers for counts)
    linear_secondaries: int = 0
    pinned_after_linear: int = 0
    lp_secondaries: int = 0
    redundant: int = 0  # secondaries published again by the clean-up (every primary kept its protection)
    union_secondaries: int = 0  # so that no union of a dominance primary's hidden companions is dominated
    integer_exposed: int = 0  # primaries the LP protected and the whole numbers exposed (then repaired)
    previous: str | None = None  # last period's table whose pattern was kept where it could be (--previous)
    pattern_changes: dict[str, int] | None = None  # against it: cells newly suppressed, cells published again
    integer_unproven: int = 0  # ... where a hypercube was suppressed instead of the MILP (cube margins, taxonomies too)
    certified: int = 0  # primaries a hidden hypercube protects, found without a solver
    smallest_width: float | None = None  # over primaries, by the independent attack (None: dry run)
    emitted_sql: str | None = None

    def lines(self) -> list[str]:
        s = self.statuses
        trees = "".join(f", {d} along taxonomy {t!r}" for d, t in self.hierarchy.items())
        head = (f"{self.table} -> {self.out} (audit: {self.audit_table}): {', '.join(self.tables)}, margins "
                f"{self.margins}{trees}" if self.checks else
                f"{self.table}: dry run, script written to {self.emitted_sql}; the database is unchanged")
        width = "" if self.smallest_width is None else f"; smallest attacker interval of a primary cell " \
                                                        f"{self.smallest_width:g}"
        return [
            head,
            f"  cells {self.cells:,}: safe (s) {s.get('s', 0):,}, primary (u) {s.get('u', 0):,}, "
            f"secondary (x) {s.get('x', 0):,}, forced (z) {s.get('z', 0):,}; suppressed "
            f"{self.suppressed_share:.1%} of the cells, "
            f"{self.suppressed_value_share:.1%} of the value",
            f"  reasons: {', '.join(f'{k} {v:,}' for k, v in self.reasons.items()) or 'none'}",
            f"  primaries pinned with primary suppression alone {self.pinned_primary_only:,} (exposed "
            f"{self.exposed_primary_only:,}); secondaries "
            f"from exact elimination {self.linear_secondaries:,}, then pinned {self.pinned_after_linear:,}, "
            f"secondaries from the attacker's LP {self.lp_secondaries:,} (exposed over whole numbers only "
            f"{self.integer_exposed:,}), published again as redundant {self.redundant:,}{width}",
            f"  primaries proved safe by a hypercube of hidden cells, without a solver: {self.certified:,}; "
            f"hypercubes hidden where only a whole-table integer program could have told: "
            f"{self.integer_unproven:,}",
        ] + ([f"  secondaries so that no union of a dominance primary's suppressed companions is dominated "
              f"{self.union_secondaries:,}"] if self.dominance or self.p_percent is not None else []) \
            + ([f"  against the previous pattern ({self.previous}): {sum(self.pattern_changes.values()):,} cells "
                f"changed (newly suppressed {self.pattern_changes['suppressed']:,}, published again "
                f"{self.pattern_changes['published']:,})"] if self.pattern_changes is not None else [])


@dataclass(kw_only=True)
class AuditReport(Report):
    """The attack on a published table: is any primary (u) cell pinned?"""

    #: A pinned cell's bounds are its original value: never in a public artefact (Report.public_dict).
    PRIVATE = ("pinned",)

    dims: list[str]
    cells: int
    primary_cells: int
    primaries_from: str = ""  # the private audit the primaries were read from, or every suppressed cell
    pinned: list[dict] = field(default_factory=list)
    smallest_width: float | None = None

    def lines(self) -> list[str]:
        out = [f"{self.table}: {self.cells:,} cells over {', '.join(self.dims)}; the attacker's LP pins "
               f"{len(self.pinned):,} of {self.primary_cells:,} primary cells ({self.primaries_from})"
               + ("" if self.smallest_width is None else f" (smallest interval {self.smallest_width:g})")]
        out += [f"  pinned: {p['labels']} = {p['lower']:g}" for p in self.pinned[:10]]
        return out


def run(engine: Engine, source: Table, spec: Spec, *, out: str | None, replace: bool, bounds: bool,
        emit_sql: str | None, execute: bool, progress: Progress | None = None, script: bool = False,
        previous: Table | None = None) -> TablesReport:
    """The whole job on validated input (see anonsql.tables.request); its script (report.script)
    is built with `emit_sql` (then written there) or `script`; `previous`: last period's table
    (anonsql.tables.previous), whose suppressed cells are the secondaries chosen first."""
    say = progress or silent
    check_names(spec.dims)
    target, replaced = output_table(engine, source, out, f"{source.name}_tables", replace)
    audit = sql.TableName(f"{target.name}{PRIVATE_AUDIT}", target.schema)
    old_audit = find_table(engine, audit)
    if old_audit is not None and not replace:
        raise AnonsqlError(f"audit table {old_audit} already exists (use --replace to overwrite it)")
    r = spec.rules
    trees = set(spec.hierarchy)
    if any(not trees <= {spec.dims[j] for j in t} for t in spec.tables):
        raise AnonsqlError("with --hierarchy every linked table must have the taxonomy's dimension(s) "
                           f"{', '.join(sorted(trees))}")
    report = TablesReport(table=str(source), out=str(target), audit_table=str(audit), dims=spec.dims,
                          tables=spec.names, margins=spec.margins, hierarchy=dict(spec.hierarchy), measure=spec.measure,
                          contributor=spec.contributor, min_count=r.min_count, zero_unsafe=r.zero_unsafe,
                          dominance=r.dominance, p_percent=r.p_percent, protection=spec.protection.level,
                          allow_empty_secondaries=spec.protection.allow_empty, emitted_sql=emit_sql)
    with report.timed("statistics"):
        grid, labels = gather(engine, source, spec)
    say(f"statistics: {len(grid.codes):,} cells ({report.seconds['statistics']:.2f} s)")
    with report.timed("primary"):
        reasons = primary(grid, spec.rules)
        levels = upper_levels(grid, spec.rules)
    protection = policy(spec)

    def label(c: int) -> str:
        return ", ".join(f"{d}={labels[j][k]}" for j, (d, k) in enumerate(zip(spec.dims, grid.codes[c])))

    zeros = _cells(spec.zeros, "--structural-zeros", spec, grid, labels)
    full = [label(c) for c in zeros if grid.freq[c] > 0]
    if full:
        raise AnonsqlError(f"--structural-zeros: {full[0]} is not empty in {source}")
    report.structural_zeros = len(zeros)
    last = None if previous is None else read_pattern(engine, previous, spec.dims, grid, labels)
    targets = by_magnitude(reasons)
    repair = Unions(engine, source, spec, grid, labels, targets) if magnitude(spec) else None
    with report.timed("secondary"):
        cube = spec.margins == "cube" and len(spec.tables) == 1
        outcome = protect(grid, reasons, protection, cube=cube, forced=_cells(spec.forced, "--publish", spec, grid,
                                                                             labels),
                          zeros=zeros, levels=levels, bounds_all=bounds, label=label, progress=say,
                          preferred=None if last is None else last.hidden, unions=repair)
    report.seconds.update({f"secondary: {k}": v for k, v in outcome.seconds.items()})
    hidden = (outcome.status == "u") | (outcome.status == "x")
    report.cells = len(grid.codes)
    report.statuses = {s: int((outcome.status == s).sum()) for s in "suxz"}
    why = [_reason(str(st), reasons[c], outcome.reason[c]) for c, st in enumerate(outcome.status)]
    report.reasons = {k: why.count(k) for k in dict.fromkeys(sorted(set(why) - {"safe"}))}
    report.suppressed_share = float(hidden.mean()) if len(hidden) else 0.0
    total = float(grid.value.sum())
    report.suppressed_value_share = float(grid.value[hidden].sum()) / total if total else 0.0
    report.pinned_primary_only, report.linear_secondaries = outcome.pinned_primary_only, outcome.linear_secondaries
    report.exposed_primary_only, report.integer_exposed = outcome.exposed_primary_only, outcome.integer_exposed
    report.integer_unproven, report.certified = outcome.integer_unproven, outcome.certified
    report.pinned_after_linear, report.lp_secondaries = outcome.pinned_after_linear, outcome.lp_secondaries
    report.union_secondaries, report.redundant = outcome.union_secondaries, outcome.redundant
    if last is not None:
        newly, again = last.changes(hidden)
        report.previous, report.pattern_changes = last.table, {"suppressed": newly, "published": again}
    say(f"secondary: {report.statuses['x']:,} cells for {report.statuses['u']:,} primaries "
        f"({report.seconds['secondary']:.2f} s)")

    pub = publication(grid, labels, outcome, why, spec.dims, target.expr, audit.expr, bounds=bounds,
                      integer=protection.integer)
    replaced_tables = [t.expr for t in (replaced, old_audit) if t is not None]
    if emit_sql or script:
        report.script = pub.script(engine.dialect, _title(report), replaced_tables,
                                   [verify.recount_script(engine.dialect, source, target.expr, spec)])
        if emit_sql:
            save(emit_sql, report.script)
    if not execute:
        report.notes.append("dry run (--emit-sql only): nothing in the database changed, nothing was checked")
        return report

    # Without transactions (Spark) both tables are written and checked under staging names and
    # renamed into place together only when every check holds (anonsql.catalog.staged_outputs).
    outputs = [(target, replaced), (audit, old_audit)]
    with engine.transaction(), staged_outputs(engine, outputs) as (staged, staged_audit):
        with report.timed("rewrite"):
            dataclasses.replace(pub, out=staged.expr, audit=staged_audit.expr).execute(engine)
        with report.timed("verify"):
            written = get_table(engine, staged)
            truth = verify.published(engine, report, source, written, spec)
            keys = {c: (tuple(labels[j][k] for j, k in enumerate(grid.codes[c])), int(grid.grouping_id[c]))
                    for c in np.flatnonzero(outcome.status == "u")}
            level = {key: float(levels[c]) for c, key in keys.items()}
            result = verify.attack(engine, written, spec.dims, spec.hierarchy, set(keys.values()), protection.floor,
                                   protection.integer, truth,
                                   lambda key, lo, hi: protection.holds(truth[key], lo, hi, level[key]), say)
            report.smallest_width = verify.protection(report, result, truth, protection, level)
            check_unions(engine, report, source, written, spec, {key for c, key in keys.items() if targets[c]})
        if not report.ok:
            raise VerificationError(report.checks)
    say(f"verify: values recounted, rules hold, no primary pinned ({report.seconds['verify']:.2f} s)")
    return report


def policy(spec: Spec) -> Protection:
    """The protection of a run with what its policy tells the attacker: a frequency table's counts
    are whole numbers, exposed inside [1, n-1] under the minimum count n, and when empty cells
    are published (not --zero-unsafe) and never secondaries, every hidden cell holds a row."""
    counts = spec.measure is None
    floor = 1.0 if counts and not spec.rules.zero_unsafe and not spec.protection.allow_empty else 0.0
    return dataclasses.replace(spec.protection, small=spec.rules.min_count if counts else 0, integer=counts,
                               floor=floor)


def _reason(status: str, rule: tuple[str, str] | None, detail: str) -> str:
    """A cell's reason in the private audit: the rule a primary fails, or what its status says."""
    if status == "u":
        return rule[0] if rule else "primary"
    if status == "z":
        return "structural zero" if detail.startswith("structural zero") else "forced"
    return {"x": "secondary", "s": "safe"}[status]


def _cells(cells: list[dict[str, str]], option: str, spec: Spec, grid: Grid, labels: list[list[Any]]) -> list[int]:
    """The cells named by `option` (a dimension left out, or labelled as its total, sums it)."""
    out = []
    for cell in cells:
        unknown = sorted(set(cell) - set(spec.dims))
        if unknown:
            raise AnonsqlError(f"{option} names {', '.join(unknown)}, not a dimension of the table "
                               f"({', '.join(spec.dims)})")
        codes = []
        for j, d in enumerate(spec.dims):
            names = [str(v) for v in labels[j]]
            text = cell.get(d, names[-1])
            text = names[-1] if text == "Total" and text not in names else text  # a taxonomy's root
            if text not in names:
                raise AnonsqlError(f"{option}: {d}={text!r} is not a label of dimension {d}")
            codes.append(TOTAL if text == names[-1] else names.index(text))
        at = int(grid.index(np.array([codes]))[0])
        if at < 0:
            raise AnonsqlError(f"{option}: {cell} is not a cell of the published table (its margins are "
                               f"{spec.margins})")
        out.append(at)
    return out


def audit(engine: Engine, published: Table, hierarchy: Mapping[str, str] | None = None) -> AuditReport:
    """Re-run the attack on a published table (its own rows, and the stored taxonomies of its
    `hierarchy` dimensions): any pinned primary fails. The primaries are read from the table's
    private audit when it exists (the owner's check); else every suppressed cell counts as one."""
    missing = [c for c in PUBLISHED if c not in published.column_names]
    if missing:
        raise AnonsqlError(f"{published} is not a published table of 'anonsql tables' (no column "
                           f"{', '.join(missing)})")
    dims = [c for c in published.column_names if c not in PUBLISHED]
    private = find_table(engine, sql.TableName(f"{published.name}{PRIVATE_AUDIT}", published.schema))
    report = AuditReport(table=str(published), dims=dims, cells=0, primary_cells=0,
                         primaries_from=f"{published}{PRIVATE_AUDIT}" if private else "every suppressed cell")
    with report.timed("attack"):
        unknown = sorted(set(hierarchy or {}) - set(dims))
        if unknown:
            raise AnonsqlError(f"--hierarchy names {', '.join(unknown)}, not a dimension of {published}")
        targets = None
        if private is not None:
            rows = engine.fetch_all(*sql.render("tables/private_primaries", engine.dialect, audit=private.expr,
                                                label=sql.columns(dims)))
            targets = {(tuple(r[:-1]), int(r[-1])) for r in rows}
        result = verify.attack(engine, published, dims, hierarchy, targets)
    pinned = result.pinned()
    report.cells, report.primary_cells = result.cells, len(result.intervals)
    report.pinned = [dict(labels=list(i.labels), grouping_id=i.grouping_id, lower=i.lower) for i in pinned]
    report.smallest_width = min((i.width for i in result.intervals), default=None)
    report.check("no primary cell pinned by the attacker's LP", not pinned, "tables/published_cells",
                 "" if not pinned else f"{len(pinned)} primary cells recomputable exactly")
    return report


def _title(report: TablesReport) -> str:
    rules = [f"min count {report.min_count}"] + ([f"({report.dominance[0]},{report.dominance[1]:g})-dominance"]
                                                 if report.dominance else []) \
        + ([f"p% {report.p_percent:g}"] if report.p_percent is not None else [])
    return (f"anonsql tables: {report.table} -> {report.out} and {report.audit_table}; {', '.join(report.tables)}, "
            f"margins {report.margins}; {', '.join(rules)}\n"
            "-- primary and secondary cell suppression checked by the attacker's LP (published status: published "
            "or suppressed; private audit: s safe, u primary, x secondary, z forced)")
