"""The SQL statistics of feature selection: masks, containment supports, class sums, checks.

Rows become masks in SQL: each feature is one bit of a 62-bit BIGINT word, so d features
take ceil(d / 62) words (any width works; containment is `(a & b) = a` word by word). The
distinct masks with their class counts are what the pure algorithms of anonsql.features run
on; HamDist comes from per-class column sums (Zhang et al. 2017, Sec. 3-4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from sqlglot import exp

from .. import sql
from .. import stats as common_stats
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from .containment import BinaryCounts, distcnt_from_groups, hamdist_from_sums

#: Bits per mask word: BIGINT holds 63 value bits; 62 keeps every word non-negative.
WORD_BITS = 62
#: Features per statement of the per-column queries (PostgreSQL caps a select list at 1664).
COLUMN_CHUNK = 400
NUMERIC_KINDS = ("integer", "decimal", "float")
#: PostgreSQL truncates identifiers to 63 bytes; an item of a long table becomes a column name.
MAX_NAME = 63


@dataclass
class Containment:
    """AC and the class-separation figures of a binary table, all computed by SQL."""

    rows: int
    masks: int  # distinct containment sets = groups of equal projections
    ac: int  # AC(D), Def. 6
    kanon: int  # smallest group of equal projections: the k of plain k-anonymity
    rows_by_ac: dict[int, int] = field(default_factory=dict)  # AC(e) -> rows, the 10 smallest AC(e)
    distcnt: float | None = None  # eq. 4, when a class is given
    hamdist: float | None = None  # eq. 3, when a class is given

    @classmethod
    def empty_projection(cls, rows: int) -> Containment:
        """Nothing selected: every row contains the empty set, so AC = k-anonymity = the row count."""
        return cls(rows=rows, masks=1, ac=rows, kanon=rows, rows_by_ac={rows: rows}, distcnt=0.0, hamdist=0.0)


# ---------------------------------------------------------------- input checks


def attr_columns(table: Table, class_column: str | None, key: str | None, names: Sequence[str]) -> list[str]:
    """The feature columns: `names` if given, else every column but the key and the class."""
    excluded = {c for c in (class_column, key) if c}
    if names:
        cols = table.resolve(names)
        clash = [c for c in cols if c in excluded]
        if clash:
            raise AnonsqlError(f"column '{clash[0]}' is the class or the key, not a feature")
    else:
        cols = [c for c in table.column_names if c not in excluded]
    if not cols:
        raise AnonsqlError(f"table {table} has no feature columns besides the class and the key")
    return cols


def require_binary(engine: Engine, table: Table, attrs: Sequence[str]) -> None:
    """Every feature must be a numeric column holding only 0 and 1 (no NULL)."""
    kinds = {c.name: c.kind for c in table.columns}
    for c in attrs:
        if kinds[c] not in NUMERIC_KINDS:
            raise AnonsqlError(f"feature column '{c}' has type {kinds[c]}; features must be 0/1 numbers "
                               f"(cast booleans, binarize categories first: anonsql binarize)")
    query = WordQuery(sql.template("features/word_check"), dict(tbl=table.expr), attrs, "features/binary_cell")
    for lo, bad_rows in zip(range(0, len(attrs), WORD_BITS), engine.fetch_all(*query.render(engine.dialect))[0]):
        if not bad_rows:
            continue
        word = list(attrs[lo:lo + WORD_BITS])  # the first word with a bad cell: which column, how many
        text, params = sql.render_columns("features/column_check", engine.dialect, "col", word, tbl=table.expr)
        c, bad = next((c, bad) for c, bad in zip(word, engine.fetch_all(text, params)[0]) if bad)
        text, params = sql.render("common/null_count", engine.dialect, tbl=table.expr, col=sql.column(c))
        nulls = int(engine.fetch_all(text, params)[0][0])
        if nulls:
            raise AnonsqlError(f"feature column '{c}' has {nulls} NULL value(s); features must be 0 or 1")
        raise AnonsqlError(f"feature column '{c}' has {int(bad)} value(s) other than 0 and 1")


def two_classes(engine: Engine, table: Table, class_column: str) -> list[Any]:
    """[C_1, C_2], sorted: the paper covers two classes (Sec. 3), anything else is rejected."""
    counts = common_stats.class_counts(engine, table, class_column)
    if len(counts.values) != 2:
        listing = ", ".join(map(str, counts.values[:5]))
        raise AnonsqlError(f"class column '{class_column}' has {len(counts.values)} distinct value(s) ({listing}); "
                           "feature selection by containment needs exactly two classes")
    return [sql.plain(v) for v in counts.values]


# ---------------------------------------------------------------- masks and supports


def balanced_sum(terms: list[exp.Expr]) -> exp.Expr:
    """t_0 + t_1 + ... as a tree of depth log2(n) (sqlglot's generator recurses on depth)."""
    while len(terms) > 1:
        terms = [exp.Add(this=terms[i], expression=terms[i + 1]) if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
    return terms[0]


@cache
def _column_texts(name: str, dialect: str) -> tuple[str, list[str]]:
    """sql/<name>.sql generated once per dialect on a stand-in column, for each bit i < 62 when it
    takes a $weight (2^i): (the stand-in's text, the texts)."""
    col = sql.stand_in(0)
    weighted = any(p.name == "weight" for p in sql.template(name).find_all(exp.Placeholder))
    binds = [dict(weight=exp.convert(1 << i)) for i in range(WORD_BITS)] if weighted else [{}]
    return sql.text(col, dialect), [sql.text(sql.fragment(name, col=col, **b), dialect) for b in binds]


#: How the terms of one word are joined, per term fragment: a sum of bits, a conjunction of tests.
_JOIN = {"features/bit_term": " + ", "features/binary_cell": " AND "}


def word_texts(name: str, attrs: Sequence[str], dialect: str) -> list[str]:
    """sql/<name>.sql for every feature column, as `dialect` text with the column's name quoted by
    sqlglot (sql.quoted), joined per word of 62 columns: for bit_term the word's BIGINT
    Σ 2^i over the row's 1-columns, for binary_cell whether all its cells are 0 or 1."""
    mark, texts = _column_texts(name, dialect)
    names = sql.quoted(attrs, dialect)
    return ["(" + _JOIN[name].join(texts[i % len(texts)].replace(mark, n)
                                   for i, n in enumerate(names[lo:lo + WORD_BITS])) + ")"
            for lo in range(0, len(attrs), WORD_BITS)]


def _words(count: int, alias: str) -> list[exp.Column]:
    """alias.w_0, alias.w_1, ...: the mask words by the names sql/features/masks.sql gives them."""
    return [sql.column(f"w_{i}", alias) for i in range(count)]


@dataclass
class WordQuery:
    """A statement with one stand-in column (`sql.stand_in`) per word of 62 features, generated
    by sqlglot, then the words spliced in as text (`word_texts` of the term fragment): generated
    once, bound many times, with no sqlglot cost per column. Its tree may be wrapped first."""

    tree: exp.Expr
    bindings: dict[str, Any]
    attrs: Sequence[str]
    term: str = "features/bit_term"

    def render(self, dialect: str, *, inline: bool = False) -> tuple[str, dict[str, Any]]:
        words = dict(enumerate(word_texts(self.term, self.attrs, dialect)))
        binds = {**self.bindings, "word": [sql.stand_in(i) for i in words]}
        text, params = sql.bind(self.tree.copy(), dialect, binds, inline=inline)
        return sql.splice(text, dialect, words), params


def masks_query(table: Table | sql.TableName, attrs: Sequence[str], class_column: str | None, c1: Any) -> WordQuery:
    """sql/features/masks.sql; without a class every row counts as class C_1."""
    count = -(-len(attrs) // WORD_BITS)
    binds = dict(tbl=table.expr, w=_words(count, "r"),
                 cls=sql.column(class_column) if class_column else exp.Literal.number(0),
                 c1=c1 if class_column else 0)
    return WordQuery(sql.template("features/masks"), binds, attrs)


def unpack(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ones of (m, words) mask words: (row, feature) of every set bit, row by row. Sparse:
    only the non-zero bytes of the words are expanded to their bits."""
    octets = np.ascontiguousarray(packed, dtype="<i8").view(np.uint8)  # (m, 8 words), least significant first
    rows, at = np.nonzero(octets)
    which, bit = np.nonzero(np.unpackbits(octets[rows, at][:, None], axis=1, bitorder="little"))
    pos = at[which] * 8 + bit  # bit b of word w is at 64 w + b and is feature 62 w + b
    return rows[which], pos - 2 * (pos // 64)


def mask_counts(engine: Engine, table: Table, attrs: Sequence[str], class_column: str, c1: Any) -> BinaryCounts:
    """The distinct containment sets with n_1, n_2 (sql/features/masks.sql), unpacked to their ones."""
    query = masks_query(table, attrs, class_column, c1)
    df = engine.fetch_df(*query.render(engine.dialect))
    packed = df[[f"w_{i}" for i in range(len(query.bindings["w"]))]].to_numpy(np.int64)
    n = df["n"].to_numpy(np.int64)
    n1 = df["n1"].to_numpy(np.int64)
    return BinaryCounts.from_ones(*unpack(packed), len(attrs), n1, n - n1)


def supports_query(table: Table | sql.TableName, attrs: Sequence[str], class_column: str | None = None,
                   c1: Any = None) -> WordQuery:
    """sql/features/supports.sql over the masks of sql/features/masks.sql (its CTE g); wrap its
    tree before rendering to query the supports (the reviewer's AC query does)."""
    tree = sql.template("features/supports")
    masks = next(p for p in tree.find_all(exp.Placeholder) if p.name == "masks")
    query = masks_query(table, attrs, class_column, c1)
    masks.replace(query.tree)
    count = len(query.bindings["w"])
    missing = balanced_sum([sql.fragment("features/word_miss", a=a, b=b)
                            for a, b in zip(_words(count, "a"), _words(count, "b"))])
    return WordQuery(tree, {**query.bindings, "missing": missing, "aw": _words(count, "a")}, attrs)


def column_hamdist(engine: Engine, table: Table, attrs: Sequence[str], class_column: str, classes: Sequence[Any]
                   ) -> np.ndarray:
    """HamDist of every feature from the per-class column sums (sql/features/class_sums.sql)."""
    sums = np.zeros((2, len(attrs)), dtype=np.float64)
    sizes = np.zeros(2, dtype=np.float64)
    for lo in range(0, len(attrs), COLUMN_CHUNK):
        chunk = list(attrs[lo:lo + COLUMN_CHUNK])
        text, params = sql.render_columns("features/class_sums", engine.dialect, "col", chunk, tbl=table.expr,
                                          cls=sql.column(class_column))
        for row in engine.fetch_all(text, params):
            c = list(classes).index(row[0])
            sizes[c] = row[1]
            sums[c, lo:lo + len(chunk)] = [float(v) for v in row[2:]]
    return hamdist_from_sums(sums[0], sums[1], int(sizes[0]), int(sizes[1]))


def containment(engine: Engine, table: Table, attrs: Sequence[str], class_column: str | None = None,
                classes: Sequence[Any] | None = None) -> Containment:
    """AC(D), k-anonymity, the AC(e) histogram and (with a class) DistCnt and HamDist, all by SQL."""
    if not attrs:
        text, params = sql.render("common/row_count", engine.dialect, tbl=table.expr)
        return Containment.empty_projection(int(engine.fetch_all(text, params)[0][0]))
    c1 = classes[0] if classes else None
    query = supports_query(table, attrs, class_column, c1)
    rows = np.array(engine.fetch_all(*query.render(engine.dialect)), dtype=np.int64).reshape(-1, 3)
    n, n1, support = rows[:, 0], rows[:, 1], rows[:, 2]
    by_ac = {int(v): int(n[support == v].sum()) for v in np.unique(support)[:10].tolist()}
    result = Containment(rows=int(n.sum()), masks=len(n), ac=int(support.min()), kanon=int(n.min()),
                         rows_by_ac=by_ac)
    if class_column and classes is not None:
        result.distcnt = distcnt_from_groups(n1, n - n1)
        result.hamdist = float(column_hamdist(engine, table, attrs, class_column, classes).sum())
    return result


# ---------------------------------------------------------------- long (row key, item) input


def distinct_items(engine: Engine, items: Table, item_column: str, class_column: str) -> list[Any]:
    """The distinct items I of a long table (Sec. 3); each becomes a 0/1 column, so each must be a name."""
    text, params = sql.render("features/distinct_items", engine.dialect, tbl=items.expr,
                              item=sql.column(item_column))
    values = [row[0] for row in engine.fetch_all(text, params)]
    names = [str(v) for v in values]
    if not names:
        raise AnonsqlError(f"items table {items} has no items in column '{item_column}'")
    too_long = [n for n in names if len(n.encode()) > MAX_NAME or not n.strip()]
    if too_long or len({n.lower() for n in names} | {class_column.lower()}) != len(names) + 1:
        bad = too_long[0] if too_long else "(two items, or an item and the class, differ only in case)"
        raise AnonsqlError(f"item {bad!r} cannot be a column name (1..{MAX_NAME} bytes, unique ignoring case)")
    return values
