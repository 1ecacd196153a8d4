"""Options every command shares, declared once, and the one way a command prints its result."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .. import validate
from ..errors import AnonsqlError
from ..report import WARNING, Progress, Report, save
from .app import EXIT_FAILED, EXIT_OK

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = ("DuckDB database file (must exist; only load/dataset create one), :memory:, "
           "postgresql://user@host:port/dbname URL, "
           "or Spark: spark:local[2]?warehouse=DIR, spark://host:7077, sc://host:port")


class OutputFile(click.ParamType):
    """A file a job will write (`-` = standard output), checked before any work is done:
    its folder must exist and be writable, and it must not be a folder itself."""

    name = "FILE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return validate.output_file(os.fspath(value), "output file") or value
        except AnonsqlError as exc:
            self.fail(str(exc), param, ctx)


def _compose(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


def _wait(ctx: click.Context, param: click.Parameter, seconds: float) -> None:
    """--wait: the DuckDB files this command opens are waited for while another process holds
    them (anonsql.engine.duckdb.LOCK_WAIT), until the command ends."""
    from ..engine.duckdb import LOCK_WAIT  # the engine is imported when the command runs

    def say(line: str) -> None:
        if not ctx.params.get("quiet"):
            click.echo(line, err=True)

    token = LOCK_WAIT.set((seconds, say))
    ctx.call_on_close(lambda: LOCK_WAIT.reset(token))


#: --db, with --wait beside it: every command that opens a database takes both.
db = _compose(click.option("--db", required=True, metavar="DB", help=DB_HELP),
              click.option("--wait", type=click.FloatRange(min=0), default=0, metavar="SECONDS", expose_value=False,
                           callback=_wait, help="a DuckDB file another process holds: wait up to SECONDS for it "
                           "(default: fail at once, naming the process)"))
as_json = click.option("--json", "as_json", is_flag=True, help="print a JSON object instead of text")
quiet = click.option("--quiet", is_flag=True, help="no progress lines or bars on stderr")
report = click.option("--report", "report_file", type=OutputFile(),
                      help="also write the JSON report to FILE (- for standard output)")
seed = click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
                    help="seed of the run's random choices (same seed, same result)")
k = click.option("--k", required=True, type=click.IntRange(min=1), metavar="K", help="the anonymity threshold k >= 1")


def table(help: str = "table name (name or schema.name)", required: bool = True) -> Callable[[F], F]:
    return click.option("--table", required=required, metavar="TABLE", help=help)


def class_column(help: str = "class (label) column", required: bool = True) -> Callable[[F], F]:
    return click.option("--class", "class_column", required=required, metavar="COLUMN", help=help)


def qi(required: bool = True) -> Callable[[F], F]:
    return click.option("--qi", required=required, metavar="COLS", help="comma-separated quasi-identifier columns")


#: The options of every command, declared here once: --json, --quiet, --report (parameters
#: as_json, quiet, report_file). tests/test_cli_options.py walks the command tree for them.
shared = _compose(as_json, quiet, report)
SHARED = ("as_json", "quiet", "report_file")
#: ... and of every command that rewrites a table into a new one: --emit-sql, --dry-run, --replace.
WRITING = ("emit_sql", "dry_run", "replace")


def common(with_table: bool = True) -> Callable[[F], F]:
    """--db, --table (unless `with_table` is False) and the shared options: every command has them."""
    return _compose(db, *([table()] if with_table else []), shared)


def replace(what: str = "the output") -> Callable[[F], F]:
    """--replace: replace `what` if present."""
    return click.option("--replace", is_flag=True, help=f"replace {what} if present")


def output(default: str, in_place: bool = True) -> Callable[[F], F]:
    """--out (default named by `default`), --in-place where the job supports it, --replace."""
    opts = [click.option("--out", metavar="TABLE", help=f"output table (default {default})")]
    if in_place:
        opts.append(click.option("--in-place", is_flag=True,
                                 help="rewrite the source table in one transaction (excludes --out), then scrub "
                                      "its old values from the database (DuckDB: the file is rebuilt)"))
    opts.append(replace())
    return _compose(*opts)


emit_sql = _compose(
    click.option("--emit-sql", type=OutputFile(),
                 help="write the run as a reviewable SQL script to FILE (- for standard output), "
                 "ending with the verification queries"),
    click.option("--dry-run", is_flag=True, help="with --emit-sql: write the script, change nothing"),
)


def execute(dry_run: bool, emit_sql: str | None) -> bool:
    """--dry-run only writes the --emit-sql script: a usage error without one."""
    if dry_run and not emit_sql:
        raise click.UsageError("--dry-run needs --emit-sql FILE (it only writes the script)")
    return not dry_run


def progress(quiet: bool) -> Progress:
    """The progress sink of a command: throttled lines on stderr (none with --quiet). A privacy
    warning (`WARNING: ...`, anonsql.report.Report.warn) is said in one place: the text summary
    prints it, so stderr says it only when the summary is JSON (--json), --quiet or not."""
    ctx = click.get_current_context(silent=True)
    return _Progress(quiet, warnings=bool(ctx is not None and ctx.params.get("as_json")))


class _Progress:
    """Progress lines on stderr, at most one per second for a loop's frequent reports
    (lines starting with two spaces); stage lines always pass; `quiet` drops them all;
    privacy warnings pass when `warnings` (the summary will not print them). On a terminal a
    loop's counts (anonsql.progress.tick) are a progress bar instead of its lines."""

    #: the least time between two redraws of a bar, in seconds
    REDRAW = 0.2

    def __init__(self, quiet: bool = False, warnings: bool = True) -> None:
        self._last = 0.0
        self._quiet = quiet
        self._warnings = warnings
        self._bar: Any = None  # the open click progress bar, its loop's name, steps shown, start and last draw
        self._what, self._shown, self._start, self._drawn = "", 0, 0.0, 0.0
        self._lock = threading.RLock()  # a loop may report from its own thread (kanon's)

    def count(self, what: str, done: int, total: int) -> bool:
        """Draw `done` of `total` for the loop `what` as a bar on stderr; False (say the line
        instead) when quiet or stderr is no terminal; the loop's last count then always gets its
        line (the once-a-second throttle dropped it)."""
        with self._lock:
            return self._count(what, done, total)

    def _count(self, what: str, done: int, total: int) -> bool:
        if self._quiet or not sys.stderr.isatty():
            if done >= total:
                self._last = 0.0
            return False
        now = time.monotonic()
        if self._bar is None or what != self._what:
            self._close()
            self._bar = click.progressbar(length=max(total, 1), label=what, file=sys.stderr, show_pos=True,
                                          show_eta=True, item_show_func=lambda rate: rate)
            self._bar.__enter__()
            self._what, self._shown, self._start, self._drawn = what, 0, now, 0.0
        if done > self._shown and (now - self._drawn >= self.REDRAW or done >= total):
            elapsed = now - self._start
            self._bar.update(done - self._shown, f"{done / elapsed:,.0f}/s" if elapsed >= self.REDRAW else "")
            self._shown, self._drawn = done, now
        if done >= total:
            self._close()
        return True

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

    def __call__(self, message: str) -> None:
        with self._lock:
            self._say(message)

    def _say(self, message: str) -> None:
        if not message.startswith("  "):
            self._close()  # a stage line or a warning: the loop's bar is over
        if message.startswith(WARNING):
            if self._warnings:
                sys.stderr.write(message + "\n")
            return
        if self._quiet:
            return
        now = time.monotonic()
        if message.startswith("  ") and now - self._last < 1.0:
            return
        self._last = now
        sys.stderr.write(message + "\n")


def finish(result: Report, as_json: bool, report_file: str | None = None, *, emit_sql: str | None = None,
           check: bool = False) -> int:
    """Print the result (JSON or the summary), write --report, and return the exit code:
    with `check`, 1 when the check ran and failed (e.g. not k-anonymous), else 0.
    When --report or --emit-sql take standard output, the summary goes to stderr."""
    stdout_taken = "-" in (report_file, emit_sql)
    if report_file:
        save(report_file, result.to_json())
    if as_json and report_file != "-":
        click.echo(result.to_json())
    elif not as_json:
        click.echo(result.summary(), err=stdout_taken)
    return EXIT_FAILED if check and not result.ok else EXIT_OK
