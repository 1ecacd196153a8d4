"""What a protect run reads by SQL: the key's soundness, the microdata as integer codes (values
once per distinct value), the counts of Section 2.4 (before and after), and the stored taxonomies.

NOT YET (issue 16): the codes still come one row per table row (an int32 matrix, ~32 bytes a
row for 8 columns), so memory follows rows, not distinct tuples. The algorithms themselves only
need count tables: N(v), N(v, x_a) (protect/nb_counts without the D - d_i correction) and ID3's
distinct (target, predictors) tuples with counts (GROUP BY), plus the confidential rows. The
planned targeted-fetch form for the side effects of DECP / INCP / the -G methods: the rows
they may change are exactly those of one class holding one value (DECP: target = conf AND
α = d_i[α]; INCP: target = v AND no predictor equal to d_i's; DECP-G: α within one taxonomy
node), fetched when needed as (key, codes) by one WHERE on the coded columns, sorted by key in
Python (the thesis's "next tuple"), with the cells already changed in this run overlaid from
the decisions; a changed row updates the count tables by one tuple out and one in, as
`Microdata.set` does today. DROPP, HID3 and the -G ratios change d_i only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass
class Coded:
    """A table's key and columns as integer codes read by SQL (protect/coded_column): rows sorted by
    key in Python (collations differ between engines, and the thesis's "next tuple" must be the
    same on all of them); codes[:, j] is the rank of the value in `dictionaries[j]` (the
    column's distinct values, protect/dictionary), -1 for NULL. Values leave the database
    once per distinct value, never per row."""

    keys: np.ndarray
    codes: np.ndarray  # (rows, columns) int32
    dictionaries: list[list[Any]]

    def __len__(self) -> int:
        return len(self.keys)

    def value(self, row: int, j: int) -> Any:
        """The value of column j in row `row` (None for NULL)."""
        code = int(self.codes[row, j])
        return None if code < 0 else self.dictionaries[j][code]

    def recode(self, j: int, lookup: Callable[[Any], int]) -> np.ndarray:
        """Column j re-coded by `lookup` (value -> code), applied once per distinct value; ν stays -1."""
        table = np.array([lookup(v) for v in self.dictionaries[j]] + [-1], dtype=np.int64)
        return table[self.codes[:, j]]  # -1 indexes the trailing ν


def coded(engine: Engine, table: exp.Table, key: str, columns: Sequence[str]) -> Coded:
    """The key and `columns` of every row as codes (one query per column, rows in the engine's
    key order, then sorted by key in Python), with each column's dictionary."""
    keys = engine.fetch_df(*sql.render("protect/keys", engine.dialect, tbl=table, key=sql.column(key))).iloc[:, 0]
    order = np.argsort(keys.to_numpy(), kind="stable")
    codes = np.zeros((len(keys), len(columns)), dtype=np.int32)
    dictionaries = []
    for j, c in enumerate(columns):
        bound = dict(tbl=table, col=sql.column(c))
        column = engine.fetch_df(*sql.render("protect/coded_column", engine.dialect, key=sql.column(key), **bound))
        codes[:, j] = column.iloc[:, 0].to_numpy(dtype=np.int32)[order]
        dictionaries.append([v for v, _ in engine.fetch_all(*sql.render("protect/dictionary", engine.dialect,
                                                                        **bound))])
    return Coded(keys.to_numpy()[order], codes, dictionaries)


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
