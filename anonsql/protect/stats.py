"""What a protect run reads by SQL: the key's soundness, the coded microdata, the counts of
Section 2.4 (before and after), and the stored taxonomies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import find_table
from ..engine import Engine
from ..errors import AnonsqlError
from .metrics import Distributions
from .taxonomy import Taxonomy

#: The taxonomy store: one (taxonomy, position, value, parent) row per node.
STORE = "anonsql_taxonomies"


def plain(v: Any) -> Any:
    """JSON-friendly Python scalars (numpy and pandas NA become int/float/None)."""
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    return v.item() if isinstance(v, np.generic) else v


def text(v: Any) -> str | None:
    """A data value as the text a taxonomy label or a changes table holds (None for NULL):
    4, '4' and 4.0 are all '4' (an integer column with NULLs reaches pandas as floats)."""
    v = plain(v)
    if v is None:
        return None
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def key_counts(engine: Engine, table: exp.Table, key: str) -> tuple[int, int, int]:
    """(rows, rows with a key, distinct keys): a sound row key has all three equal."""
    n, known, distinct = engine.fetch_all(*sql.render("protect/key_check", engine.dialect, tbl=table,
                                                      key=sql.column(key)))[0]
    return int(n), int(known), int(distinct)


def rows(engine: Engine, table: exp.Table, key: str, columns: Sequence[str]) -> pd.DataFrame:
    """The key and `columns` of every row, sorted by key in Python (collations differ between
    engines, and the thesis's "next tuple" must be the same on all of them)."""
    text_, params = sql.render("protect/rows", engine.dialect, tbl=table, key=sql.column(key),
                               col=sql.columns(list(columns)))
    frame = engine.fetch_df(text_, params)
    return frame.sort_values(frame.columns[0], kind="stable").reset_index(drop=True)


def distributions(engine: Engine, table: exp.Table, cols: list[str]) -> Distributions:
    """First-order counts per attribute (None = ν) and joint counts of non-ν pairs (Defs. 2.7,
    2.9), keyed by value text so that a column turned into text still matches its source."""
    m = len(cols)
    df = engine.fetch_df(*sql.render("protect/value_counts", engine.dialect, tbl=table, attr=sql.columns(cols)))
    single: list[dict[Any, int]] = [{} for _ in cols]
    for row in df.itertuples(index=False):
        j = next(j for j in range(m) if row[j] == 0)
        single[j][text(row[m + j])] = int(row[2 * m])
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    joint: dict[tuple[int, int], dict[tuple[Any, Any], int]] = {q: {} for q in pairs}
    if pairs:
        n_pairs = len(pairs)
        text_, params = sql.render("protect/pair_counts", engine.dialect, tbl=table,
                                   a=sql.columns([cols[i] for i, _ in pairs]),
                                   b=sql.columns([cols[j] for _, j in pairs]))
        for row in engine.fetch_df(text_, params).itertuples(index=False):
            q = next(q for q in range(n_pairs) if row[q] == 0 and row[n_pairs + q] == 0)
            a, b = text(row[2 * n_pairs + q]), text(row[3 * n_pairs + q])
            if a is not None and b is not None:
                joint[pairs[q]][(a, b)] = int(row[4 * n_pairs])
    return single, joint


def change_counts(engine: Engine, changes: exp.Table) -> dict[tuple[str, str | None], dict[Any, int]]:
    """(column, new value or None for ν) -> {original value: cells}, from the changes table."""
    into: dict[tuple[str, str | None], dict[Any, int]] = {}
    for name, old, new, n in engine.fetch_all(*sql.render("protect/change_counts", engine.dialect,
                                                          changes=changes)):
        into.setdefault((name, new), {})[old] = int(n)
    return into


def changes(engine: Engine, changes: exp.Table) -> pd.DataFrame:
    """The changes table's rows (key, column_name, old_value, new_value), by key and column."""
    return engine.fetch_df(*sql.render("protect/changes_list", engine.dialect, changes=changes))


def stored_rows(engine: Engine, name: str) -> list[tuple]:
    """The (value, parent) rows of a stored taxonomy, in pre-order (none: not stored)."""
    return engine.fetch_all(*sql.render("protect/taxonomy_read", engine.dialect,
                                        tbl=sql.TableName(STORE).expr, taxonomy=name))


def read_taxonomy(engine: Engine, name: str) -> Taxonomy:
    """A stored taxonomy, rebuilt and re-validated (children in their stored pre-order)."""
    if find_table(engine, sql.TableName(STORE)) is None:
        raise AnonsqlError(f"no taxonomy is stored yet (load {name!r} with 'anonsql taxonomy load')")
    found = stored_rows(engine, name)
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
