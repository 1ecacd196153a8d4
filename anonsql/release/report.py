"""The release's reports: a run release (ReleaseReport), whose public dict is the manifest (JSON,
public: figures, checks, SQL file names, fingerprints, hashes; never a row-level fact), and a
verified one (ReleaseVerifyReport). The page (html.py) and the private files (private.py) are
drawn from a ReleaseReport; job.py fills it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..report import Report, _plain
from . import publication
from .plan import PlanReport
from .spec import PRIVATE_DIR, PRIVATE_FILES
from .verify import Proof


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
    artefacts: dict[str, str] = field(default_factory=dict)  # manifest / report / script / changes -> path
    hashes: dict[str, dict[str, Any]] = field(default_factory=dict)  # path in the folder -> sha256, bytes
    private_folder: str = ""  # the one part of the release folder that is not public
    recorded: dict[str, Any] | None = None  # a staged manifest this run completed (no step ran)

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
        """Tables kept in the database with ORIGINAL values (protect's _changes, tables' _private_audit)."""
        return self.plan.private

    def lines(self) -> list[str]:
        if self.recorded is not None:
            lines = [f"release {self.name}: completed: an earlier run's tables had committed but its artefacts "
                     "had not been moved into place; they are now (no step ran again)"]
        else:
            lines = [f"release {self.name}: {self.table} -> published {', '.join(self.published)}"]
            lines += [f"  {s.number}. {s.kind}: {', '.join(s.outputs)}" for s in self.plan.steps]
            lines += [f"  working tables dropped: {', '.join(self.working)}"] if self.working else []
        if self.private:
            lines.append(f"  PRIVATE tables (original values; never publish): {', '.join(self.private)}")
        for table, proof in self.proofs.items():
            b, a = proof.before, proof.after
            lines.append(f"  {table}: prosecutor risk {b.risk.max_risk:.3g} -> {a.risk.max_risk:.3g}; suppressed QI "
                         f"cells {proof.suppressed_share:.2%} (before: {b.table})")
            lines += [f"  {table}: {n} error {e['before']:.4f} -> {e['after']:.4f}" for n, e in proof.errors.items()]
        lines += [f"  {what}: {path}" + (" (PRIVATE)" if what in PRIVATE_FILES else "")
                  for what, path in self.artefacts.items()]
        return lines + ([f"  PRIVATE: {self.private_folder}/ (the rest of the release folder is public)"]
                        if self.private_folder else [])

    def to_dict(self) -> dict[str, Any]:
        return self.recorded if self.recorded is not None else manifest(self)


@dataclass(kw_only=True)
class ReleaseVerifyReport(Report):
    """`release verify`: fingerprints against the manifest and every guarantee re-proved."""

    manifest: str
    changed: list[str] = field(default_factory=list)  # tables whose fingerprint differs from the manifest
    artefacts_changed: list[str] = field(default_factory=list)  # files missing or not matching their sha256

    def lines(self) -> list[str]:
        head = f"release of {self.table}: every guarantee re-proved on the published tables" if self.ok else \
            f"release of {self.table}: NOT verified ({len(self.failed_checks)} checks fail)"
        return [head, f"  manifest {self.manifest}"] + [f"  CHANGED since the release: {t}" for t in self.changed] \
            + [f"  ARTEFACT missing or changed since the release: {a}" for a in self.artefacts_changed]


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


def manifest(report: ReleaseReport) -> dict[str, Any]:
    """The manifest: version, spec hash, input fingerprint, seeds, per step its outputs, figures and
    checks, per gate the SQL that proved it, the outputs' fingerprints; timings kept apart."""
    from ..version import version

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
        "anonsql": version(),
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
        "figures": _plain({k: v for k, v in dataclasses.asdict(proof).items() if k not in proof.PRIVATE})
        if proof else {},
        "ok": report.ok,
        "seconds": report.seconds,
    }
