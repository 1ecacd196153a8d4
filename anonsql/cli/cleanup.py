"""`anonsql cleanup`: what crashed runs left on Spark put right, in every schema."""

from __future__ import annotations

import click

from .. import api
from . import options
from .app import Command


@click.command(cls=Command, epilog="example: anonsql cleanup --db 'spark:local[2]?warehouse=/data/wh'")
@options.common(with_table=False)
def cleanup(db: str, as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Put right what killed runs left in a Spark catalog, in every schema.

    Spark has no transactions: a writer creates its output under a working name
    (<out>__anonsql_stage_<id>) and renames it into place. After a crash, an output whose run
    had verified everything and begun renaming gets its new table; one whose run had not keeps or
    gets back its old table; working tables are dropped. Each action is listed. Any command that
    opens an output does the same for that output. DuckDB and PostgreSQL need none of it.
    """
    return options.finish(api.cleanup(db), as_json, report_file)


COMMANDS = [cleanup]
