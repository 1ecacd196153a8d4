"""The `anonsql` command group and its one error handler.

Exit codes: 0 success, 1 a check that ran and failed (e.g. not k-anonymous), 2 bad input or
a refused run (one line on stderr, no traceback, nothing changed in the database). The same
rule holds for a closed output pipe (`anonsql … | head`) and for Ctrl-C.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from ..errors import AnonsqlError, first_line, redact

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: What a reader who closed the output pipe early is told, during a command or at its final flush.
BROKEN_PIPE = "the output was closed early (broken pipe)"


class Failure(click.ClickException):
    """An error of a running command, shown as `anonsql <command>: error: <one line>`."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, command: str):
        super().__init__(message)
        self.command = command


class Command(click.Command):
    """A command whose user errors, broken pipes and interrupts become one `Failure` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnonsqlError as exc:
            raise Failure(first_line(exc), ctx.command_path) from None
        except BrokenPipeError:
            _silence_stdout()
            raise Failure(BROKEN_PIPE, ctx.command_path) from None
        except KeyboardInterrupt:
            raise Failure("interrupted; an unfinished run is rolled back", ctx.command_path) from None


class Group(click.Group):
    """A group whose commands and subgroups follow the same error rule."""

    command_class = Command
    group_class = type  # subgroups are Groups too (click: `type` means "this class")


class Root(Group):
    """The `anonsql` group: a command's module (and its method's dependencies) is imported only
    when that command runs or help lists it, so `anonsql kanon` never pays for scipy or
    scikit-learn (issue 11: a fast start)."""

    #: command name -> the module of anonsql.cli whose COMMANDS define it (a test checks both agree)
    MODULES = {"load": "data", "dataset": "data", "profile": "data", "check": "data", "bin": "data",
               "kanon": "kanon", "evaluate": "evaluate", "nbc": "nbc", "protect": "protect", "taxonomy": "taxonomy",
               "hierarchy": "hierarchy",
               "binarize": "features", "features": "features", "ac": "features", "tables": "tables",
               "release": "release", "dbt": "dbt", "cleanup": "cleanup", "risk": "attack", "attack": "attack",
               "show": "look", "sql": "look"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.MODULES, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.MODULES:
            for command in importlib.import_module(f"{__package__}.{self.MODULES[cmd_name]}").COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so Python's final flush does not fail a second time."""
    with contextlib.suppress(OSError, ValueError):  # best effort: stdout may have no file descriptor
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@click.group(cls=Root, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="anonsql", prog_name="anonsql")
def cli() -> None:
    """Anonymize tables where they live: statistics and rewrites run as SQL in DuckDB (a file
    path) or PostgreSQL (a postgresql:// URL), decisions in Python on small count tables, and
    every guarantee is re-checked by an independent SQL query before success is reported.

    NULL in a quasi-identifier is the papers' suppressed value (⊥): it counts as a value of its
    own when rows are grouped, and no row is ever dropped for holding one.
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises, never prints a traceback)."""
    try:
        result = cli.main(args=list(argv) if argv is not None else None, prog_name="anonsql",
                          standalone_mode=False)
    except Failure as exc:
        click.echo(f"{exc.command}: error: {redact(exc.format_message())}", err=True)
        return exc.exit_code
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "anonsql"
        hint = f" (see {where} --help)" if exc.ctx else ""
        message = exc.format_message().strip().splitlines()[0]  # names the option: "Invalid value for '--k': …"
        click.echo(f"{where}: error: {redact(message)}{hint}", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        click.echo(f"anonsql: error: {redact(first_line(exc))}", err=True)
        return exc.exit_code
    except click.Abort:
        click.echo("anonsql: error: interrupted", err=True)
        return EXIT_USAGE
    return result if isinstance(result, int) else EXIT_OK


def run() -> None:
    """The console script: `main`, then the usual interpreter exit through `sys.exit` (atexit
    handlers, finalizers and thread joins run as for any Python program). The streams are
    flushed first, so a reader that closed the pipe early gets the usual one-line error, exit 2,
    not Python's "Exception ignored" at shutdown."""
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        click.echo(f"anonsql: error: {BROKEN_PIPE}", err=True)
        code = EXIT_USAGE
    sys.exit(code)
