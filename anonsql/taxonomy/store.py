"""The taxonomy store: `taxonomy load` validates a hierarchy and keeps it in the database.

Taxonomies live in one table, `anonsql_taxonomies(taxonomy, position, value, parent)`, so a run
that generalizes or sums along them (protect's -g methods, tables' --hierarchy) can be repeated
from the database alone. A
hierarchy comes from a TOML/JSON file or from a user table with `value` and `parent` columns
(children then ordered by value); it is validated before anything is written, read back in
the same transaction, and replacing a stored one needs `replace`. Without transactions (Spark)
the store is rewritten instead: a new one, the other taxonomies copied and the new rows added,
read back, then renamed over the old (`anonsql.catalog.staged_output`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pandas as pd

from .. import sql
from ..catalog import Table, find_table, get_table, staged_output
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Report
from .model import Taxonomy
from .stats import STORE, read_taxonomy, stored_rows


@dataclass(kw_only=True)
class TaxonomyReport(Report):
    """A stored taxonomy (`table` is the store): its size and shape."""

    name: str
    nodes: int
    leaves: int
    height: int
    root: str
    replaced: bool

    def lines(self) -> list[str]:
        return [f"taxonomy {self.name!r} {'replaced' if self.replaced else 'stored'} in {self.table}: "
                f"{self.nodes} nodes, {self.leaves} leaves, height {self.height}, root {self.root!r}"]


@dataclass(kw_only=True)
class TaxonomyTree(Report):
    """A stored taxonomy as (value, parent) rows in pre-order, the root's parent None."""

    PROVES: ClassVar[bool] = False

    name: str
    rows: list[tuple[str, str | None]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The tree, indented two spaces per level."""
        depth: dict[str, int] = {}
        out = []
        for value, parent in self.rows:
            depth[value] = 0 if parent is None else depth[parent] + 1
            out.append("  " * depth[value] + value)
        return out


def load_taxonomy(engine: Engine, name: str, *, file: str | Path | None = None, table: str | None = None,
                  replace: bool = False) -> TaxonomyReport:
    """Validate the taxonomy from `file` or `table` and store it under `name`, in one transaction
    that reads it back (a mismatch raises VerificationError and stores nothing)."""
    if not isinstance(name, str) or not name.strip():
        raise AnonsqlError("a taxonomy needs a non-empty --name")
    name = name.strip()
    if (file is None) == (table is None):
        raise AnonsqlError("give the taxonomy as --file (TOML or JSON) or as --from-table (value, parent)")
    if file is not None:
        tax = Taxonomy.from_file(name, file)
    else:
        src = get_table(engine, table or "")
        text, params = sql.render("taxonomy/source_rows", engine.dialect, src=src.expr,
                                  value=sql.column(src.column("value").name),
                                  parent=sql.column(src.column("parent").name))
        tax = Taxonomy.from_rows(name, sorted(engine.fetch_all(text, params), key=lambda r: str(r[0])))
    store = sql.TableName(STORE)
    found = find_table(engine, store)
    existed = found is not None and bool(stored_rows(engine, name))
    if existed and not replace:
        raise AnonsqlError(f"taxonomy {name!r} is already stored (use --replace to overwrite it)")
    report = TaxonomyReport(table=STORE, name=name, nodes=len(tax), leaves=sum(1 for c in tax.children if not c),
                            height=tax.height, root=tax.labels[0], replaced=existed)
    with engine.transaction(), report.timed("store"), _writable(engine, store, found, name) as target:
        frame = pd.DataFrame([(name, i, v, p) for i, (v, p) in enumerate(tax.rows())],
                             columns=["taxonomy", "position", "value", "parent"])
        engine.insert_rows(target.expr, list(frame.columns), frame.astype(object))
        report.check("the stored taxonomy reads back as written", read_taxonomy(engine, name, target) == tax,
                     "taxonomy/read")
        if not report.ok:
            raise VerificationError(report.checks)
    return report


@contextmanager
def _writable(engine: Engine, store: sql.TableName, found: Table | None, name: str) -> Iterator[sql.TableName]:
    """Where the taxonomy's rows go: the store itself, its old rows of `name` deleted (inside the
    caller's transaction); without transactions a new store under a staging name holding the
    other taxonomies, renamed over the old one only when the block succeeds."""
    d = engine.dialect
    if engine.supports_transactions:
        engine.execute(*sql.render("taxonomy/create", d, tbl=store.expr))
        engine.execute(*sql.render("taxonomy/delete", d, tbl=store.expr, taxonomy=name))
        yield store
        return
    with staged_output(engine, store, found) as stage:
        engine.execute(*sql.render("taxonomy/create", d, tbl=stage.expr))
        if found is not None:
            engine.execute(*sql.render("taxonomy/keep", d, out=stage.expr, tbl=store.expr, taxonomy=name))
        yield stage


def show_taxonomy(engine: Engine, name: str) -> TaxonomyTree:
    """The stored taxonomy `name`, re-validated."""
    return TaxonomyTree(table=STORE, name=name, rows=read_taxonomy(engine, name).rows())
