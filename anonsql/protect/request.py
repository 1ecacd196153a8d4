"""The input of a protect run, resolved and validated once at the job entry: the row key, the
confidential cells, the attributes each target's classifiers read, the taxonomies. Every
user error is found here, before anything is written."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..stats import encode
from . import stats
from .suppress import GENERALIZING
from .taxonomy import Taxonomy


@dataclass(eq=False)
class ProtectionInput:
    """A protect run's validated input: what the algorithm receives, coded by `code()`."""

    key: str
    columns: list[str]  # the columns the run reads (targets and attributes), table order
    attrs: dict[str, list[str]]  # target -> the attributes its classifiers read
    cells: list[tuple[int, str]]  # confidential cells: (row index in key order, column)
    rows: stats.Coded  # the key and `columns` of every row, as codes, sorted by key
    taxonomies: dict[str, Taxonomy] = field(default_factory=dict)  # column -> its taxonomy (-g methods)

    @property
    def targets(self) -> list[str]:
        return list(self.attrs)

    def key_of(self, row: int) -> object:
        """The key of row `row` as a plain Python value."""
        return stats.plain(self.rows.keys[row])

    def value(self, row: int, column: str) -> object:
        return self.rows.value(row, self.columns.index(column))

    def code(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The microdata X (rows x columns, ν = -1) and each column's value dictionary: a column
        with a taxonomy is coded by taxonomy node (its labels are the dictionary), the others by
        their sorted distinct values (as `anonsql.stats.encode` sorts them)."""
        coded, values = [], []
        for j, c in enumerate(self.columns):
            tax = self.taxonomies.get(c)
            if tax is None:
                _, uniques = encode(pd.Series(self.rows.dictionaries[j], dtype=object))
                at = {v: n for n, v in enumerate(uniques.tolist())}
                coded.append(self.rows.recode(j, at.__getitem__))
                values.append(uniques)
            else:
                coded.append(self.rows.recode(j, partial(_node, tax)))
                values.append(np.array(tax.labels, dtype=object))
        n = len(self.rows.keys)
        X = np.column_stack(coded).astype(np.int64) if coded else np.zeros((n, 0), dtype=np.int64)
        return X, values


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
    coded = stats.coded(engine, source.expr, key, columns)
    inp = ProtectionInput(key, columns, chosen, _locate(source, key, columns, coded, pairs), coded)
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


def _locate(source: Table, key: str, columns: list[str], coded: stats.Coded,
            pairs: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """Each (key text, column) pair as (row index, column): the row exists, the cell holds a
    value, no cell is listed twice."""
    wanted = {k for k, _ in pairs}
    index = {t: i for i, v in enumerate(coded.keys.tolist()) if (t := str(v)) in wanted}
    found: list[tuple[int, str]] = []
    for k, c in pairs:
        if k not in index:
            raise AnonsqlError(f"no row with {key} = {k} in table {source}")
        i = index[k]
        if coded.codes[i, columns.index(c)] < 0:
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
        tax.check_values(c, list(dict.fromkeys(stats.text(v) for v in inp.rows.dictionaries[inp.columns.index(c)])))
    for i, c in inp.cells:
        node = taxes[c].index(stats.text(inp.value(i, c)))
        if taxes[c].children[node] or node == 0:
            raise AnonsqlError(f"cell ({inp.key} = {inp.key_of(i)}, {c}) holds a value that is not a leaf below "
                               f"the root of taxonomy {taxes[c].name!r} (its value is confidential: not shown): "
                               "there is no confidential value to generalize")
    return taxes
