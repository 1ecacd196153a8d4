"""The `release` group: plan, run and verify a whole release declared in one TOML spec."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .. import release as releases  # the package face: its functions load when a command runs
from . import options
from .app import Group

_EPILOG = (
    "\b\nexamples:\n"
    "  anonsql release plan   examples/release/adult.toml --db adult.duckdb\n"
    "  anonsql release run    examples/release/adult.toml --db adult.duckdb --replace\n"
    "  anonsql release verify examples/release/adult.toml --db adult.duckdb\n"
    "adult.duckdb is prepared as docs/release.md shows (Adult with a row key id); that page\n"
    "also describes the spec's keys."
)

_spec = click.argument("spec", type=click.Path(dir_okay=False), metavar="SPEC.toml")
_db = click.option("--db", metavar="DB", help=options.DB_HELP + " (default: the spec's [source] db)")


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    return _spec(_db(options.shared(f)))


@click.group(cls=Group, epilog=_EPILOG)
def release() -> None:
    """Declare a whole release in one TOML file (source, steps, gates), run it all or nothing,
    and hand reviewers a manifest, one SQL script and an HTML report."""


@release.command(epilog=_EPILOG)
@_common
def plan(spec: str, db: str | None, as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Show what the release will run, on which tables, and its gates; changes nothing."""
    return options.finish(releases.release_plan(spec, db), as_json, report_file)


@release.command(epilog=_EPILOG)
@_common
@options.replace("the output tables")
def run(spec: str, db: str | None, as_json: bool, report_file: str | None, replace: bool, quiet: bool) -> int:
    """Run every step and prove every gate in one transaction: all or nothing. Writes the
    manifest (JSON), the release as one SQL script and the HTML report (the spec's [outputs])."""
    result = releases.release_run(spec, db, replace=replace, progress=options.progress(quiet))
    return options.finish(result, as_json, report_file)


@release.command(epilog=_EPILOG)
@_common
def verify(spec: str, db: str | None, as_json: bool, report_file: str | None, quiet: bool) -> int:
    """Re-prove every guarantee on the published tables and compare the input's and outputs'
    fingerprints with the manifest (exit 1 when anything changed or fails)."""
    result = releases.release_verify(spec, db, progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, check=True)


COMMANDS = [release]
