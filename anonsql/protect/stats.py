"""What a protect run reads by SQL: the key's soundness, each column's distinct values, the
distinct tuples of the columns the run reads with their counts (naive Bayes's N(v), N(v, x_a)
and ID3's training tuples follow from them), the confidential rows, the rows of one class
holding one value when an algorithm may change them (request.fetched_rows) and the counts of
Section 2.4 (before and after); the stored taxonomies are anonsql.taxonomy's. Memory follows the
distinct tuples and the rows the algorithms touch, never the table's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import sql
from ..engine import Engine
from .metrics import Distributions

if TYPE_CHECKING:
    import pyarrow as pa


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


def dictionary(engine: Engine, table: exp.Table, col: str) -> list[Any]:
    """A column's distinct non-NULL values, in no particular order (protect/dictionary)."""
    return [v for (v,) in engine.fetch_all(*sql.render("protect/dictionary", engine.dialect, tbl=table,
                                                       col=sql.column(col)))]


def tuple_counts(engine: Engine, table: exp.Table, columns: Sequence[str]) -> list[tuple]:
    """The distinct (values of `columns`) tuples with their counts, the count last."""
    return engine.fetch_all(*sql.render("protect/tuple_counts", engine.dialect, tbl=table, col=sql.columns(columns)))


def rows_where(engine: Engine, table: exp.Table, key: str, columns: Sequence[str],
               where: Sequence[tuple[str, Any]]) -> list[tuple]:
    """(key, values of `columns`) of the rows holding every (column, value) of `where` (one or two)."""
    (c1, v1), (c2, v2) = where[0], where[-1]
    return engine.fetch_all(*sql.render("protect/rows_where", engine.dialect, tbl=table, key=sql.column(key),
                                        col=sql.columns(columns), c1=sql.column(c1), v1=v1, c2=sql.column(c2), v2=v2))


def row_by_key(engine: Engine, table: exp.Table, key: str, columns: Sequence[str], text_: str) -> tuple | None:
    """(key, values of `columns`) of the row whose key reads as `text_` (None: no such row)."""
    found = engine.fetch_all(*sql.render("protect/row_by_key", engine.dialect, tbl=table, key=sql.column(key),
                                         col=sql.columns(columns), k=text_))
    return found[0] if found else None


def rows_kept(engine: Engine, out: exp.Table, source: exp.Table, key: str) -> tuple[int, int]:
    """(rows of `out`, keys of `source` missing from `out`)."""
    n, missing = engine.fetch_all(*sql.render("protect/rows_kept", engine.dialect, out=out, tbl=source,
                                              key=sql.column(key)))[0]
    return int(n), int(missing)


#: The working relation of the classes whose rows protect --k suppresses further cells of.
CLASSES = sql.TableName("anonsql_protect_classes").expr


def qi_classes(engine: Engine, table: exp.Table, qi: Sequence[str]) -> list[tuple[tuple, str, int]]:
    """The equivalence classes over `qi`: (values, group key, size |E|) each (protect/qi_classes)."""
    found = engine.fetch_all(*sql.render("protect/qi_classes", engine.dialect, tbl=table, qi=sql.columns(qi),
                                         g=sql.group_key(sql.columns(qi))))
    return [(tuple(row[:len(qi)]), row[-2], int(row[-1])) for row in found]


def columns_with_nulls(engine: Engine, table: exp.Table, columns: Sequence[str]) -> list[str]:
    """The `columns` holding at least one NULL (protect/null_counts, one scan)."""
    if not columns:
        return []
    nulls = engine.fetch_all(*sql.render("protect/null_counts", engine.dialect, tbl=table, col=sql.columns(columns)))[0]
    return [c for c, n in zip(columns, nulls) if n]


def keys_in_classes(engine: Engine, table: exp.Table, key: str, qi: Sequence[str],
                    groups: Sequence[str]) -> list[tuple[Any, str]]:
    """(row key, group key) of the rows in the classes named by `groups` (protect/keys_in_classes),
    through a working relation of the group keys, dropped after."""
    d = engine.dialect
    engine.execute(*sql.render("common/drop_temp_table", d, tbl=CLASSES))
    engine.execute(*sql.render("protect/classes_table", d, classes=CLASSES, tbl=table))
    try:
        engine.insert_rows(CLASSES, ["g"], pd.DataFrame({"g": list(groups)}, dtype=object))
        return [(k, g) for k, g in engine.fetch_all(*sql.render(
            "protect/keys_in_classes", d, tbl=table, key=sql.column(key), classes=CLASSES,
            g=sql.group_key(sql.columns(qi, "t"))))]
    finally:
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=CLASSES))


def tuple_table(engine: Engine, table: exp.Table, columns: Sequence[str]) -> pa.Table:
    """The distinct (values of `columns`) tuples with their counts, the count last, as Arrow."""
    return engine.fetch_arrow(*sql.render("protect/tuple_counts", engine.dialect, tbl=table,
                                          col=sql.columns(columns)))


def distributions(engine: Engine, table: exp.Table, cols: list[str], paired: Sequence[str],
                  tuples: Callable[[], pa.Table] | None = None) -> Distributions:
    """First-order counts per attribute of `cols` (None = ν) and joint counts of non-ν pairs
    among the `paired` ones only (Defs. 2.7, 2.9: the attributes the run reads), keyed by value
    text so that a column turned into text still matches its source. The paired attributes'
    counts are summed in numpy from their distinct tuples with counts (protect/tuple_counts, one
    hash aggregation; `tuples()`, when given, is that table over `paired` already fetched for
    the algorithm), so time and memory follow the distinct tuples, never the rows or the pairs'
    product; the other attributes' counts come from one grouping-sets scan (protect/value_counts)."""
    single: list[dict[Any, int]] = [{} for _ in cols]
    both = [j for j, c in enumerate(cols) if c in paired]
    joint: dict[tuple[int, int], dict[tuple[Any, Any], int]] = {
        (i, j): {} for n, i in enumerate(both) for j in both[n + 1:]}
    rest = [j for j in range(len(cols)) if j not in both]
    if rest:
        _value_counts(engine, table, cols, rest, single)
    if both:
        names = [c for c in paired if c in cols]
        found = tuples() if tuples is not None and names == list(paired) else tuple_table(engine, table, names)
        _from_tuples(found, [names.index(cols[j]) for j in both], both, single, joint)
    return single, joint


def _value_counts(engine: Engine, table: exp.Table, cols: list[str], rest: list[int],
                  single: list[dict[Any, int]]) -> None:
    """N(v) of the attributes `rest` (positions in `cols`) into `single`, from protect/value_counts:
    the result's columns are the m grouping flags, the m values and the count."""
    m = len(rest)
    found = engine.fetch_arrow(*sql.render("protect/value_counts", engine.dialect, tbl=table,
                                           attr=sql.columns([cols[j] for j in rest])))
    n = found.column(2 * m).to_numpy().astype(np.int64)
    for k, j in enumerate(rest):
        mine = found.column(k).to_numpy() == 0
        for v, count in zip(found.column(m + k).to_pandas()[mine].tolist(), n[mine].tolist()):
            v = text(v)
            single[j][v] = single[j].get(v, 0) + count


#: The code pairs of an attribute pair counted densely (one bincount, no sort) beyond 4 per tuple.
DENSE_PAIRS = 65536


def _from_tuples(tuples: pa.Table, place: list[int], both: list[int], single: list[dict[Any, int]],
                 joint: dict[tuple[int, int], dict[tuple[Any, Any], int]]) -> None:
    """`distributions` of the `both` attributes summed from their distinct tuples (attribute
    both[i] in column place[i] of `tuples`, the count last), into `single` and `joint`: each
    column coded once (NULL -1) and its codes' texts looked up once, each pair's counts one
    numpy aggregation of the combined codes."""
    n = tuples.column(tuples.num_columns - 1).to_numpy().astype(np.int64)
    coded = {}
    for k, j in zip(place, both):
        codes, uniques = pd.factorize(tuples.column(k).to_pandas(), use_na_sentinel=True)
        coded[j] = (codes.astype(np.int64), _texts(uniques))
    distinct = {j: len(set(labels)) == len(labels) for j, (_, labels) in coded.items()}  # texts may coincide
    for j, (codes, labels) in coded.items():
        sums = np.bincount(codes + 1, weights=n, minlength=len(labels) + 1).astype(np.int64).tolist()
        for v, count in zip([None, *labels], sums):
            single[j][v] = single[j].get(v, 0) + count
    for i, j in joint:
        (ci, li), (cj, lj) = coded[i], coded[j]
        known = (ci >= 0) & (cj >= 0)
        combined, weights, span = ci[known] * len(lj) + cj[known], n[known], len(li) * len(lj)
        if span <= 4 * len(combined) + DENSE_PAIRS:  # a dense count over every (a, b) code pair: no sort
            dense = np.bincount(combined, weights=weights, minlength=span)
            keys = np.flatnonzero(dense)  # each tuple counts >= 1, so a pair seen is a pair counted
            sums = dense[keys].astype(np.int64).tolist()
        else:
            keys, at = np.unique(combined, return_inverse=True)
            sums = np.bincount(at.reshape(-1), weights=weights, minlength=len(keys)).astype(np.int64).tolist()
        pairs = zip(map(li.__getitem__, (keys // len(lj)).tolist()), map(lj.__getitem__, (keys % len(lj)).tolist()))
        into = joint[(i, j)]
        if not into and distinct[i] and distinct[j]:  # one text per code: each pair once, built in C
            into.update(zip(pairs, sums))
            continue
        for pair, count in zip(pairs, sums):
            into[pair] = into.get(pair, 0) + count


def _texts(uniques: Any) -> list[str | None]:
    """`text` of each of a column's distinct values (pd.factorize's uniques), whole numbers and
    strings without a call each."""
    if uniques.dtype.kind in "iu":
        return [str(v) for v in uniques.tolist()]
    return [v if type(v) is str else text(v) for v in uniques]


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
