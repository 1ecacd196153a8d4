"""The `hierarchy show` group: the generalization hierarchies kanon --hierarchy recodes along
(anonsql.hierarchy)."""

from __future__ import annotations

import click

from .. import api
from . import options
from .app import Group


@click.group(cls=Group)
def hierarchy() -> None:
    """Describe generalization hierarchies of quasi-identifiers (for kanon --hierarchy).

    A hierarchy is a ladder of levels for one column, from the value itself (level 0) to *
    (suppressed, NULL): interval:W1,W2,... (numbers by ranges [30,40), each width a multiple of the
    one before), prefix:N1,N2,... (text by its first characters, 123**), date:P1,P2,... (day,
    week, month, quarter, year: 2016-05-10, [2016-05-09,2016-05-16), 2016-05, 2016-Q2, 2016) and
    taxonomy:NAME (a stored taxonomy's nodes, see anonsql taxonomy load).
    """


@hierarchy.command(epilog="example: anonsql hierarchy show --db demo.duckdb --table adult_raw "
                   "--hierarchy age=interval:5,10,20")
@options.common()
@click.option("--hierarchy", "hierarchies", multiple=True, required=True, metavar="COL=KIND:ARGS",
              help="a column's hierarchy (repeatable), e.g. age=interval:5,10,20 or zip=prefix:3,1")
def show(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None,
         hierarchies: tuple[str, ...]) -> int:
    """Print what each level of a column's hierarchy publishes on a table (read-only)."""
    return options.finish(api.hierarchy_show(db, table, list(hierarchies)), as_json, report_file)


COMMANDS: list[click.Command] = [hierarchy]
