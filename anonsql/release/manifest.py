"""The release's record: the manifest (JSON, public: figures, checks, SQL file names, fingerprints,
hashes; never a row-level fact), the one reviewable SQL script of the whole run and the row-level
change lists (both private: they spell out original values)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..report import _plain
from . import publication
from .spec import PRIVATE_DIR, Spec

if TYPE_CHECKING:
    from .job import ReleaseReport

#: Report fields that are not figures of the release: wall times and where a script went (and the
#: checks and warnings, recorded apart).
_VOLATILE = ("seconds", "emitted_sql", "checks", "ok", "warnings")
#: Step options that name rows (protect's confidential cells): the manifest withholds them.
_PRIVATE_OPTIONS = ("rows", "cells")


def _checks(checks: list[Any], proofs: dict[str, str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for c in checks:
        row = {"name": c.name, "passed": c.passed, "detail": c.detail, "query": f"sql/{c.query}.sql" if c.query else ""}
        if proofs and c.name in proofs:
            row["sql"] = proofs[c.name]
        rows.append(row)
    return rows


def build(report: ReleaseReport) -> dict[str, Any]:
    """The manifest: version, spec hash, input fingerprint, seeds, per step its outputs, figures and
    checks, per gate the SQL that proved it, the outputs' fingerprints; timings kept apart."""
    from .. import __version__

    plan = report.plan
    steps = []
    for planned, result in zip(plan.steps, report.steps):
        figures = {k: v for k, v in result.public_dict().items() if k not in _VOLATILE}
        options = {k: "(private: names rows)" if k in _PRIVATE_OPTIONS else v for k, v in planned.options.items()}
        steps.append({"number": planned.number, "kind": planned.kind, "input": planned.input,
                      "outputs": planned.outputs, "seed": planned.seed, "options": _plain(options),
                      "figures": figures, "checks": _checks(result.checks), "warnings": result.warnings})
    published, private = publication.split(plan)
    proof = report.proof
    gates = [c for c in report.checks if c.name.startswith("gate:")]
    return {
        "anonsql": __version__,
        "release": report.name,
        "spec": {"file": plan.spec.rsplit("/", 1)[-1], "sha256": report.spec_sha256},
        "engine": report.dialect,
        "input": report.input,
        "seeds": {f"step {s.number} ({s.kind})": s.seed for s in plan.steps if s.seed is not None},
        "steps": steps,
        "gate_table": plan.gate_table,
        "baseline": plan.baseline,
        "qi": plan.qi,
        "gates": _checks(gates, proof.sql if proof else None),
        "warnings": report.warnings,
        "published": published,
        "private": {"tables": private, "folder": f"{PRIVATE_DIR}/"},
        "outputs": report.outputs,
        "artefacts": report.hashes,
        "figures": _plain(dataclasses.asdict(proof)) if proof else {},
        "ok": report.ok,
        "seconds": report.seconds,
    }


def private_rows(report: ReleaseReport) -> dict[str, Any]:
    """The steps' row-level fields (Report.PRIVATE: protect's cells and changes), for private/."""
    return {f"step {p.number} ({p.kind})": {k: v for k, v in r.to_dict().items() if k in r.PRIVATE}
            for p, r in zip(report.plan.steps, report.steps) if r.PRIVATE}


def script(report: ReleaseReport, spec: Spec) -> str:
    """Every step's script in order inside ONE transaction, then the gates' queries."""
    parts = [f"-- anonsql release {report.name}: {report.table} -> {', '.join(report.outputs)}",
             f"-- spec {spec.path.name} (sha256 {spec.sha256}); input {report.input['rows']:,} rows, "
             f"fingerprint {report.input['digest']}",
             "-- PRIVATE: the steps' decisions spell out ORIGINAL values; keep this file as private as the source.",
             "-- Each step's verification queries follow its statements; the gates come last.", "", "BEGIN;", ""]
    for planned, text in zip(report.plan.steps, report.scripts):
        parts.append(f"-- ===== step {planned.number}: {planned.kind} {planned.input} -> {', '.join(planned.outputs)}")
        parts += [line for line in text.splitlines() if line.strip() not in ("BEGIN;", "COMMIT;")]
    parts += ["-- ===== gates: run on the published tables; each must hold", ""]
    for name, text in (report.proof.sql.items() if report.proof else []):
        parts += [f"-- {name}", text.rstrip(";") + ";", ""]
    return "\n".join([*parts, "COMMIT;", ""])
