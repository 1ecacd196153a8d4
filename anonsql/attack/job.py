"""The attack room's jobs: measure re-identification risk (`anonsql risk`) and run the linkage
attack (`anonsql attack linkage`) on what is published. Both only read, so they have no rewrite;
their gates (attack/verify.py) are checks on the figures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..catalog import Table
from ..data.risk import Reidentification, reidentification
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from . import stats, uniqueness, verify
from .linkage import Linkage, summarize
from .refine import CountTable, Kanon, foreign_values
from .refine import refine as candidate_sets
from .stats import PopulationRisk
from .uniqueness import Uniqueness


@dataclass(kw_only=True)
class RiskReport(Report):
    """Re-identification risk of a table over its quasi-identifiers: prosecutor, and against the
    population journalist, marketer and individual risk, and population uniqueness."""

    PROVES: ClassVar[bool] = False  # a measurement; its gates, when asked, are its checks

    rows: int
    qi: list[str]
    prosecutor: Reidentification
    class_sizes: list[tuple[int, int]] = field(default_factory=list)  # (|E|, classes of that size)
    population: PopulationRisk | None = None
    uniqueness: Uniqueness | None = None

    @property
    def journalist(self) -> float:
        """max 1/F_k; without a population the sample is taken as the population (= prosecutor risk)."""
        return self.population.journalist if self.population else self.prosecutor.max_risk

    def lines(self) -> list[str]:
        lines = [f"table {self.table}: {self.rows:,} rows; quasi-identifiers {', '.join(self.qi)}",
                 *self.prosecutor.lines()]
        lines += self.population.lines() if self.population else []
        u = self.uniqueness
        if u is not None:
            def share(x: float) -> str:
                return "no estimate" if x != x else f"{u.share(x):.4%}"
            lines += [f"  population uniqueness (sampling fraction {u.sampling_fraction:g}, N = {u.population:,.0f}, "
                      f"{u.sample_uniques:,} sample uniques):",
                      f"    Pitman {share(u.pitman)}, Zayatz {share(u.zayatz)}, SNB {share(u.snb)}; "
                      f"Dankar's rule ({u.dankar_model}): {share(u.dankar)} of the population"]
        return lines


@dataclass(kw_only=True)
class LinkageReport(Report):
    """The linkage attack on a published table: how many attackers single out their own row."""

    PROVES: ClassVar[bool] = False

    source: str
    qi: list[str]
    key: str | None
    linkage: Linkage

    def lines(self) -> list[str]:
        k = self.linkage
        lines = [f"linkage attack on {self.table}: {k.attackers:,} attackers hold the quasi-identifiers "
                 f"{', '.join(self.qi)} of {self.source}",
                 f"  unique matches: {k.unique_matches:,} (expected share of correct unique matches "
                 f"{k.expected_share:.4%}); expected correct matches, picking among the candidates: "
                 f"{k.expected_correct:,.1f}"]
        realized = k.realized_share
        lines.append(f"  realized share of correct unique matches: {realized:.4%} ({k.realized_correct:,} people)"
                     if realized is not None else
                     "  realized share not measured: it needs --key, a row key kept in both tables")
        lines += [f"  {b.m} candidates: {b.attackers:,} attackers" for b in k.by_candidates[:10]]
        return lines


def risk(engine: Engine, table: Table, qi: Sequence[str], rows: int, *, threshold: float,
         population: Table | None = None, weights: str | None = None, sampling_fraction: float | None = None,
         max_journalist_risk: float | None = None) -> RiskReport:
    """Every risk figure of `table` over `qi` (validated by attack.entry)."""
    report = RiskReport(table=str(table), rows=rows, qi=list(qi),
                        prosecutor=reidentification(engine, table, qi, threshold))
    with report.timed("classes"):
        report.class_sizes = stats.class_sizes(engine, table, qi)
    if population is not None or weights is not None:
        with report.timed("population"):
            report.population = stats.population_risk(engine, table, qi, threshold, population=population,
                                                      weights=weights)
        if report.population.short_classes:
            report.notes.append(f"{report.population.short_classes:,} sample classes have a population count "
                                "below their sample count (taken as equal): is the population complete?")
    fraction = sampling_fraction
    if fraction is None and report.population is not None:
        fraction = rows / report.population.population if report.population.population > 0 else math.inf
        if fraction > 1 and population is not None:
            raise AnonsqlError(f"the population {population} ({report.population.population:,.0f} rows) is smaller "
                               f"than the sample ({rows:,} rows)")
        if fraction > 1:
            report.notes.append(f"the weights sum to {report.population.population:,.4g}, fewer than the rows: no "
                                "population uniqueness without --sampling-fraction")
            fraction = None
    if fraction is not None:
        with report.timed("uniqueness"):
            report.uniqueness = uniqueness.estimate(report.class_sizes, fraction)
    if max_journalist_risk is not None:
        verify.journalist_gate(report, report.journalist, max_journalist_risk, report.population is not None)
    return report


def linkage(engine: Engine, published: Table, source: Table, qi: Sequence[str], key: str | None, *,
            max_linkage_success: float | None = None) -> LinkageReport:
    """The linkage attack of `source`'s people on `published` (validated by attack.entry)."""
    report = LinkageReport(table=str(published), source=str(source), qi=list(qi), key=key,
                           linkage=Linkage(0, 0, 0.0, None, 0))
    with report.timed("linkage"):
        report.linkage = summarize(stats.linkage_counts(engine, published, source, qi, key), with_key=key is not None)
    if report.linkage.unmatched:
        report.notes.append(f"{report.linkage.unmatched:,} attackers match no published row (their rows were "
                            "dropped or changed beyond suppression)")
    if max_linkage_success is not None:
        verify.linkage_gate(report, report.linkage, max_linkage_success)
    return report


@dataclass(kw_only=True)
class DifferenceReport(Report):
    """The differencing attack on two published safe tables of overlapping rows: what the pair
    gives away that each table keeps (labels only: a pinned cell's value is the secret itself)."""

    PROVES: ClassVar[bool] = False

    later: str
    dims: list[str]
    min_count: int
    primaries: int  # hidden cells attacked: primaries of both tables (every hidden cell without a private audit)
    exposed: list[dict[str, Any]] = field(default_factory=list)  # {"table", "labels", "grouping_id"}
    exposed_added: list[dict[str, Any]] = field(default_factory=list)  # cells of the added rows, 0 < count < n

    def lines(self) -> list[str]:
        lines = [f"difference attack on {self.table} and {self.later} (the later table counts the earlier's rows "
                 f"and rows added since), dimensions {', '.join(self.dims)}: {self.primaries:,} primary cells",
                 f"  primary cells the pair recomputes exactly: {len(self.exposed):,}",
                 f"  cells of the added rows recomputed exactly with a count below {self.min_count}: "
                 f"{len(self.exposed_added):,}"]
        lines += [f"    {c['table']}: {', '.join(map(str, c['labels']))}" for c in [*self.exposed,
                                                                                  *self.exposed_added][:20]]
        return lines


def difference(engine: Engine, earlier: Table, later: Table, dims: Sequence[str], min_count: int) -> DifferenceReport:
    """The tables' attacker (anonsql.tables.verify.attack) over both published tables at once."""
    from ..tables import verify as tables_verify

    report = DifferenceReport(table=str(earlier), later=str(later), dims=list(dims), min_count=min_count,
                              primaries=0)
    combined, part = stats.difference_cells(earlier, later, dims)
    with report.timed("attack"):
        own = {"earlier": stats.primaries(engine, earlier, dims), "later": stats.primaries(engine, later, dims)}
        targets = {(labels + ("earlier",), 2 * g) for labels, g in own["earlier"]} | \
            {(labels + (None,), 2 * g + 1) for labels, g in own["later"]} | \
            {(labels + ("added",), 2 * g) for labels, g in stats.cells(engine, later, dims)}
        report.primaries = len(own["earlier"]) + len(own["later"])
        result = tables_verify.attack(engine, combined, [*dims, part], None, targets)
    for cell in result.pinned():
        where, labels = cell.labels[-1], list(cell.labels[:-1])
        if where == "added":
            if 0 < round(cell.lower) < min_count:
                report.exposed_added.append({"table": f"{later} - {earlier}", "labels": labels,
                                             "grouping_id": cell.grouping_id // 2})
        else:
            report.exposed.append({"table": str(earlier if where == "earlier" else later), "labels": labels,
                                   "grouping_id": cell.grouping_id // 2})
    report.check("the pair exposes no primary cell and no small count of the added rows",
                 not report.exposed and not report.exposed_added, "attack/difference_cells",
                 f"{len(report.exposed)} primaries, {len(report.exposed_added)} added cells recomputable exactly")
    return report


@dataclass(kw_only=True)
class RefineReport(Report):
    """The refinement attack on a release's artefacts together: how many values each suppressed cell
    can still hold (attack/refine.py). Public figures are counts per column; which groups are
    exposed stays private (their published values point at the rows)."""

    PROVES: ClassVar[bool] = False
    PRIVATE: ClassVar[tuple[str, ...]] = ("exposed_groups",)

    tables: list[str]
    method: str  # "any" (counts only) or "kanon" (the method's behaviour too)
    min_candidates: int
    sensitive: list[str]
    cells: int = 0  # suppressed cells attacked (rows x columns)
    exposed: int = 0  # of them, fewer than min_candidates candidates (or a certain sensitive value)
    certain: int = 0  # of them, one candidate left
    by_column: dict[str, dict[str, int]] = field(default_factory=dict)  # column -> cells, exposed, certain
    candidates: list[tuple[int, int]] = field(default_factory=list)  # (candidates, cells with that many)
    solver: dict[str, int] = field(default_factory=dict)  # unknowns, solves, integer solves, kanon exclusions
    exposed_groups: list[dict[str, Any]] = field(default_factory=list)  # private: published values, column, m

    def lines(self) -> list[str]:
        rule = " and kanon's bottom-up suppression" if self.method == "kanon" else ""
        lines = [f"refinement attack on {self.table} with {', '.join(self.tables) or 'no table'} (their counts{rule}): "
                 f"{self.cells:,} suppressed cells attacked",
                 f"  cells with fewer than {self.min_candidates} candidate values: {self.exposed:,}; one value left: "
                 f"{self.certain:,}"]
        lines += [f"    {c}: {f['cells']:,} cells, {f['exposed']:,} exposed, {f['certain']:,} certain"
                  for c, f in self.by_column.items()]
        lines.append("  candidates per cell: " + ", ".join(f"{m}: {n:,}" for m, n in self.candidates[:12]))
        return lines

    def plain(self) -> str:
        """The result in plain words (a release's page), no row facts."""
        if not self.cells:
            return f"Refinement attack: {self.table} has no suppressed cell that the published counts speak about."
        return (f"Refinement attack: reading {self.table} together with {', '.join(self.tables) or 'its own rows'}, "
                f"an attacker narrows {self.exposed:,} of {self.cells:,} suppressed cells to fewer than "
                f"{self.min_candidates} possible values ({self.certain:,} to a single value)"
                + (", knowing kanon's bottom-up suppression." if self.method == "kanon" else "."))


def refine(engine: Engine, published: Table, tables: Sequence[tuple[Table, list[str]]], *, qi: Sequence[str] = (),
           class_column: str | None = None, sensitive: Sequence[str] = (), min_candidates: int = 2,
           strict: bool = True) -> RefineReport:
    """The refinement attack on `published` (row-level) with the safe count `tables` (each with its
    dimensions, named as in `published`); with `qi` and `class_column` the kanon rule too
    (validated by attack.entry). A table of other rows or other values is an error, or with
    `strict` False (a release pairing its own artefacts) a note, and left out."""
    report = RefineReport(table=str(published), tables=[str(t) for t, _ in tables],
                          method="kanon" if class_column else "any", min_candidates=min_candidates,
                          sensitive=list(sensitive))
    in_tables = list(dict.fromkeys(d for _, dims in tables for d in dims))
    cols = list(dict.fromkeys([*in_tables, *qi, *([class_column] if class_column else [])]))
    where = {c: i for i, c in enumerate(cols)}
    with report.timed("counts"):
        groups = stats.refine_groups(engine, published, cols)
        rows = sum(n for _, n in groups)
        counts, used = [], []
        for table, dims in tables:
            cells = stats.count_cells(engine, table, table.resolve(dims))
            count = CountTable(str(table), tuple(where[d] for d in dims), cells)
            total = [v for _, margin, v in cells if all(margin)]
            foreign = foreign_values(groups, count)
            problem = (f"{table} counts {total[0]:,} rows, {published} has {rows:,}: the refinement attack needs "
                       "artefacts of the same rows") if total and total[0] != rows else \
                (f"{published} shows {cols[foreign[0][0]]} = {foreign[0][1]!r}, which is no label of {table}: the "
                 "two do not hold the same values (binned or generalized apart?)") if foreign else ""
            if problem and strict:
                raise AnonsqlError(problem)
            if problem:
                report.notes.append(f"{problem}; {table} left out")
                continue
            counts.append(count)
            used.append(str(table))
        report.tables = used
    kanon = Kanon(tuple(where[q] for q in qi), where[class_column]) if class_column else None
    attacked = [where[c] for c in dict.fromkeys([*in_tables, *(qi if kanon else ())])]
    with report.timed("attack"):
        found = candidate_sets(groups, counts, attacked, kanon)
    report.solver = {"unknowns": found.unknowns, "solves": found.solves, "integer_solves": found.integer_solves,
                     "kanon_excluded": found.kanon_excluded}
    secret = {where[c] for c in sensitive if c in where}
    histogram: dict[int, int] = {}
    for cell in found.cells:
        name, m = cols[cell.column], len(cell.candidates)
        bad = m < min_candidates or (m == 1 and cell.column in secret)
        f = report.by_column.setdefault(name, {"cells": 0, "exposed": 0, "certain": 0})
        f["cells"] += cell.rows
        f["exposed"] += cell.rows if bad else 0
        f["certain"] += cell.rows if m == 1 else 0
        histogram[m] = histogram.get(m, 0) + cell.rows
        if bad:
            report.exposed_groups.append({"published": dict(zip(cols, cell.group)), "column": name, "rows": cell.rows,
                                          "candidates": m})
    report.cells = sum(f["cells"] for f in report.by_column.values())
    report.exposed = sum(f["exposed"] for f in report.by_column.values())
    report.certain = sum(f["certain"] for f in report.by_column.values())
    report.candidates = sorted(histogram.items())
    verify.candidates_gate(report, report.exposed, report.cells, min_candidates, bool(secret))
    return report
