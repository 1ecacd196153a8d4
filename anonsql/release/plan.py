"""What a release will run, on which tables, and what its gates read: resolved from the spec and
the catalog without changing anything (`anonsql release plan`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..catalog import find_table, get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from .spec import ROW_KINDS, Spec, Step, names


@dataclass
class PlannedStep:
    number: int
    kind: str
    input: str
    outputs: list[str]  # every table the step writes (published and private)
    options: dict[str, Any]
    seed: int | None  # the seed a randomized step uses


@dataclass(kw_only=True)
class PlanReport(Report):
    """The resolved release: steps with inputs and outputs, the gate table, its baseline and QIs."""

    PROVES: ClassVar[bool] = False

    spec: str
    name: str
    steps: list[PlannedStep]
    gate_table: str
    baseline: str  # the table before the suppression that produced gate_table (error and risk 'before')
    qi: list[str]
    class_column: str | None
    key: str | None
    gates: dict[str, Any]
    existing_outputs: list[str] = field(default_factory=list)
    artefacts: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        lines = [f"release {self.name} ({self.spec}) of {self.table}: {len(self.steps)} steps"]
        for s in self.steps:
            opts = ", ".join(f"{k}={v}" for k, v in s.options.items())
            lines.append(f"  {s.number}. {s.kind} {s.input} -> {', '.join(s.outputs)}" + (f" ({opts})" if opts else ""))
        gates = ", ".join(f"{k} {v}" for k, v in self.gates.items()) or "none"
        lines.append(f"  gates on {self.gate_table} over {', '.join(self.qi)} (before: {self.baseline}): {gates}")
        lines += [f"  {what}: {path}" for what, path in self.artefacts.items()]
        if self.existing_outputs:
            lines.append(f"  already exist (run needs --replace): {', '.join(self.existing_outputs)}")
        return lines + ["  nothing was changed (plan only)"]


def outputs(step: Step) -> list[str]:
    """The tables a step writes, named as its job names them."""
    if step.kind == "nbc":
        return [f"{step.out}_class", f"{step.out}_attr"] + ([f"{step.out}_rows"] if step.options.get("synthetic")
                                                             else [])
    private = {"protect": "_changes", "tables": "_private_audit"}.get(step.kind)
    return [step.out] + ([step.out + private] if private else [])


def make_plan(engine: Engine, spec: Spec) -> PlanReport:
    """Resolve every step's input, the gate table and the QIs; check the source and its columns."""
    src = get_table(engine, spec.source.table)
    current, planned, row_outputs = str(src), [], {}
    kanon = next((s for s in spec.steps if s.kind == "kanon"), None)
    qi = spec.gates.qi or (names(kanon.options.get("qi")) if kanon else []) or spec.source.qi
    class_column = (kanon.options.get("class") if kanon else None) or spec.source.class_column
    for step in spec.steps:
        given = step.input
        source = str(src) if given == "source" else given or current
        seed = step.options.get("seed", spec.seed) if step.kind in ("kanon", "protect") else None
        planned.append(PlannedStep(step.number, step.kind, source, outputs(step), dict(step.options), seed))
        if step.kind in ROW_KINDS:
            row_outputs[step.out] = source
            current = step.out
    gate_table = spec.gates.table or current
    if gate_table == str(src):
        raise AnonsqlError("no step writes a row-level table to gate: add a kanon, protect, bin or drop step, "
                           "or name [gates] table")
    baseline = spec.gates.baseline or row_outputs.get(gate_table) or str(src)
    if not qi:
        raise AnonsqlError("no quasi-identifiers: give [source] qi, a kanon step's qi or [gates] qi")
    for column in [*qi, *(c for c in [class_column, spec.source.key] if c)]:
        src.column(column)  # no step adds columns: an unknown one is an error naming the table's columns
    g = spec.gates
    gates = {k: v for k, v in dict(k=g.k, l_diversity=g.l_diversity or None, t_closeness=g.t_closeness or None,
                                   max_risk=g.max_risk, max_suppressed=g.max_suppressed,
                                   max_nb_error_loss=g.max_nb_error_loss).items() if v is not None}
    existing = [t for s in planned for t in s.outputs if find_table(engine, t) is not None]
    artefacts = {what: str(spec.artefact(what)) for what in spec.files}
    return PlanReport(table=str(src), spec=str(spec.path), name=spec.name, steps=planned, gate_table=gate_table,
                      baseline=baseline, qi=list(qi), class_column=class_column, key=spec.source.key, gates=gates,
                      existing_outputs=existing, artefacts=artefacts)
