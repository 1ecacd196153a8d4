"""`anonsql show` and `anonsql sql`: a quick look at a table or at one read-only query."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .. import api
from . import options
from .app import Command


def _limit(default: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--limit", type=click.IntRange(min=0), default=default, show_default=True, metavar="N",
                        help="show at most N rows")


@click.command(cls=Command, epilog="example: anonsql show --db demo.duckdb --table adult_k10 --limit 5")
@options.common()
@_limit(20)
def show(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, limit: int) -> int:
    """Print the first rows of a table (as stored, in no order) as a text table; --json: the rows as
    JSON. Reads only."""
    return options.finish(api.show_table(db, table, limit=limit), as_json, report_file)


@click.command("sql", cls=Command,
               epilog="example: anonsql sql --db demo.duckdb \"SELECT sex, COUNT(*) AS n FROM adult GROUP BY sex\"")
@click.argument("query")
@options.common(with_table=False)
@_limit(100)
def sql_(query: str, db: str, as_json: bool, quiet: bool, report_file: str | None, limit: int) -> int:
    """Run one read-only query and print its rows as a text table (--json: as JSON).

    Only a query that reads is run (SELECT, WITH ... SELECT, set operations): a statement that
    writes (INSERT, UPDATE, DELETE, CREATE, SELECT INTO, a data-modifying WITH, several
    statements) is refused in one line, and the query still runs in a transaction rolled back
    after. Functions with effects outside the database's tables (PostgreSQL's setval, say) are
    not detected: for untrusted queries, connect as a read-only role.
    """
    return options.finish(api.read_query(db, query, limit=limit), as_json, report_file)


COMMANDS: list[click.Command] = [show, sql_]
