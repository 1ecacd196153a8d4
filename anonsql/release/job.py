"""A whole release in one transaction: every step through its job, then the gates; any failed
check or gate raises VerificationError inside the transaction, so nothing is left behind. The
artefacts (public: manifest, HTML report; private/: the SQL script, the row-level changes) are
staged at the end of the transaction and moved into place only after the commit (artefacts.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..catalog import drop_table, get_table
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Check, Progress, silent
from . import artefacts, html, private, publication
from .guarantees import Chains
from .plan import PlanReport, make_plan
from .report import ReleaseReport, ReleaseVerifyReport, manifest
from .spec import PRIVATE_DIR, Spec, artefact_path
from .stats import fingerprint
from .steps import run_step
from .verify import Proof, fingerprints, prove_gates, reprove_steps


def run(engine: Engine, spec: Spec, *, replace: bool = False, progress: Progress | None = None) -> ReleaseReport:
    """Plan, then every step and the gates in one transaction; then the artefacts."""
    say = progress or silent
    if not engine.supports_transactions:
        raise AnonsqlError(f"release run needs transactions (all or nothing); {engine.dialect} has none: "
                           "run the release on DuckDB or PostgreSQL")
    plan = make_plan(engine, spec)
    report = ReleaseReport(table=plan.table, name=spec.name, dialect=engine.dialect, spec_sha256=spec.sha256,
                           plan=plan, private_folder=str(spec.out_dir / PRIVATE_DIR))
    resumed = artefacts.resume(engine, spec, report.timed)
    if resumed is not None:
        return _completed(report, spec, *resumed)
    if plan.existing_outputs and not replace:
        raise AnonsqlError(f"output tables already exist: {', '.join(plan.existing_outputs)} (use --replace)")
    artefacts.writable(spec)
    src = fingerprint(engine, get_table(engine, plan.table))
    report.input = {"table": plan.table, "rows": src.rows, "digest": src.digest}
    try:
        with report.timed("transaction"):
            _transaction(engine, spec, plan, report, replace, say, progress)
    except BaseException:
        artefacts.discard(spec)  # nothing committed: no artefact either
        raise
    artefacts.move_into_place(spec, report.timed)
    return report


def _transaction(engine: Engine, spec: Spec, plan: PlanReport, report: ReleaseReport, replace: bool, say: Progress,
                 progress: Progress | None) -> None:
    """Every step and gate in one transaction; the artefacts staged last, inside it."""
    with engine.transaction():
        chains = Chains(engine, spec, plan)
        for step in plan.steps:
            say(f"release: step {step.number} ({step.kind}) {step.input} -> {', '.join(step.outputs)}")
            with report.timed(f"step {step.number} ({step.kind})"), _at_step(spec, step.number):
                result, script = run_step(engine, step, qi=plan.qi, class_column=plan.class_column, key=plan.key,
                                          replace=replace, progress=progress)
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
        report.warnings += publication.warnings(engine, spec, plan, report.steps)
        with report.timed("staged artefacts"):
            _stage(report, spec)


@contextmanager
def _at_step(spec: Spec, number: int) -> Iterator[None]:
    """A step's bad input (an unknown column, a wrong option) is an error at its [[steps]] entry's
    line; database errors and failed checks keep their own words and kinds."""
    try:
        yield
    except AnonsqlError as exc:
        if type(exc) is not AnonsqlError or str(exc).startswith(str(spec.path)):
            raise
        raise AnonsqlError(f"{spec.at('steps', number - 1, None)}: {exc}") from None


def _primary(proofs: dict[str, Proof], plan: PlanReport) -> Proof | None:
    """The last gated table's proof, holding the SQL of every gate (the page and script show them all)."""
    if not proofs:
        return None
    primary = proofs[plan.gate_tables[-1]]
    for proof in proofs.values():
        primary.sql.update(proof.sql)
    return primary


def _stage(report: ReleaseReport, spec: Spec) -> None:
    """The HTML report and the private files, then the manifest holding their hashes."""
    report.artefacts = {what: str(spec.artefact(what)) for what in spec.files}
    path = {what: artefact_path(what, name) for what, name in spec.files.items()}
    files = {path["report"]: html.page(report, spec), path["script"]: private.script(report, spec),
             path["changes"]: json.dumps(private.private_rows(report), indent=2, default=str) + "\n",
             path["utility"]: html.utility_page(report)}

    def manifest_text(hashes: dict[str, Any]) -> str:
        report.hashes = hashes
        return json.dumps(manifest(report), indent=2) + "\n"

    artefacts.stage(spec, files, manifest_text)


def _completed(report: ReleaseReport, spec: Spec, recorded: dict[str, Any], checks: list[Check]) -> ReleaseReport:
    """The report of a run that only finished an earlier run's artefacts."""
    report.recorded, report.checks = recorded, checks
    report.input, report.outputs = recorded["input"], recorded["outputs"]
    report.warnings = list(recorded.get("warnings", []))
    report.artefacts = {what: str(spec.artefact(what)) for what in spec.files}
    return report


def verify(engine: Engine, spec: Spec, progress: Progress | None = None) -> ReleaseVerifyReport:
    """Re-prove the release of `spec` from its manifest: fingerprints, every step, every gate."""
    path = spec.artefact("manifest")
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        hint = "a run was killed after its commit: `anonsql release run` completes it" \
            if artefacts.Folders.of(spec).staging.is_dir() else "run `anonsql release run` first"
        raise AnonsqlError(f"cannot read the release manifest {path}: {exc} ({hint})") from None
    if recorded.get("spec", {}).get("sha256") != spec.sha256:
        note = "the spec changed since the release (its sha256 differs from the manifest's)"
    else:
        note = ""
    plan = make_plan(engine, spec)
    report = ReleaseVerifyReport(table=plan.table, manifest=str(path))
    report.changed = fingerprints(engine, report, recorded)
    report.artefacts_changed = artefacts.check(report, spec, recorded)
    report.notes += [note] if note else []
    report.notes += reprove_steps(engine, report, spec, plan)
    prove_gates(engine, report, spec, plan, progress)
    return report

