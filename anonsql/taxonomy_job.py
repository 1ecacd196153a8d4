"""The taxonomy store: `taxonomy load` validates a hierarchy and keeps it in the database.

Taxonomies live in one table, `anonsql_taxonomies(taxonomy, value, parent)`, so a run that
generalizes along them (protect's -g methods; later a hierarchy per quasi-identifier) can be
repeated from the database alone. A hierarchy comes from a TOML/JSON file or from a user
table with `value` and `parent` columns (children then ordered by value); it is validated
(anonsql.inference.taxonomy) before anything is written, and replacing a stored one needs
`replace`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from . import sql
from .catalog import find_table, get_table
from .engine import Engine
from .errors import AnonsqlError
from .inference.taxonomy import Taxonomy

STORE = "anonsql_taxonomies"


@dataclass
class TaxonomyReport:
    name: str
    store: str
    nodes: int
    leaves: int
    height: int
    root: str
    replaced: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_taxonomy(engine: Engine, name: str, *, file: str | Path | None = None, table: str | None = None,
                  replace: bool = False) -> TaxonomyReport:
    """Validate the taxonomy from `file` or `table` and store it under `name`, in one transaction."""
    if not isinstance(name, str) or not name.strip():
        raise AnonsqlError("a taxonomy needs a non-empty --name")
    name = name.strip()
    if (file is None) == (table is None):
        raise AnonsqlError("give the taxonomy as --file (TOML or JSON) or as --from-table (value, parent)")
    if file is not None:
        tax = Taxonomy.from_file(name, file)
    else:
        src = get_table(engine, table)
        text, params = sql.render("taxonomy_source_rows", engine.dialect, src=src.expr,
                                  value=sql.column(src.column("value").name),
                                  parent=sql.column(src.column("parent").name))
        tax = Taxonomy.from_rows(name, sorted(engine.fetch_all(text, params), key=lambda r: str(r[0])))
    store = sql.TableName(STORE)
    existed = find_table(engine, store) is not None and bool(_stored_rows(engine, name))
    if existed and not replace:
        raise AnonsqlError(f"taxonomy {name!r} is already stored (use --replace to overwrite it)")
    with engine.transaction():
        engine.execute(*sql.render("taxonomy_create", engine.dialect, tbl=store.expr))
        engine.execute(*sql.render("taxonomy_delete", engine.dialect, tbl=store.expr, taxonomy=name))
        frame = pd.DataFrame([(name, i, v, p) for i, (v, p) in enumerate(tax.rows())],
                             columns=["taxonomy", "position", "value", "parent"])
        engine.insert_rows(store.expr.sql(engine.dialect), "taxonomy, position, value, parent", frame.astype(object))
        if read_taxonomy(engine, name) != tax:
            raise AnonsqlError(f"taxonomy {name!r} did not read back as written; nothing was stored")
    return TaxonomyReport(name, STORE, len(tax), sum(1 for c in tax.children if not c), tax.height,
                          tax.labels[0], existed)


def _stored_rows(engine: Engine, name: str) -> list[tuple]:
    return engine.fetch_all(*sql.render("taxonomy_read", engine.dialect, tbl=sql.TableName(STORE).expr,
                                        taxonomy=name))


def read_taxonomy(engine: Engine, name: str) -> Taxonomy:
    """A stored taxonomy, rebuilt and re-validated (children in their stored pre-order)."""
    if find_table(engine, sql.TableName(STORE)) is None:
        raise AnonsqlError(f"no taxonomy is stored yet (load {name!r} with 'anonsql taxonomy load')")
    rows = _stored_rows(engine, name)
    if not rows:
        raise AnonsqlError(f"no stored taxonomy named {name!r} (load it with 'anonsql taxonomy load')")
    return Taxonomy.from_rows(name, rows)


def read_taxonomies(engine: Engine, assignment: Mapping[str, str]) -> dict[str, Taxonomy]:
    """column -> stored taxonomy, for an `attr=name,...` assignment."""
    cache: dict[str, Taxonomy] = {}
    out = {}
    for column, name in assignment.items():
        if name not in cache:
            cache[name] = read_taxonomy(engine, name)
        out[column] = cache[name]
    return out


def parse_assignment(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """`indigestion=severity,diagnosis=diagnoses` (or a mapping) -> {column: taxonomy name}."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        pairs = list(text.items())
    else:
        pairs = []
        for item in (x.strip() for x in text.split(",")):
            if not item:
                continue
            column, sep, name = item.partition("=")
            if not sep or not column.strip() or not name.strip():
                raise AnonsqlError(f"--taxonomy takes attr=name pairs separated by commas, got {item!r}")
            pairs.append((column.strip(), name.strip()))
    out: dict[str, str] = {}
    for column, name in pairs:
        if column in out:
            raise AnonsqlError(f"--taxonomy names column {column!r} twice")
        out[column] = name
    return out
