"""What the taxonomy store holds, read by SQL: one stored taxonomy's rows, rebuilt and re-validated
as a Taxonomy (protect's -g methods and tables' --hierarchy read them alike)."""

from __future__ import annotations

from collections.abc import Mapping

from .. import sql
from ..catalog import find_table
from ..engine import Engine
from ..errors import AnonsqlError
from .model import Taxonomy

#: The taxonomy store: one (taxonomy, position, value, parent) row per node (sql/taxonomy/create.sql).
STORE = "anonsql_taxonomies"
STORE_TABLE = sql.TableName(STORE)


def stored_rows(engine: Engine, name: str, store: sql.TableName = STORE_TABLE) -> list[tuple]:
    """The (value, parent) rows of a stored taxonomy, in pre-order (none: not stored)."""
    return engine.fetch_all(*sql.render("taxonomy/read", engine.dialect, tbl=store.expr, taxonomy=name))


def read_taxonomy(engine: Engine, name: str, store: sql.TableName = STORE_TABLE) -> Taxonomy:
    """A stored taxonomy, rebuilt and re-validated (children in their stored pre-order); `store`
    the store's table (a staged one while it is written)."""
    if find_table(engine, store) is None:
        raise AnonsqlError(f"no taxonomy is stored yet (load {name!r} with 'anonsql taxonomy load')")
    found = stored_rows(engine, name, store)
    if not found:
        raise AnonsqlError(f"no stored taxonomy named {name!r} (load it with 'anonsql taxonomy load')")
    return Taxonomy.from_rows(name, found)


def read_taxonomies(engine: Engine, assignment: Mapping[str, str]) -> dict[str, Taxonomy]:
    """column -> stored taxonomy, for an `attr=name,...` assignment (each read once)."""
    cache: dict[str, Taxonomy] = {}
    for name in assignment.values():
        if name not in cache:
            cache[name] = read_taxonomy(engine, name)
    return {column: cache[name] for column, name in assignment.items()}
