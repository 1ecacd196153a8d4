"""The release's guarantees, proved by SQL on the tables themselves: the gates (k, l-diversity,
t-closeness, prosecutor risk, share of suppressed cells, naive Bayes error loss) after a run,
and, for `release verify`, every step's guarantee again plus the fingerprints of the manifest.
The same functions serve the run and the later re-proof, so both prove the same thing."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import sql
from ..attack import entry as attack
from ..attack.stats import linkage_sql, null_patterns
from ..attack.verify import candidates_gate, journalist_gate, linkage_gate
from ..catalog import Table, find_table, get_table
from ..ckm import job as ckm
from ..data.risk import RISK_THRESHOLD, Diversity, Reidentification, diversity, reidentification
from ..engine import Engine
from ..errors import AnonsqlError
from ..evaluate import job as evaluate
from ..nbc import job as nbc
from ..report import Progress, Report
from ..tables import job as tables
from ..tables.rewrite import PUBLISHED
from ..verify import k_anonymity
from .guarantees import reprove_published
from .plan import PlanReport
from .spec import ROW_KINDS, Spec, names
from .stats import Distribution, class_sizes, distribution, fingerprint, null_cells


@dataclass
class Side:
    """The figures of one table over the quasi-identifiers (before or after the release)."""

    table: str
    rows: int
    class_sizes: list[tuple[int, int]]  # (|E|, classes of that size)
    risk: Reidentification
    null_cells: dict[str, int]  # per quasi-identifier
    sensitive: list[Diversity] = field(default_factory=list)


@dataclass
class Proof:
    """What the gates measured: both sides, the suppressed cells, the classifiers' errors; the
    value distributions before and after, which are private (PRIVATE: never in the manifest)."""

    PRIVATE: ClassVar[tuple[str, ...]] = ("utility",)

    before: Side
    after: Side
    suppressed_cells: dict[str, int]  # NULL cells the release added, per quasi-identifier
    suppressed_share: float  # of the QI cells
    errors: dict[str, dict[str, float]] = field(default_factory=dict)  # classifier -> before / after
    attacks: list[str] = field(default_factory=list)  # each attack gate's result in plain words (no row facts)
    sql: dict[str, str] = field(default_factory=dict)  # check name -> the query that proved it, as run
    utility: list[Distribution] = field(default_factory=list)  # per QI and sensitive column, before / after


def _side(engine: Engine, table: Table, qi: Sequence[str], sensitive: dict[str, tuple[int | None, float | None]],
          threshold: float) -> Side:
    sizes = class_sizes(engine, table, qi)
    return Side(str(table), sum(s * c for s, c in sizes), sizes, reidentification(engine, table, qi, threshold),
                null_cells(engine, table, qi),
                [diversity(engine, table, qi, col, l_required=lt[0], t_allowed=lt[1])
                 for col, lt in sensitive.items()])


def prove_gates(engine: Engine, report: Report, spec: Spec, plan: PlanReport,
                progress: Progress | None = None) -> dict[str, Proof]:
    """Measure the baseline (the source, unless [gates] baseline) once and every gated table (each
    published row-level table) against it; one set of gate checks per gated table, named by it."""
    base_tab = get_table(engine, plan.baseline)
    before = _side(engine, base_tab, plan.qi, {base_tab.column(c).name: (None, None) for c in _sensitive(spec)},
                   _threshold(spec))
    proofs = {}
    for table in plan.gate_tables:
        found = find_table(engine, table)
        if found is None and table in plan.working:  # `release verify` of a [gates] table that was a working one
            report.notes.append(f"gates on {table} not proved again: a working table, dropped after the release")
            continue
        proofs[table] = _prove_table(engine, report, spec, plan, before, found or get_table(engine, table), progress)
    previous_gates(engine, report, spec, plan)
    return proofs


def previous_gates(engine: Engine, report: Report, spec: Spec, plan: PlanReport) -> None:
    """[release] previous: each safe table published before, attacked together with each safe table
    of this release over the same cells (`anonsql attack difference`): the release refuses to ship
    when a pair recomputes a primary, or a small count of the rows added since."""
    for earlier in spec.previous:
        before = get_table(engine, earlier)
        paired = False
        for step in plan.steps:
            out = find_table(engine, step.outputs[0]) if step.kind == "tables" and step.publish else None
            if out is None or sorted(c.lower() for c in out.column_names) != \
                    sorted(c.lower() for c in before.column_names):
                continue
            paired = True
            found = attack.difference_attack(engine, str(before), str(out))
            report.check(f"gate: {before} and {out} published together expose nothing", found.ok,
                         "attack/difference_cells", found.checks[0].detail)
        if not paired:
            report.notes.append(f"[release] previous {before}: no safe table of this release has its cells")


def _sensitive(spec: Spec) -> list[str]:
    """The sensitive columns measured: [source] sensitive and those the gates name."""
    return list(dict.fromkeys([*spec.source.sensitive, *spec.gates.l_diversity, *spec.gates.t_closeness]))


def _threshold(spec: Spec) -> float:
    return spec.gates.max_risk if spec.gates.max_risk is not None else RISK_THRESHOLD


def _prove_table(engine: Engine, report: Report, spec: Spec, plan: PlanReport, before: Side, after_tab: Table,
                 progress: Progress | None) -> Proof:
    """Every gate on one gated table, against the baseline's figures `before`."""
    g, qi, threshold = spec.gates, plan.qi, _threshold(spec)
    sensitive = {after_tab.column(c).name: (g.l_diversity.get(c), g.t_closeness.get(c)) for c in _sensitive(spec)}
    after = _side(engine, after_tab, qi, sensitive, threshold)
    added = {c: max(0, after.null_cells[c] - before.null_cells[c]) for c in qi}
    share = sum(added.values()) / max(1, after.rows * len(qi))
    proof = Proof(before, after, added, share)
    tbl, cols, where = after_tab.expr, sql.columns(qi), f" in {after_tab}"
    if g.k is not None:
        kr = k_anonymity(engine, after_tab, qi, g.k, show=0)
        _gate(report, proof, f"gate: {g.k}-anonymity of {after_tab}", kr.ok, "common/violations_summary",
              kr.checks[0].detail, sql.readable("common/violations_summary", engine.dialect, tbl=tbl, qi=cols, k=g.k))
    for d in after.sensitive:
        s = dict(tbl=tbl, qi=cols, s=sql.column(d.column), ordered=d.distance == "ordered", l=d.l_required or 0,
                 t=1.0 if d.t_allowed is None else d.t_allowed)
        text = sql.readable("data/attribute_disclosure", engine.dialect, **s)
        if d.l_required is not None:
            _gate(report, proof, f"gate: {d.l_required}-diversity of {d.column}{where}", d.classes_below_l == 0,
                  "data/attribute_disclosure", f"distinct l = {d.distinct_l}; {d.classes_below_l} classes below", text)
        if d.t_allowed is not None:
            _gate(report, proof, f"gate: {d.t_allowed:g}-closeness of {d.column}{where}", d.classes_above_t == 0,
                  "data/attribute_disclosure", f"t = {d.t:.4g}; {d.classes_above_t} classes above", text)
    if g.max_risk is not None:
        _gate(report, proof, f"gate: prosecutor risk <= {g.max_risk:g}{where}", after.risk.max_risk <= g.max_risk,
              "data/reidentification_risk", f"highest 1/|E| = {after.risk.max_risk:.4g}",
              sql.readable("data/reidentification_risk", engine.dialect, tbl=tbl, qi=cols, threshold=threshold))
    if g.max_suppressed is not None:
        _gate(report, proof, f"gate: suppressed share of QI cells <= {g.max_suppressed:g}{where}",
              share <= g.max_suppressed, "release/null_cells",
              f"{sum(added.values()):,} cells, {share:.2%} (before: {before.table})",
              sql.readable("release/null_cells", engine.dialect, tbl=tbl, col=cols))
    proof.utility = _utility(engine, spec, plan, proof, after_tab)
    attack_gates(engine, report, spec, plan, proof, after_tab)
    refine_gate(engine, report, spec, plan, proof, after_tab)
    _errors(engine, report, spec, plan, proof, str(after_tab), progress)
    return proof


def _utility(engine: Engine, spec: Spec, plan: PlanReport, proof: Proof, after_tab: Table) -> list[Distribution]:
    """Each QI's and sensitive column's value distribution before and after (private/utility.html)."""
    base_tab = get_table(engine, plan.baseline)
    sensitive = [after_tab.column(c).name for c in _sensitive(spec)]
    added = dict(proof.suppressed_cells)
    if sensitive:
        after_nulls, before_nulls = (null_cells(engine, t, [t.column(c).name for c in sensitive])
                                     for t in (after_tab, base_tab))
        added |= {c: max(0, after_nulls[c] - before_nulls[base_tab.column(c).name]) for c in sensitive}
    return [distribution(engine, base_tab, after_tab, c, rows=(proof.before.rows, proof.after.rows),
                         nulls_added=added[c]) for c in dict.fromkeys([*plan.qi, *sensitive])]


def attack_gates(engine: Engine, report: Report, spec: Spec, plan: PlanReport, proof: Proof, after_tab: Table) -> None:
    """The attack gates (anonsql.attack) on one gated table: the journalist risk against [gates]
    population / population_weights (without: the table is its own population), and the linkage
    attack of the people of its error baseline (realized with [source] key kept, else expected)."""
    g, where = spec.gates, f" in {after_tab}"
    if g.max_journalist_risk is not None:
        r = attack.reidentification_risk(engine, str(after_tab), plan.qi, population=g.population,
                                         population_weights=g.population_weights)
        check = journalist_gate(report, r.journalist, g.max_journalist_risk, r.population is not None, where)
        proof.sql[check.name] = f"-- sql/{check.query}.sql over the classes of {after_tab}"
        proof.attacks.append(f"Journalist risk: the person most at risk could be re-identified with probability "
                             f"{r.journalist:.2%} (gate: at most {g.max_journalist_risk:.2%}), "
                             + (f"counting the people in the population ({r.population.source})." if r.population
                                else "taking the table as the whole population."))
    # the attacker knows each person's values as published before any cell was hidden: the nearest
    # recoded table upstream (binned values), else the source ([gates] baseline when given)
    known = plan.error_baselines[str(after_tab)]
    if g.max_linkage_success is not None and find_table(engine, known) is None:
        report.notes.append(f"linkage gate of {after_tab} not proved again: the attacker's table {known} was a "
                            "working table, dropped after the release (the manifest keeps the figure measured then)")
    elif g.max_linkage_success is not None:
        kept = {c.lower() for c in after_tab.column_names}
        key = plan.key if plan.key and plan.key.lower() in kept else None
        link = attack.linkage_attack(engine, str(after_tab), known, plan.qi, key=key).linkage
        check = linkage_gate(report, link, g.max_linkage_success, where)
        proof.sql[check.name] = linkage_sql(engine.dialect, after_tab, get_table(engine, known), plan.qi, key,
                                            null_patterns(engine, after_tab, plan.qi))
        realized = link.realized_share
        proof.attacks.append(f"Linkage attack: an attacker who knows the quasi-identifiers of all {link.attackers:,} "
                             f"people of {known} singles out {link.unique_matches:,} of them "
                             f"({link.expected_share:.2%})" + (f"; {link.realized_correct:,} ({realized:.2%}) are the "
                                                              "right person" if realized is not None else "")
                             + f" (gate: at most {g.max_linkage_success:.2%}).")


def refine_gate(engine: Engine, report: Report, spec: Spec, plan: PlanReport, proof: Proof, after_tab: Table) -> None:
    """[gates] min_candidates: the refinement attack (`anonsql attack refine`) on one gated table with
    the release's published safe count tables of its rows' original values (a tables step reading a
    table upstream of it), and kanon's rule when a kanon step wrote it."""
    g = spec.gates
    if g.min_candidates is None:
        return
    by_out = {s.outputs[0]: s for s in plan.steps}
    upstream, step = {plan.table}, by_out.get(str(after_tab))
    maker = step
    while step is not None:
        upstream.add(step.input)
        step = by_out.get(step.input)
    columns = {c.lower() for c in after_tab.column_names}
    counted = []
    for s in plan.steps:
        out = find_table(engine, s.outputs[0]) if s.kind == "tables" and s.publish and s.input in upstream and \
            s.options.get("method", "suppression") == "suppression" and "sum" not in s.options else None
        dims = {c.lower() for c in out.column_names} - set(PUBLISHED) if out is not None else set()
        if out is not None and dims <= columns:
            counted.append(str(out))
    kanon = maker is not None and maker.kind == "kanon"
    cls = maker.options.get("class", plan.class_column) if maker is not None and kanon else None
    secret = [c for c in _sensitive(spec) if c.lower() in columns]
    r = attack.refine_attack(engine, str(after_tab), counted, qi=(names(maker.options.get("qi")) or plan.qi)
                             if kanon and maker is not None else None, class_column=cls,
                             method="kanon" if kanon and cls else "any", sensitive=secret,
                             min_candidates=g.min_candidates, strict=False) if counted or (kanon and cls) else None
    if r is None:
        report.notes.append(f"refinement gate of {after_tab}: no published count table of its rows and no method "
                            "rule to attack it with")
        return
    report.notes += [f"refinement attack on {after_tab}: {n}" for n in r.notes]
    check = candidates_gate(report, r.exposed, r.cells, g.min_candidates, bool(secret),
                            f" in {after_tab}")
    proof.sql[check.name] = f"-- sql/{check.query}.sql over {after_tab}, then the attacker's LP/MILP " \
                            f"(anonsql.attack.refine) with {', '.join(r.tables) or 'kanon rule only'}"
    proof.attacks.append(r.plain() + f" (gate: at least {g.min_candidates} values each).")


def _errors(engine: Engine, report: Report, spec: Spec, plan: PlanReport, proof: Proof, table: str,
            progress: Progress | None) -> None:
    """Naive Bayes (and, with scikit-learn, tree) error trained on the gated table, tested on its
    error baseline (the nearest recoded table upstream, or [gates] baseline), next to training on
    that baseline; the NB loss gate when asked."""
    g, baseline, where = spec.gates, plan.error_baselines[table], f" in {table}"
    if not plan.class_column or not plan.key:
        if g.max_nb_error_loss is not None:
            report.check(f"gate: naive Bayes error loss{where}", False, "evaluate/nb_counts",
                         "the naive Bayes error gate needs [source] class and key (a row key in both tables)")
        return
    if find_table(engine, baseline) is None:  # `release verify`: a working table, dropped after the run
        report.notes.append(f"classifier error of {table} not measured again: its baseline {baseline} was a working "
                            "table, dropped after the release (the manifest keeps the figure measured then)")
        return
    chosen = ["nb"] + (["tree"] if importlib.util.find_spec("sklearn") else [])
    try:
        ev = evaluate.evaluate(engine, get_table(engine, baseline), get_table(engine, table), plan.qi,
                               plan.class_column, plan.key, folds=g.folds, seed=spec.seed, classifiers=chosen,
                               progress=progress)
    except AnonsqlError as exc:
        if g.max_nb_error_loss is not None:
            raise
        report.notes.append(f"classifier error of {table} not measured: {exc}")  # only a figure of the page then
        return
    proof.errors = {n: {"before": r.baseline_error, "after": r.error} for n, r in ev.classifiers.items()}
    if g.max_nb_error_loss is not None:
        loss = proof.errors["nb"]["after"] - proof.errors["nb"]["before"]
        _gate(report, proof, f"gate: naive Bayes error loss <= {g.max_nb_error_loss:g}{where}",
              loss <= g.max_nb_error_loss, "evaluate/nb_counts",
              f"{loss:+.4f} ({g.folds}-fold cross-validation against {baseline})",
              f"-- {g.folds}-fold stratified cross-validation (anonsql.evaluate), per fold the counts of "
              "sql/evaluate/nb_counts.sql")


def _gate(report: Report, proof: Proof, name: str, passed: bool, query: str, detail: str, text: str) -> None:
    report.check(name, passed, query, detail)
    proof.sql[name] = text


def reprove_steps(engine: Engine, report: Report, spec: Spec, plan: PlanReport) -> list[str]:
    """Each published step's guarantee again, on its published tables, and every guarantee of the
    published row-level tables' chains (anonsql.release.guarantees); returns notes for steps that
    cannot be re-checked."""
    notes = []
    reprove_published(engine, report, plan)
    for step in plan.steps:
        o, label = step.options, step.label
        if not step.publish:
            notes.append(f"{label}: its output was a working table, dropped after the release (checked when it ran)")
            continue
        if step.kind == "nbc" and find_table(engine, step.input) is not None:
            found: Report = nbc.run_verify(engine, step.input, str(o.get("class", plan.class_column)),
                                           names(o.get("attrs")) or plan.qi, step.outputs[0].removesuffix("_class"),
                                           precedence=o.get("precedence"))
        elif step.kind == "tables" and o.get("method") == "ckm":
            found = ckm.audit(engine, get_table(engine, step.outputs[0]), o.get("key_file"))
        elif step.kind == "tables":
            found = tables.audit(engine, get_table(engine, step.outputs[0]), o.get("hierarchy"))
        elif step.kind in ROW_KINDS:
            continue  # re-proved above, with the guarantees of its chain
        else:
            notes.append(f"{label}: no standalone re-check (its input {step.input} was a working table, dropped after "
                         "the release; the fingerprint shows the views are unchanged since)")
            continue
        for c in found.checks:
            report.check(f"{label}: {c.name}", c.passed, c.query, c.detail)
    return notes


def fingerprints(engine: Engine, report: Report, manifest: dict[str, Any]) -> list[str]:
    """The source and every output against the manifest, one check each; returns the changed tables."""
    changed = []
    for role, table, recorded in [("input", manifest["input"]["table"], manifest["input"]),
                                  *(("output", t, f) for t, f in manifest["outputs"].items())]:
        now = fingerprint(engine, get_table(engine, table))
        same = (now.rows, now.digest) == (recorded["rows"], recorded["digest"])
        what = "input fingerprint" if role == "input" else f"output {table}"
        report.check(f"{what} matches the manifest", same, "release/fingerprint",
                     "" if same else f"CHANGED: {now.rows:,} rows, {now.digest} (manifest: {recorded['rows']:,} "
                     f"rows, {recorded['digest']})")
        changed += [] if same else [f"{table} (the input)" if role == "input" else table]
    return changed
