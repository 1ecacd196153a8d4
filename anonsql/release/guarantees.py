"""Guarantees survive composition: each row-level step of a release re-proves, on its own output and
inside the release's transaction, what the earlier steps of its chain established: k over the QIs
after a kanon step, dropped columns still absent, pseudonymized columns without an original value,
and the k, l-diversity and t-closeness the gates ask for, from the first table of the chain where
they hold. A guarantee lost fails the release naming the step and the guarantee; `release verify`
re-proves the steps' guarantees on the published tables with the same queries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import identifiers
from ..catalog import Table, get_table
from ..data.risk import diversity
from ..engine import Engine
from ..errors import VerificationError
from ..report import Check, Report
from ..verify import k_anonymity
from .plan import PlannedStep, PlanReport
from .spec import ROW_KINDS, Spec, names


@dataclass(frozen=True)
class Guarantee:
    """One property of a row-level table that every later step of its chain must keep."""

    kind: str  # "k", "l", "t" (over the QIs `columns`), "dropped" or "pseudonymized" (`columns`)
    columns: tuple[str, ...]
    bound: float = 0.0  # k, l or t
    sensitive: str = ""  # the sensitive column of l and t
    since: str = ""  # who established it: "step 2 (kanon)", or the step where a gate's property first held

    @property
    def name(self) -> str:
        over = ", ".join(self.columns)
        return {"k": f"{self.bound:g}-anonymity over {over}",
                "l": f"{self.bound:g}-diversity of {self.sensitive} over {over}",
                "t": f"{self.bound:g}-closeness of {self.sensitive} over {over}",
                "dropped": f"{over} dropped",
                "pseudonymized": f"{over} pseudonymized (no original value)"}[self.kind]

    def same(self, other: Guarantee) -> bool:
        return replace(self, since="") == replace(other, since="")


def established(step: PlannedStep, qi: Sequence[str], source: Table) -> list[Guarantee]:
    """What a step's own verification proved on its output (its job checked it when it ran)."""
    o, label = step.options, step.label
    found = []
    if step.kind == "drop":
        found.append(Guarantee("dropped", tuple(source.resolve(names(o["columns"]))), since=label))
    if step.kind == "kanon":
        found.append(Guarantee("k", tuple(source.resolve(names(o.get("qi")) or qi)), o["k"], since=label))
        found += [Guarantee(kind, tuple(source.resolve(names(o[key]))), since=label)
                  for kind, key in (("dropped", "drop"), ("pseudonymized", "pseudonymize")) if names(o.get(key))]
    return found


def asked(spec: Spec, qi: Sequence[str], source: Table) -> list[Guarantee]:
    """The gates' k, l and t: guarantees of a chain from the first of its tables where they hold."""
    g, over = spec.gates, tuple(source.resolve(qi))
    found = [Guarantee("k", over, g.k)] if g.k is not None else []
    found += [Guarantee("l", over, lv, source.column(c).name) for c, lv in g.l_diversity.items()]
    return found + [Guarantee("t", over, t, source.column(c).name) for c, t in g.t_closeness.items()]


def prove(engine: Engine, table: Table, g: Guarantee, source: Table) -> Check:
    """Does `table` keep `g`? A check named by the guarantee (the caller prefixes who asks)."""
    if g.kind == "dropped":
        left = [c for c in g.columns if c in table.column_names]
        return Check(g.name, not left, "common/table_columns", "still there: " + ", ".join(left) if left else "")
    if g.kind == "pseudonymized":
        scratch = Report(table=str(table))
        identifiers.verify(engine, scratch, table, source=source, drop=(), pseudonymize=g.columns)
        c = scratch.checks[0]
        return Check(g.name, c.passed, c.query, c.detail)
    qi = [c for c in g.columns if c in table.column_names]  # a later drop of a QI only merges classes
    if g.kind == "k":
        kr = k_anonymity(engine, table, qi, int(g.bound), show=0)
        return Check(g.name, kr.violating_groups == 0, "common/violations_summary",
                     f"{kr.violating_groups:,} classes holding {kr.violating_rows:,} rows have fewer than "
                     f"{g.bound:g} rows" if kr.violating_groups else "")
    d = diversity(engine, table, qi, g.sensitive, l_required=int(g.bound) if g.kind == "l" else None,
                  t_allowed=g.bound if g.kind == "t" else None)
    bad = d.classes_below_l if g.kind == "l" else d.classes_above_t
    return Check(g.name, bad == 0, "data/attribute_disclosure",
                 f"{bad:,} classes {'below l' if g.kind == 'l' else 'above t'} (distinct l = {d.distinct_l}, "
                 f"t = {d.t:.4g})" if bad else "")


class Chains:
    """The guarantees each row-level table of a running release holds, table by table."""

    def __init__(self, engine: Engine, spec: Spec, plan: PlanReport):
        self.engine, self.plan = engine, plan
        self.source = get_table(engine, plan.table)
        self.asked = asked(spec, plan.qi, self.source)
        self.held: dict[str, list[Guarantee]] = {}

    def after(self, step: PlannedStep, report: Report) -> None:
        """Re-prove on the step's output what its input held (VerificationError at the first one
        lost), then record what the output holds."""
        if step.kind not in ROW_KINDS:
            return
        out = get_table(self.engine, step.outputs[0])
        kept = self.held.get(step.input, [])
        for g in kept:
            c = prove(self.engine, out, g, self.source)
            check = report.check(f"{step.label}: keeps {c.name} (from {g.since})", c.passed, c.query, c.detail)
            if not check.passed:
                raise VerificationError([check])
        held = _with(kept, established(step, self.plan.qi, self.source))
        self.held[step.outputs[0]] = _with(held, [
            replace(g, since=f"{step.label}, where the gate first held") for g in self.asked
            if not any(g.same(h) for h in held) and prove(self.engine, out, g, self.source).passed])


def _with(held: list[Guarantee], new: Sequence[Guarantee]) -> list[Guarantee]:
    """`held` and those of `new` it lacks."""
    return held + [g for g in new if not any(g.same(h) for h in held)]


def static(plan: PlanReport, source: Table) -> dict[str, list[Guarantee]]:
    """Per row-level output, the guarantees its chain's steps established (no gate measured)."""
    held: dict[str, list[Guarantee]] = {}
    for step in plan.steps:
        if step.kind in ROW_KINDS:
            held[step.outputs[0]] = _with(held.get(step.input, []), established(step, plan.qi, source))
    return held


def reprove_published(engine: Engine, report: Report, plan: PlanReport) -> None:
    """`release verify`: every published row-level table keeps what its chain's steps established."""
    source = get_table(engine, plan.table)
    held = static(plan, source)
    for table in plan.published:
        for g in held.get(table, []):
            c = prove(engine, get_table(engine, table), g, source)
            report.check(f"{table}: keeps {c.name} (from {g.since})", c.passed, c.query, c.detail)
