"""The release's private files (under private/: they spell out original values): the one
reviewable SQL script of the whole run and the row-level change lists. The public record, the
manifest, is the ReleaseReport's dict (report.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .spec import Spec

if TYPE_CHECKING:
    from .report import ReleaseReport


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
