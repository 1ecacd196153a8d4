"""A whole release in one transaction: every step through its job, then the gates; any failed
check or gate raises VerificationError inside the transaction, so nothing is left behind. Only
after the commit are the manifest, the one SQL script and the HTML report written."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import drop_table, get_table
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, silent
from . import html, manifest
from .guarantees import Chains
from .plan import PlanReport, make_plan
from .spec import Spec
from .stats import fingerprint
from .steps import run_step
from .verify import Proof, fingerprints, prove_gates, reprove_steps


@dataclass(kw_only=True)
class ReleaseReport(Report):
    """A run release: what each step wrote and proved, the gates, the fingerprints, the artefacts."""

    name: str
    dialect: str
    spec_sha256: str
    plan: PlanReport
    steps: list[Report] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    proof: Proof | None = None  # of the last gated table (plan.gate_table); its sql: every gate's query
    proofs: dict[str, Proof] = field(default_factory=dict)  # gated (published row-level) table -> its proof
    input: dict[str, Any] = field(default_factory=dict)  # table, rows, digest
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)  # published and private table -> rows, digest
    artefacts: dict[str, str] = field(default_factory=dict)

    @property
    def published(self) -> list[str]:
        """The tables released (the only ones an artefact may list as published)."""
        return self.plan.published

    @property
    def working(self) -> list[str]:
        """Steps' outputs that were not published: dropped at the end of the run."""
        return self.plan.working

    @property
    def private(self) -> list[str]:
        """Tables kept in the database with ORIGINAL values (protect's _changes, tables' _audit)."""
        return self.plan.private

    def lines(self) -> list[str]:
        lines = [f"release {self.name}: {self.table} -> {', '.join(self.published)}"]
        lines += [f"  {s.number}. {s.kind}: {', '.join(s.outputs)}" for s in self.plan.steps]
        lines += [f"  working tables dropped: {', '.join(self.working)}"] if self.working else []
        lines += [f"  private tables (ORIGINAL values, never publish): {', '.join(self.private)}"] if self.private \
            else []
        for table, proof in self.proofs.items():
            b, a = proof.before, proof.after
            lines.append(f"  {table}: prosecutor risk {b.risk.max_risk:.3g} -> {a.risk.max_risk:.3g}; suppressed QI "
                         f"cells {proof.suppressed_share:.2%} (before: {b.table})")
            lines += [f"  {table}: {n} error {e['before']:.4f} -> {e['after']:.4f}" for n, e in proof.errors.items()]
        return lines + [f"  {what}: {path}" for what, path in self.artefacts.items()]

    def to_dict(self) -> dict[str, Any]:
        return manifest.build(self)


@dataclass(kw_only=True)
class ReleaseVerifyReport(Report):
    """`release verify`: fingerprints against the manifest and every guarantee re-proved."""

    manifest: str
    changed: list[str] = field(default_factory=list)  # tables whose fingerprint differs from the manifest

    def lines(self) -> list[str]:
        head = f"release of {self.table}: every guarantee re-proved on the published tables" if self.ok else \
            f"release of {self.table}: NOT verified ({len(self.failed_checks)} checks fail)"
        return [head, f"  manifest {self.manifest}"] + [f"  CHANGED since the release: {t}" for t in self.changed]


def run(engine: Engine, spec: Spec, *, replace: bool = False, progress: Progress | None = None) -> ReleaseReport:
    """Plan, then every step and the gates in one transaction; then the artefacts."""
    say = progress or silent
    if not engine.supports_transactions:
        raise AnonsqlError(f"release run needs transactions (all or nothing); {engine.dialect} has none: "
                           "run the release on DuckDB or PostgreSQL")
    plan = make_plan(engine, spec)
    if plan.existing_outputs and not replace:
        raise AnonsqlError(f"output tables already exist: {', '.join(plan.existing_outputs)} (use --replace)")
    _writable(spec)
    report = ReleaseReport(table=plan.table, name=spec.name, dialect=engine.dialect, spec_sha256=spec.sha256,
                           plan=plan)
    src = fingerprint(engine, get_table(engine, plan.table))
    report.input = {"table": plan.table, "rows": src.rows, "digest": src.digest}
    with tempfile.TemporaryDirectory(prefix="anonsql_release_") as tmp, engine.transaction():
        chains = Chains(engine, spec, plan)
        for step in plan.steps:
            say(f"release: step {step.number} ({step.kind}) {step.input} -> {', '.join(step.outputs)}")
            with report.timed(f"step {step.number} ({step.kind})"):
                result, script = run_step(engine, step, qi=plan.qi, class_column=plan.class_column, key=plan.key,
                                          replace=replace, script_file=Path(tmp) / f"step{step.number}.sql",
                                          progress=progress)
            report.steps.append(result)
            report.scripts.append(script)
            for c in result.checks:
                report.check(f"step {step.number} ({step.kind}): {c.name}", c.passed, c.query, c.detail)
            with report.timed(f"step {step.number} ({step.kind}) guarantees"):
                chains.after(step, report)  # raises at the first guarantee of an earlier step it lost
        say("release: proving the gates")
        with report.timed("gates"):
            report.proofs = prove_gates(engine, report, spec, plan, progress)
        if not report.ok:
            raise VerificationError(report.failed_checks)
        report.proof = _primary(report.proofs, plan)
        for table in plan.working:  # after the gates, inside the transaction: only the release remains
            drop_table(engine, get_table(engine, table).expr)
        for out in [*plan.published, *plan.private]:
            f = fingerprint(engine, get_table(engine, out))
            report.outputs[out] = {"rows": f.rows, "digest": f.digest}
    _write_artefacts(report, spec)
    return report


def _primary(proofs: dict[str, Proof], plan: PlanReport) -> Proof | None:
    """The last gated table's proof, holding the SQL of every gate (the page and script show them all)."""
    if not proofs:
        return None
    primary = proofs[plan.gate_tables[-1]]
    for proof in proofs.values():
        primary.sql.update(proof.sql)
    return primary


def _writable(spec: Spec) -> None:
    """The artefact folder can be made, before any work."""
    try:
        spec.out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AnonsqlError(f"cannot create the release folder {spec.out_dir}: {exc.strerror}") from None


def _write_artefacts(report: ReleaseReport, spec: Spec) -> None:
    paths = {what: spec.artefact(what) for what in spec.files}
    report.artefacts = {what: str(p) for what, p in paths.items()}
    paths["manifest"].write_text(json.dumps(manifest.build(report), indent=2) + "\n", encoding="utf-8")
    paths["script"].write_text(manifest.script(report, spec), encoding="utf-8")
    paths["report"].write_text(html.page(report, spec), encoding="utf-8")


def verify(engine: Engine, spec: Spec, progress: Progress | None = None) -> ReleaseVerifyReport:
    """Re-prove the release of `spec` from its manifest: fingerprints, every step, every gate."""
    path = spec.artefact("manifest")
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnonsqlError(f"cannot read the release manifest {path}: {exc} (run `anonsql release run` first)") \
            from None
    if recorded.get("spec", {}).get("sha256") != spec.sha256:
        note = "the spec changed since the release (its sha256 differs from the manifest's)"
    else:
        note = ""
    plan = make_plan(engine, spec)
    report = ReleaseVerifyReport(table=plan.table, manifest=str(path))
    report.changed = fingerprints(engine, report, recorded)
    report.notes += [note] if note else []
    report.notes += reprove_steps(engine, report, spec, plan)
    prove_gates(engine, report, spec, plan, progress)
    return report

