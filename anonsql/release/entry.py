"""The release's public functions (`anonsql.release_plan`, `release_run`, `release_verify`): the
spec read, its database opened, then plan.py or job.py. The release sits on top of the jobs: it
calls their entries (anonsql.kanon.entry, ...), never anonsql.api, which does not know it."""

from __future__ import annotations

from pathlib import Path

from ..engine import Engine, opened
from ..errors import AnonsqlError
from ..report import Progress
from ..validate import validate_params
from . import job
from .plan import PlanReport, make_plan
from .report import ReleaseReport, ReleaseVerifyReport
from .spec import Spec, load


def _database(spec: Spec, db: str | Engine | None) -> str | Engine:
    """The database of a release: `db` if given, else the spec's [source] db (a file path is
    relative to the spec's folder)."""
    if db is not None:
        return db
    given = spec.source.db
    if not given:
        raise AnonsqlError(f"{spec.path}: no database: give [source] db = \"...\" in the spec or --db")
    return given if "://" in given or given == ":memory:" else str(spec.path.parent / given)


def release_plan(spec: str | Path, db: str | Engine | None = None) -> PlanReport:
    """What the release declared in the TOML file `spec` will run, on which tables; changes nothing."""
    parsed = load(spec)
    with opened(_database(parsed, db)) as engine:
        return make_plan(engine, parsed)


@validate_params({"replace": bool})
def release_run(spec: str | Path, db: str | Engine | None = None, *, replace: bool = False,
                progress: Progress | None = None) -> ReleaseReport:
    """Run every step and prove every gate of the release `spec` in one transaction (all or
    nothing), then write its manifest, SQL script and HTML report (see docs/release.md)."""
    parsed = load(spec)
    with opened(_database(parsed, db)) as engine:
        return job.run(engine, parsed, replace=replace, progress=progress)


def release_verify(spec: str | Path, db: str | Engine | None = None, *,
                   progress: Progress | None = None) -> ReleaseVerifyReport:
    """Re-prove every guarantee of a run release on its published tables, and compare the input's
    and outputs' fingerprints with the manifest. `ok` says."""
    parsed = load(spec)
    with opened(_database(parsed, db)) as engine:
        return job.verify(engine, parsed, progress=progress)
