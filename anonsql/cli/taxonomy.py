"""The `taxonomy load|show` group: the hierarchies protect's -g methods and tables' --hierarchy
read (anonsql.taxonomy)."""

from __future__ import annotations

import click

from .. import api
from . import options
from .app import Group


@click.group(cls=Group)
def taxonomy() -> None:
    """Store a value generalization hierarchy (for protect's -g methods).

    Taxonomies (one rooted tree of labels per attribute) live in the table
    anonsql_taxonomies(taxonomy, position, value, parent), so a run that generalizes along them
    can be repeated from the database alone.
    """


@taxonomy.command(epilog="example: anonsql taxonomy load --db demo.duckdb --name severity "
                  "--file docs/examples/severity.toml")
@options.common(with_table=False)
@click.option("--name", required=True, help="the name protect --taxonomy refers to")
@click.option("--file", "file", metavar="FILE", help="a .toml or .json file with the nested form")
@click.option("--from-table", metavar="TABLE", help="a table with columns value and parent (NULL parent: the root)")
@options.replace("a stored taxonomy of that name")
def load(db: str, as_json: bool, quiet: bool, report_file: str | None, name: str, file: str | None,
         from_table: str | None, replace: bool) -> int:
    """Validate a taxonomy and store it.

    Validate a taxonomy (one root, no cycle, every label once) and store it. File form (TOML or
    JSON), one key, the root; a node is a list of leaves or a table of children, e.g. TOML:
    [Any] / Low = [1, 2] / [Any.Mid-High] / 3 = [] / High = [4, 5].
    """
    if (file is None) == (from_table is None):
        raise click.UsageError("give exactly one of --file and --from-table")
    return options.finish(api.taxonomy_load(db, name, file=file, table=from_table, replace=replace), as_json,
                          report_file)


@taxonomy.command(epilog="example: anonsql taxonomy show --db demo.duckdb --name severity")
@options.common(with_table=False)
@click.option("--name", required=True, help="the stored taxonomy's name")
def show(db: str, as_json: bool, quiet: bool, report_file: str | None, name: str) -> int:
    """Print a stored taxonomy as an indented tree (--json: its (value, parent) rows)."""
    return options.finish(api.taxonomy_show(db, name), as_json, report_file)


COMMANDS: list[click.Command] = [taxonomy]
