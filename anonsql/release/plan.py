"""What a release will run, on which tables, and what its gates read: resolved from the spec and
the catalog without changing anything (`anonsql release plan`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..catalog import Table, find_table, get_table
from ..ckm.job import CKM_TABLES
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Report
from .spec import PRIVATE_TABLES, ROW_KINDS, Spec, Step, names


@dataclass
class PlannedStep:
    number: int
    kind: str
    input: str
    outputs: list[str]  # every table the step writes (published or working, and private)
    options: dict[str, Any]
    seed: int | None  # the seed a randomized step uses
    publish: bool = False  # its main outputs are released; else they are working tables, dropped after the gates

    @property
    def label(self) -> str:
        return f"step {self.number} ({self.kind})"

    @property
    def private(self) -> list[str]:
        """Tables holding ORIGINAL values (protect's <out>_changes, tables' <out>_private_audit): kept, never
        published."""
        suffix = PRIVATE_TABLES.get(self.kind)
        return [t for t in [self.outputs[0] + suffix] if t in self.outputs] if suffix else []

    @property
    def main(self) -> list[str]:
        """The step's release-facing tables: published, or working tables when the step is not published."""
        return [t for t in self.outputs if t not in self.private]


@dataclass(kw_only=True)
class PlanReport(Report):
    """The resolved release: steps with inputs and outputs, which tables are published, working or
    private, the gated tables, their baseline and the QIs."""

    PROVES: ClassVar[bool] = False

    spec: str
    name: str
    steps: list[PlannedStep]
    gate_tables: list[str]  # every published row-level table (and [gates] table): each gets every gate
    baseline: str  # 'before' of the risk and suppression figures: [gates] baseline, else the source
    error_baselines: dict[str, str]  # gated table -> the table its classifiers' error is compared with
    qi: list[str]
    class_column: str | None
    key: str | None
    gates: dict[str, Any]
    published: list[str] = field(default_factory=list)  # the release: main outputs of the steps with publish = true
    working: list[str] = field(default_factory=list)  # every other step's main outputs, dropped after the gates
    private: list[str] = field(default_factory=list)  # ORIGINAL values: protect's _changes, tables' _private_audit
    existing_outputs: list[str] = field(default_factory=list)
    artefacts: dict[str, str] = field(default_factory=dict)

    @property
    def gate_table(self) -> str | None:
        """The last gated table: the one whose figures the page shows first."""
        return self.gate_tables[-1] if self.gate_tables else None

    def lines(self) -> list[str]:
        lines = [f"release {self.name} ({self.spec}) of {self.table}: {len(self.steps)} steps"]
        for s in self.steps:
            opts = ", ".join(f"{k}={v}" for k, v in s.options.items())
            lines.append(f"  {s.number}. {s.kind} {s.input} -> {', '.join(s.outputs)}" + (f" ({opts})" if opts else ""))
        lines += [f"  published: {', '.join(self.published)}",
                  f"  working tables (dropped after the gates): {', '.join(self.working) or 'none'}",
                  f"  private tables (kept, ORIGINAL values: never publish): {', '.join(self.private) or 'none'}"]
        gates = ", ".join(f"{k} {v}" for k, v in self.gates.items()) or "none"
        for table in self.gate_tables:
            lines.append(f"  gates on {table} over {', '.join(self.qi)} (before: {self.baseline}; classifier error "
                         f"before: {self.error_baselines[table]}): {gates}")
        lines += [f"  {what}: {path}" for what, path in self.artefacts.items()]
        if self.existing_outputs:
            lines.append(f"  already exist (run needs --replace): {', '.join(self.existing_outputs)}")
        return lines + ["  nothing was changed (plan only)"]


#: Row-level kinds that suppress cells (the others recode: drop, bin).
SUPPRESSING = ("kanon", "protect")


def outputs(step: Step) -> list[str]:
    """The tables a step writes, named as its job names them."""
    if step.kind == "nbc":
        return [f"{step.out}_class", f"{step.out}_attr"] + ([f"{step.out}_rows"] if step.options.get("synthetic")
                                                             else [])
    if step.kind == "tables" and step.options.get("method") == "ckm":  # public: the ptable and the spec
        return [step.out, *(step.out + suffix for suffix in CKM_TABLES)]
    private = PRIVATE_TABLES.get(step.kind)
    return [step.out] + ([step.out + private] if private else [])


def make_plan(engine: Engine, spec: Spec) -> PlanReport:
    """Resolve every step's input, the gate table and the QIs; check the source and its columns."""
    src = get_table(engine, spec.source.table)
    current, planned, row_inputs = str(src), [], {}
    kanon = next((s for s in spec.steps if s.kind == "kanon"), None)
    qi = spec.gates.qi or (names(kanon.options.get("qi")) if kanon else []) or spec.source.qi
    class_column = (kanon.options.get("class") if kanon else None) or spec.source.class_column
    for step in spec.steps:
        given = step.input
        source = str(src) if given == "source" else given or current
        seed = step.options.get("seed", spec.seed) if step.kind in ("kanon", "protect") else None
        planned.append(PlannedStep(step.number, step.kind, source, outputs(step), dict(step.options), seed,
                                   bool(step.publish)))
        if step.kind in ROW_KINDS:
            row_inputs[step.out] = (step.kind, source)
            current = step.out
    gate_tables = [s.out for s in spec.steps if s.publish and s.kind in ROW_KINDS]
    gate_tables += [spec.gates.table] if spec.gates.table and spec.gates.table not in gate_tables else []
    if not gate_tables and _declared(spec):
        raise AnonsqlError("the gates need a published row-level table: say publish = true on a drop, bin, kanon or "
                           "protect step, or name [gates] table")
    baseline = spec.gates.baseline or str(src)
    error_baselines = {t: spec.gates.baseline or _recoded(t, row_inputs) or str(src) for t in gate_tables}
    if not qi:
        raise AnonsqlError("no quasi-identifiers: give [source] qi, a kanon step's qi or [gates] qi")
    _check_columns(spec, src, kanon, qi, class_column)
    g = spec.gates
    gates = {k: v for k, v in dict(k=g.k, l_diversity=g.l_diversity or None, t_closeness=g.t_closeness or None,
                                   max_risk=g.max_risk, max_suppressed=g.max_suppressed,
                                   max_nb_error_loss=g.max_nb_error_loss, max_journalist_risk=g.max_journalist_risk,
                                   max_linkage_success=g.max_linkage_success).items() if v is not None}
    existing = [t for s in planned for t in s.outputs if find_table(engine, t) is not None]
    artefacts = {what: str(spec.artefact(what)) for what in spec.files}
    return PlanReport(table=str(src), spec=str(spec.path), name=spec.name, steps=planned, gate_tables=gate_tables,
                      baseline=baseline, error_baselines=error_baselines, qi=list(qi), class_column=class_column,
                      key=spec.source.key, gates=gates, existing_outputs=existing, artefacts=artefacts,
                      published=[t for s in planned if s.publish for t in s.main],
                      working=[t for s in planned if not s.publish for t in s.main],
                      private=[t for s in planned for t in s.private])


def _check_columns(spec: Spec, src: Table, kanon: Step | None, qi: list[str], class_column: str | None) -> None:
    """Every column the source, gates or kanon step names is in the table (no step adds columns):
    an unknown one is one error naming the spec's file and line and the table's columns."""
    kanon_at = ("steps", kanon.number - 1) if kanon else ("source", None)
    qi_at = ("gates", None) if spec.gates.qi else kanon_at if kanon and kanon.options.get("qi") else ("source", None)
    class_at = kanon_at if kanon and kanon.options.get("class") else ("source", None)
    named = [(c, qi_at, "qi") for c in qi] + [(c, ("source", None), "sensitive") for c in spec.source.sensitive]
    named += [(class_column, class_at, "class")] if class_column else []
    named += [(spec.source.key, ("source", None), "key")] if spec.source.key else []
    for column, (section, index), key in named:
        try:
            src.column(column)
        except AnonsqlError as exc:
            raise AnonsqlError(f"{spec.at(section, index, key)}: {exc}") from None


def _declared(spec: Spec) -> bool:
    """Does the spec declare any gate (a figure that must hold)?"""
    g = spec.gates
    return any(v is not None for v in (g.k, g.max_risk, g.max_suppressed, g.max_nb_error_loss, g.max_journalist_risk,
                                       g.max_linkage_success)) or \
        bool(g.l_diversity or g.t_closeness)


def _recoded(table: str, row_inputs: dict[str, tuple[str, str]]) -> str | None:
    """The nearest table upstream of `table` written by a recoding step (drop, bin): its columns
    share the published domain, so a classifier trained on the published table can be tested on
    its rows; the suppressing steps (kanon, protect) in between are what the error loss measures."""
    kind, source = row_inputs.get(table, ("", ""))
    if kind not in SUPPRESSING:
        return None
    while kind in SUPPRESSING:
        table = source
        kind, source = row_inputs.get(table, ("", ""))
    return table if kind else None
