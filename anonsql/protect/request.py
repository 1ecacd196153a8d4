"""The input of a protect run, resolved and validated once at the job entry: the row key, the
confidential cells, the attributes each target's classifiers read, the taxonomies. Every
user error is found here, before anything is written."""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..stats import encode
from ..taxonomy.model import Taxonomy
from ..taxonomy.stats import read_taxonomies
from . import stats
from .naive_bayes import NU
from .rows import FetchedRows
from .suppress import GENERALIZING

if TYPE_CHECKING:
    from sqlglot import exp


@dataclass(eq=False)
class ProtectionInput:
    """A protect run's validated input: what the algorithm receives, coded by `coding()`. Only
    the confidential rows are read here (and each column's distinct values): the other rows
    stay in the database until an algorithm asks for them (stats, rows.FetchedRows)."""

    key: str
    columns: list[str]  # the columns the run reads (targets and attributes), table order
    attrs: dict[str, list[str]]  # target -> the attributes its classifiers read
    cells: list[tuple[Any, str]]  # confidential cells: (row key, column)
    n: int  # rows in the table
    dictionaries: list[list[Any]]  # each column's distinct non-NULL values
    confidential: dict[Any, tuple]  # the confidential rows: key -> values of `columns` (None = NULL)
    taxonomies: dict[str, Taxonomy] = field(default_factory=dict)  # column -> its taxonomy (-g methods)

    @property
    def targets(self) -> list[str]:
        return list(self.attrs)

    def key_of(self, row: Any) -> Any:
        """The key of row `row` (rows are named by their key) as a plain Python value."""
        return stats.plain(row)

    def value(self, row: Any, column: str) -> Any:
        """A confidential row's value of `column` (None for NULL)."""
        return self.confidential[row][self.columns.index(column)]

    def coding(self) -> Coding:
        """Each column's codes: a column with a taxonomy is coded by taxonomy node (its labels
        are the dictionary), the others by their sorted distinct values (as
        `anonsql.stats.encode` sorts them); ν = -1."""
        values, codes = [], []
        for j, c in enumerate(self.columns):
            tax = self.taxonomies.get(c)
            if tax is None:
                _, uniques = encode(pd.Series(self.dictionaries[j], dtype=object))
                at = {_hashable(v): n for n, v in enumerate(uniques.tolist())}
                codes.append({_hashable(v): at[_hashable(v)] for v in self.dictionaries[j]})
                values.append(uniques)
            else:
                codes.append({_hashable(v): _node(tax, v) for v in self.dictionaries[j]})
                values.append(np.array(tax.labels, dtype=object))
        source = [{codes[j][_hashable(v)]: v for v in d} for j, d in enumerate(self.dictionaries)]
        return Coding(values, codes, source)


@dataclass
class Coding:
    """Values <-> codes, per column: `values[j][code]` is what code stands for (a value, or a
    taxonomy label), `codes[j]` maps a source value to its code, `source[j]` a code to the
    source value that holds it (none for a taxonomy node no source value is)."""

    values: list[np.ndarray]
    codes: list[dict[Any, int]]
    source: list[dict[int, Any]]

    def code(self, values: Sequence[Any]) -> np.ndarray:
        """One row's values (None = NULL) as codes."""
        return np.array([NU if v is None else self.codes[j][_hashable(v)] for j, v in enumerate(values)],
                        dtype=np.int64)

    def code_rows(self, rows: Sequence[Sequence[Any]]) -> np.ndarray:
        """Many rows' values as codes (rows x columns), one column at a time."""
        out = np.empty((len(rows), len(self.codes)), dtype=np.int64)
        for j, column in enumerate(zip(*rows)):
            get = self.codes[j].get
            out[:, j] = np.fromiter((NU if v is None else get(v, _ODD) for v in column), np.int64, len(rows))
            for i in np.flatnonzero(out[:, j] == _ODD).tolist():  # NaN: not found as itself
                out[i, j] = self.codes[j][_hashable(column[i])]
        return out


    def code_arrow(self, j: int, column: pa.ChunkedArray) -> np.ndarray | None:
        """Column j of an Arrow result as codes, vectorized (pyarrow's index_in against the
        column's dictionary); None when it must be coded value by value instead (NaN values,
        a type the dictionary does not convert to, or a value not found)."""
        pairs = list(self.codes[j].items())
        if any(isinstance(v, tuple) for v, _ in pairs):  # NaN (see _hashable)
            return None
        try:
            dictionary = pa.array([v for v, _ in pairs], type=column.type)
        except (pa.ArrowException, TypeError, ValueError):
            return None
        at = pc.index_in(column, value_set=dictionary)
        if at.null_count != column.null_count:
            return None
        table = np.array([c for _, c in pairs] + [NU], dtype=np.int64)  # NULL indexes the trailing ν
        return table[at.fill_null(len(pairs)).to_numpy()]


_ODD = -2  # a value `dict.get` misses (NaN), looked up again by `_hashable`


def _hashable(v: Any) -> Any:
    """A value as a dictionary key: NaN (a value of its own in SQL) matches itself."""
    return ("NaN",) if isinstance(v, float) and v != v else v


def _node(tax: Taxonomy, value: object) -> int:
    """A data value's taxonomy node."""
    return tax.index(str(stats.text(value)))


def read_cells_csv(path: str) -> list[tuple[str, str]]:
    """(row key, column) pairs from a CSV with header `key,column` (or any two columns)."""
    try:
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(x.strip() for x in r)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise AnonsqlError(f"cannot read cells file {path}: {reason}") from None
    if rows and [x.strip().lower() for x in rows[0]][:2] == ["key", "column"]:
        rows = rows[1:]
    if not rows or any(len(r) != 2 for r in rows):
        raise AnonsqlError(f"cells file {path} must list 'key,column' pairs, one per line")
    return [(r[0].strip(), r[1].strip()) for r in rows]


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


def resolve(engine: Engine, source: Table, key: str, method: str, *, target: str | None,
            rows: Sequence[str] | None, cells: Sequence[tuple[str, str]] | None,
            attrs: Sequence[str] | None, taxonomies: Mapping[str, str] | str | None,
            drop: Sequence[str] = (), pseudonymize: Sequence[str] = ()) -> ProtectionInput:
    """Every user error of a protect run, before anything is written; `method` is one of
    METHODS already (the API checks it). `drop` and `pseudonymize` are the resolved columns of
    --drop / --pseudonymize (anonsql.identifiers.check_columns): dropped columns are no
    attribute (they are not published), and neither list may hold the key or a target."""
    key = source.column(key).name
    n, known, distinct = stats.key_counts(engine, source.expr, key)
    if n == 0:
        raise AnonsqlError(f"table {source} is empty")
    if known != n or distinct != n:
        raise AnonsqlError(f"key column '{key}' does not identify rows: {n - known} NULL key(s), "
                           f"{known - distinct} duplicate key(s)")
    pairs = [(k, source.column(c).name) for k, c in _pairs(target, rows, cells)]
    targets = list(dict.fromkeys(c for _, c in pairs))
    if key in targets:
        raise AnonsqlError(f"the key column '{key}' cannot be a confidential target")
    _identifiers(key, targets, drop, pseudonymize)
    chosen = _attrs(source, key, targets, attrs, drop)
    columns = [c for c in source.column_names if c != key and (c in chosen or any(c in a for a in chosen.values()))]
    located, confidential = _locate(engine, source, key, columns, pairs)
    inp = ProtectionInput(key, columns, chosen, located, n, [stats.dictionary(engine, source.expr, c) for c in columns],
                          confidential)
    assignment = parse_assignment(taxonomies)
    if method in GENERALIZING:
        inp.taxonomies = _taxonomies(engine, source, inp, assignment)
    elif assignment:
        raise AnonsqlError(f"--taxonomy goes with the generalization methods ({', '.join(GENERALIZING)}), "
                           f"not {method}")
    return inp


def _pairs(target: str | None, rows: Sequence[str] | None,
           cells: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    """The confidential cells as (key text, column) pairs, from --target/--rows or --cells."""
    if (cells is None) == (rows is None):
        raise AnonsqlError("name the confidential cells with --target and --rows, or with --cells")
    if rows is not None:
        if target is None:
            raise AnonsqlError("--rows needs --target (the column whose values are confidential)")
        pairs = [(str(r), target) for r in rows]
    else:
        if target is not None:
            raise AnonsqlError("--target goes with --rows; --cells names the column of each cell")
        pairs = [(str(k), c) for k, c in cells or ()]
    if not pairs:
        raise AnonsqlError("no confidential cell given")
    return pairs


def _identifiers(key: str, targets: list[str], drop: Sequence[str], pseudonymize: Sequence[str]) -> None:
    """The key names the cells (and the changes table's rows), the targets hold them: neither
    can be dropped or pseudonymized."""
    for name in (*drop, *pseudonymize):
        if name == key or name in targets:
            role = "the row key (--key)" if name == key else "a confidential target"
            raise AnonsqlError(f"column '{name}' is {role}: it cannot be dropped or pseudonymized")


def _attrs(source: Table, key: str, targets: list[str], attrs: Sequence[str] | None,
           dropped: Sequence[str] = ()) -> dict[str, list[str]]:
    """target -> the attributes its classifiers read: `attrs`, or every column but the key, it
    and the `dropped` ones."""
    if attrs:
        chosen = source.resolve(attrs)
        if key in chosen:
            raise AnonsqlError(f"the key column '{key}' cannot be an attribute (--attrs)")
        gone = [c for c in chosen if c in dropped]
        if gone:
            raise AnonsqlError(f"column '{gone[0]}' is an attribute the classifiers read (--attrs): it cannot "
                               "be dropped (leave it out of --attrs, or keep it)")
        clash = [t for t in targets if t in chosen]
        if clash:
            raise AnonsqlError(f"target column(s) {', '.join(clash)} also listed as attributes (--attrs)")
        out = {t: chosen for t in targets}
    else:
        out = {t: [c for c in source.column_names if c not in (key, t, *dropped)] for t in targets}
    empty = [t for t in targets if not out[t]]
    if empty:
        raise AnonsqlError(f"no attribute column left for target(s) {', '.join(empty)}")
    return out


def _locate(engine: Engine, source: Table, key: str, columns: list[str],
            pairs: list[tuple[str, str]]) -> tuple[list[tuple[Any, str]], dict[Any, tuple]]:
    """Each (key text, column) pair as (row key, column), with the confidential rows read once
    each: the row exists, the cell holds a value, no cell is listed twice."""
    rows: dict[str, tuple] = {}
    found: list[tuple[Any, str]] = []
    for k, c in pairs:
        if k not in rows:
            row = stats.row_by_key(engine, source.expr, key, columns, k)
            if row is None:
                raise AnonsqlError(f"no row with {key} = {k} in table {source}")
            rows[k] = row
        r = rows[k][0]
        if rows[k][1 + columns.index(c)] is None:
            raise AnonsqlError(f"cell ({key} = {k}, {c}) is already NULL: there is no value to protect")
        if (r, c) in found:
            raise AnonsqlError(f"cell ({key} = {k}, {c}) listed twice")
        found.append((r, c))
    return found, {row[0]: tuple(row[1:]) for row in rows.values()}


def fetched_rows(engine: Engine, table: exp.Table, inp: ProtectionInput, coding: Coding,
                 tuples: Callable[[], pa.Table]) -> FetchedRows:
    """The run's rows as the algorithms read them: the confidential rows now, the distinct tuples
    (`tuples()`: tuple_table over inp.columns, shared with `distributions`) and the rows of one
    class holding one value (protect/rows_where) when asked, coded by `coding` (values leave the
    database coded in Python, per fetched row)."""
    m = len(inp.columns)

    def coded(found: Sequence[Sequence[Any]]) -> np.ndarray:
        return coding.code_rows(found) if found else np.zeros((0, m), dtype=np.int64)

    def fetch(where: Mapping[int, int]) -> tuple[list[Any], np.ndarray]:
        if any(code not in coding.source[j] for j, code in where.items()):
            return [], np.zeros((0, m), dtype=np.int64)  # no source value holds that code
        found = sorted(stats.rows_where(engine, table, inp.key, inp.columns,
                                        [(inp.columns[j], coding.source[j][code]) for j, code in where.items()]),
                       key=lambda r: r[0])
        return [r[0] for r in found], coded([r[1:] for r in found])

    def counts() -> tuple[np.ndarray, np.ndarray]:
        found = tuples()
        columns = [coding.code_arrow(j, found.column(j)) for j in range(m)]  # vectorized where it can be
        ready = [c for c in columns if c is not None]
        if len(ready) == m:
            return (np.column_stack(ready) if m else np.zeros((found.num_rows, 0), dtype=np.int64),
                    found.column(m).to_numpy().astype(np.int64))
        rows = stats.tuple_counts(engine, table, inp.columns)
        return coded([r[:-1] for r in rows]), np.array([r[-1] for r in rows], dtype=np.int64)

    return FetchedRows(inp.n, fetch, counts, {k: coding.code(v) for k, v in inp.confidential.items()})


def _taxonomies(engine: Engine, source: Table, inp: ProtectionInput,
                assignment: Mapping[str, str]) -> dict[str, Taxonomy]:
    """The -g methods' user errors: a taxonomy per target, only for used columns, stored, holding
    every value of its column; each confidential value a leaf below the root."""
    if not assignment:
        raise AnonsqlError("the generalization methods need --taxonomy attr=name,... (at least the target's)")
    named = {source.column(c).name: name for c, name in assignment.items()}
    unused = [c for c in named if c not in inp.columns]
    if unused:
        raise AnonsqlError(f"--taxonomy names column(s) {', '.join(unused)} that are neither a target "
                           "nor an attribute")
    missing = [t for t in inp.targets if t not in named]
    if missing:
        raise AnonsqlError(f"target column(s) {', '.join(missing)} need a taxonomy (--taxonomy {missing[0]}=name)")
    taxes = read_taxonomies(engine, named)
    for c, tax in taxes.items():
        tax.check_values(c, list(dict.fromkeys(stats.text(v) for v in inp.dictionaries[inp.columns.index(c)])))
    for i, c in inp.cells:
        node = taxes[c].index(stats.text(inp.value(i, c)))
        if taxes[c].children[node] or node == 0:
            raise AnonsqlError(f"cell ({inp.key} = {inp.key_of(i)}, {c}) holds a value that is not a leaf below "
                               f"the root of taxonomy {taxes[c].name!r} (its value is confidential: not shown): "
                               "there is no confidential value to generalize")
    return taxes
