"""What a release publishes and what it keeps private, and the privacy warnings a reader of the
release must see: every step's warnings, and attribute disclosure on the published row-level
tables (a sensitive column with distinct l-diversity 1: some equivalence class over the
quasi-identifiers has one value only, so whoever knows a person's quasi-identifiers learns it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..catalog import get_table
from ..data.risk import diversity
from ..engine import Engine
from .plan import PlanReport
from .spec import ROW_KINDS, Spec

if TYPE_CHECKING:
    from ..report import Report


def split(plan: PlanReport) -> tuple[list[str], list[str]]:
    """(published, private) tables in step order, as the plan declared them (`publish`): protect's
    `<out>_changes` and tables' `<out>_private_audit` hold original values and are private; working tables
    (outputs of steps not published) are dropped by the run and are neither."""
    return list(plan.published), list(plan.private)


def row_level(plan: PlanReport) -> list[str]:
    """The published row-level tables (outputs of drop, bin, kanon and protect with publish)."""
    return [s.outputs[0] for s in plan.steps if s.kind in ROW_KINDS and s.outputs[0] in plan.published]


def warnings(engine: Engine, spec: Spec, plan: PlanReport, steps: Sequence[Report]) -> list[str]:
    """Every step's warnings (named by step), then attribute disclosure on each published row-level table."""
    found = [f"step {s.number} ({s.kind}): {w}" for s, r in zip(plan.steps, steps) for w in r.warnings]
    sensitive = dict.fromkeys([*spec.source.sensitive, *spec.gates.l_diversity, *spec.gates.t_closeness])
    for name in row_level(plan):
        table = get_table(engine, name)
        spelled = {c.lower(): c for c in table.column_names}
        if any(q.lower() not in spelled for q in plan.qi):
            continue  # a table without the quasi-identifiers has no classes over them
        for column in (spelled[c.lower()] for c in sensitive if c.lower() in spelled):
            d = diversity(engine, table, plan.qi, column, l_required=2)  # below 2: one value in the class
            if d.classes_below_l:
                found.append(f"attribute disclosure in {name}: in {d.classes_below_l:,} classes ({d.rows_below_l:,} "
                             f"rows) every row has the same {column}, so whoever knows a person's "
                             f"{', '.join(plan.qi)} learns their {column} (distinct l-diversity 1)")
    return found
