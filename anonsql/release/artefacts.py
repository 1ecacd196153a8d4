"""The release's files, all or nothing. They are written to a staging folder beside the release
folder at the end of the database transaction, each file's sha256 recorded in the manifest
(written last: it cannot hash itself), and moved into place only after the commit: the previous
release folder is set aside, the staged one renamed to its name, the previous one removed.

A run killed after the commit leaves a staged set whose manifest describes the committed tables;
the next run of the same spec finds it complete (every hash holds) and matching (the spec's
sha256 and the tables' fingerprints are the manifest's) and finishes the move instead of running
again. Any other staged set is a run that did not commit: it is removed. `release verify` checks
every recorded file against its hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Check, Report
from .spec import PRIVATE_DIR, Spec
from .verify import fingerprints


@dataclass(frozen=True)
class Folders:
    """The release folder, its staging folder and where the previous release waits during the move."""

    final: Path
    staging: Path
    previous: Path

    @classmethod
    def of(cls, spec: Spec) -> Folders:
        d = spec.out_dir
        return cls(d, d.with_name(f".{d.name}.staging"), d.with_name(f".{d.name}.previous"))


def writable(spec: Spec) -> None:
    """Before any work, without creating anything: the release folder can be made or replaced."""
    final = Folders.of(spec).final
    if final.exists() and not final.is_dir():
        raise AnonsqlError(f"cannot write the release folder {final}: a file of that name exists")
    parent = final.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise AnonsqlError(f"cannot create the release folder {final}: {parent} is not a writable folder")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(path: Path, text: str) -> dict[str, Any]:
    """Write and fsync one file; its hash and size for the manifest."""
    data = text.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def stage(spec: Spec, files: Mapping[str, str], manifest: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """Write `files` (path in the release folder -> text) to the staging folder, then the manifest
    built from their hashes; returns the hashes."""
    folders = Folders.of(spec)
    shutil.rmtree(folders.staging, ignore_errors=True)
    hashes = {rel: _write(folders.staging / rel, text) for rel, text in files.items()}
    _write(folders.staging / _manifest_name(spec), manifest(hashes))
    return hashes


def discard(spec: Spec) -> None:
    """A run that did not commit: its staged files go."""
    shutil.rmtree(Folders.of(spec).staging, ignore_errors=True)


def move_into_place(spec: Spec, timed: Callable[[str], Any]) -> None:
    """After the commit: the staged set becomes the release folder (`timed(stage)` brackets each
    rename, so the crash tests can stop the process between them)."""
    f = Folders.of(spec)
    f.final.parent.mkdir(parents=True, exist_ok=True)
    with timed("artefacts: previous set aside"):
        if f.final.exists():
            shutil.rmtree(f.previous, ignore_errors=True)
            f.final.rename(f.previous)
    with timed("artefacts: in place"):
        f.staging.rename(f.final)
    shutil.rmtree(f.previous, ignore_errors=True)


def resume(engine: Engine, spec: Spec, timed: Callable[[str], Any]) -> tuple[dict[str, Any], list[Check]] | None:
    """A staged set left by a run killed after its commit, moved into place: (its manifest, the
    fingerprint checks that matched it to the tables); None when there is none to finish (a
    staged set of a run that did not commit is removed, a previous release set aside is restored)."""
    f = Folders.of(spec)
    recorded = _read(f.staging / _manifest_name(spec)) if f.staging.is_dir() else None
    if recorded is not None and recorded.get("spec", {}).get("sha256") == spec.sha256 and \
            not _unchanged(f.staging, recorded, []):
        checks = _matching(engine, recorded)
        if checks is not None:
            move_into_place(spec, timed)
            return recorded, checks
    discard(spec)
    if f.previous.is_dir():
        if f.final.exists():
            shutil.rmtree(f.previous)
        else:
            f.previous.rename(f.final)
    return None


def check(report: Report, spec: Spec, recorded: Mapping[str, Any]) -> list[str]:
    """`release verify`: one check per recorded artefact (there, and its sha256 the manifest's);
    returns the missing or changed ones."""
    checks: list[Check] = []
    bad = _unchanged(spec.out_dir, recorded, checks)
    report.checks += checks
    if "artefacts" not in recorded:
        report.notes.append("the manifest records no artefact hashes (written by an older anonsql)")
    return bad


def _unchanged(folder: Path, recorded: Mapping[str, Any], checks: list[Check]) -> list[str]:
    """The recorded artefacts missing or changed in `folder` (one Check each appended to `checks`)."""
    bad = []
    for rel, want in recorded.get("artefacts", {}).items():
        path = folder / rel
        now = sha256(path) if path.is_file() else None
        same = now == want["sha256"]
        detail = "" if same else "MISSING" if now is None else f"CHANGED: sha256 {now} (manifest: {want['sha256']})"
        checks.append(Check(f"artefact {rel} is there and unchanged", same, "", detail))
        bad += [] if same else [rel]
    return bad


def _matching(engine: Engine, recorded: Mapping[str, Any]) -> list[Check] | None:
    """The fingerprint checks of the recorded input and outputs when every one holds, else None."""
    probe = Report(table=str(recorded.get("input", {}).get("table", "")))
    try:
        fingerprints(engine, probe, dict(recorded))
    except (AnonsqlError, KeyError):
        return None  # a table is missing, or the manifest is not one
    return probe.checks if probe.ok else None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _manifest_name(spec: Spec) -> str:
    return spec.files["manifest"]


def private_note(spec: Spec) -> str:
    """One line for the summary, the report and the docs: what in the folder is not public."""
    return f"everything in {spec.out_dir}/ is public except {spec.out_dir / PRIVATE_DIR}/ (original values)"
