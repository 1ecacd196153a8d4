"""The input of a protect run, resolved and validated once at the job entry: the row key, the
confidential cells, the attributes each target's classifiers read, the taxonomies. Every
user error is found here, before anything is written."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..stats import encode
from . import stats
from .naive_bayes import NU
from .suppress import GENERALIZING
from .taxonomy import Taxonomy


@dataclass(eq=False)
class ProtectionInput:
    """A protect run's validated input: what the algorithm receives, coded by `code()`."""

    key: str
    columns: list[str]  # the columns the run reads (targets and attributes), table order
    attrs: dict[str, list[str]]  # target -> the attributes its classifiers read
    cells: list[tuple[int, str]]  # confidential cells: (row index in `rows`, column)
    rows: pd.DataFrame  # the key, then `columns`, sorted by key
    taxonomies: dict[str, Taxonomy] = field(default_factory=dict)  # column -> its taxonomy (-g methods)

    @property
    def targets(self) -> list[str]:
        return list(self.attrs)

    @property
    def keys(self) -> list:
        return [stats.plain(k) for k in self.rows.iloc[:, 0]]

    def value(self, row: int, column: str) -> object:
        return self.rows.iloc[row, 1 + self.columns.index(column)]

    def code(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The microdata X (rows x columns, ν = -1) and each column's value dictionary: a column
        with a taxonomy is coded by taxonomy node (its labels are the dictionary), the others by
        their sorted distinct values."""
        coded = []
        for j, c in enumerate(self.columns):
            series, tax = self.rows.iloc[:, 1 + j], self.taxonomies.get(c)
            if tax is None:
                coded.append(encode(series))
            else:
                coded.append((np.array([NU if pd.isna(v) else tax.index(stats.text(v)) for v in series]),
                              np.array(tax.labels, dtype=object)))
        return np.column_stack([c for c, _ in coded]).astype(np.int64), [v for _, v in coded]


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
            attrs: Sequence[str] | None, taxonomies: Mapping[str, str] | str | None) -> ProtectionInput:
    """Every user error of a protect run, before anything is written; `method` is one of
    METHODS already (the API checks it)."""
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
    chosen = _attrs(source, key, targets, attrs)
    columns = [c for c in source.column_names if c != key and (c in chosen or any(c in a for a in chosen.values()))]
    frame = stats.rows(engine, source.expr, key, columns)
    inp = ProtectionInput(key, columns, chosen, _locate(source, key, columns, frame, pairs), frame)
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


def _attrs(source: Table, key: str, targets: list[str], attrs: Sequence[str] | None) -> dict[str, list[str]]:
    """target -> the attributes its classifiers read: `attrs`, or every column but the key and it."""
    if attrs:
        chosen = source.resolve(attrs)
        if key in chosen:
            raise AnonsqlError(f"the key column '{key}' cannot be an attribute (--attrs)")
        clash = [t for t in targets if t in chosen]
        if clash:
            raise AnonsqlError(f"target column(s) {', '.join(clash)} also listed as attributes (--attrs)")
        out = {t: chosen for t in targets}
    else:
        out = {t: [c for c in source.column_names if c not in (key, t)] for t in targets}
    empty = [t for t in targets if not out[t]]
    if empty:
        raise AnonsqlError(f"no attribute column left for target(s) {', '.join(empty)}")
    return out


def _locate(source: Table, key: str, columns: list[str], frame: pd.DataFrame,
            pairs: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """Each (key text, column) pair as (row index, column): the row exists, the cell holds a
    value, no cell is listed twice."""
    index = {str(v): i for i, v in enumerate(frame.iloc[:, 0].tolist())}
    found: list[tuple[int, str]] = []
    for k, c in pairs:
        if k not in index:
            raise AnonsqlError(f"no row with {key} = {k} in table {source}")
        i = index[k]
        if pd.isna(frame.iloc[i, 1 + columns.index(c)]):
            raise AnonsqlError(f"cell ({key} = {k}, {c}) is already NULL: there is no value to protect")
        if (i, c) in found:
            raise AnonsqlError(f"cell ({key} = {k}, {c}) listed twice")
        found.append((i, c))
    return found


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
    taxes = stats.read_taxonomies(engine, named)
    for c, tax in taxes.items():
        col = inp.rows.iloc[:, 1 + inp.columns.index(c)]
        tax.check_values(c, list(dict.fromkeys(stats.text(v) for v in col if not pd.isna(v))))
    for i, c in inp.cells:
        node = taxes[c].index(stats.text(inp.value(i, c)))
        if taxes[c].children[node] or node == 0:
            raise AnonsqlError(f"cell ({inp.key} = {inp.keys[i]}, {c}) holds {taxes[c].labels[node]!r}, not a "
                               f"leaf below the root of taxonomy {taxes[c].name!r}: there is no confidential "
                               "value to generalize")
    return taxes
