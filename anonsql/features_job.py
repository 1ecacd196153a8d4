"""The features job (Zhang et al. 2017): SQL statistics → selection → published VIEW → SQL re-check.

Rows become masks in SQL: each feature is one bit of a 62-bit BIGINT word, so d features
take ceil(d / 62) words (any width works; containment is `(a & b) = a` word by word). The
distinct masks with their class counts are the statistic the pure algorithms of
anonsql.features run on; HamDist comes from per-class column sums. The projection on the
selected columns plus the class is written as a view (or a table) and its AC, k-anonymity,
DistCnt and HamDist are recomputed by SQL on that output, inside the same transaction.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from sqlglot import exp

from . import features, inputs, sql, stats
from .features import spec
from .catalog import Table, find_table, get_table, output_table
from .engine import Engine
from .errors import AnonsqlError
from .loading import drop_table

#: Bits per mask word: BIGINT holds 63 value bits; 62 keeps every word non-negative.
WORD_BITS = 62
#: Features per statement of the per-column queries (PostgreSQL caps a select list at 1664).
COLUMN_CHUNK = 400
_NUMERIC_KINDS = ("integer", "decimal", "float")


@dataclass
class Containment:
    """AC and the class-separation figures of a binary table, all computed by SQL."""

    rows: int
    masks: int  # distinct containment sets = groups of equal projections
    ac: int  # AC(D), Def. 6
    kanon: int  # smallest group of equal projections: the k of plain k-anonymity
    rows_by_ac: dict[int, int]  # AC(e) -> rows, for the 10 smallest AC(e) values
    distcnt: float | None = None  # eq. 4, when a class is given
    hamdist: float | None = None  # eq. 3, when a class is given


@dataclass
class AcReport:
    """`anonsql ac`: AC(D) of a table over its feature columns."""

    table: str
    features: list[str]
    class_column: str | None
    rows: int
    distinct_masks: int
    ac: int
    kanon: int
    rows_by_ac: dict[int, int]
    distcnt: float | None
    hamdist: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FeaturesReport:
    table: str
    out: str
    materialized: bool
    class_column: str
    classes: list[Any]  # [C_1, C_2]
    k: int
    method: str
    privacy: str
    mode: str
    top_r: int | None
    rows: int
    features_considered: int
    selected: list[str]  # in the order the method added them
    ac: int  # AC of the published projection, recomputed by SQL on the output
    kanon: int  # its k-anonymity level (smallest group of equal projections)
    hamdist: float
    distcnt: float
    full_hamdist: float  # HamDist of all considered features (the ceiling)
    full_distcnt: float
    stopped_by: str | None  # mode 'stop': the first infeasible feature
    skipped: int  # mode 'skip': infeasible features passed over
    candidates: list[list[str]] = field(default_factory=list)  # maximal: the r largest of M_k
    verified: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------- input


def feature_columns(table: Table, class_col: str | None, key: str | None, names: Sequence[str]) -> list[str]:
    """The features: `names` if given, else every column but the key and the class."""
    excluded = {c for c in (class_col, key) if c}
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


def require_binary(engine: Engine, table: Table, cols: Sequence[str]) -> None:
    """Every feature must be a numeric column holding only 0 and 1 (no NULL)."""
    kinds = {c.name: c.kind for c in table.columns}
    for c in cols:
        if kinds[c] not in _NUMERIC_KINDS:
            raise AnonsqlError(f"feature column '{c}' has type {kinds[c]}; features must be 0/1 numbers "
                               f"(cast booleans, binarize categories first: anonsql binarize)")
    for lo in range(0, len(cols), COLUMN_CHUNK):
        chunk = list(cols[lo:lo + COLUMN_CHUNK])
        text, params = sql.render("features_column_check", engine.dialect, tbl=table.expr, col=sql.columns(chunk))
        for c, bad in zip(chunk, engine.fetch_all(text, params)[0]):
            if not bad:
                continue
            text, params = sql.render("null_count", engine.dialect, tbl=table.expr, col=sql.column(c))
            nulls = int(engine.fetch_all(text, params)[0][0])
            if nulls:
                raise AnonsqlError(f"feature column '{c}' has {nulls} NULL value(s); features must be 0 or 1")
            raise AnonsqlError(f"feature column '{c}' has {int(bad)} value(s) other than 0 and 1")


def two_classes(engine: Engine, table: Table, class_col: str) -> list[Any]:
    """[C_1, C_2], sorted: the paper covers two classes (Sec. 3), anything else is rejected."""
    counts = stats.class_counts(engine, table, class_col)
    if len(counts.values) != 2:
        listing = ", ".join(map(str, counts.values[:5]))
        raise AnonsqlError(f"class column '{class_col}' has {len(counts.values)} distinct value(s) ({listing}); "
                           "feature selection by containment needs exactly two classes")
    return [v.item() if isinstance(v, np.generic) else v for v in counts.values]


# ---------------------------------------------------------------- SQL statistics


def _balanced(items: list[exp.Expression], join: Callable[[exp.Expression, exp.Expression], exp.Expression]
              ) -> exp.Expression:
    """Combine expressions pairwise into a tree of depth log2(n) (generators recurse on depth)."""
    while len(items) > 1:
        items = [join(items[i], items[i + 1]) if i + 1 < len(items) else items[i] for i in range(0, len(items), 2)]
    return items[0]


def _add(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Add(this=a, expression=b)


def mask_words(cols: Sequence[str]) -> list[exp.Expression]:
    """One BIGINT expression per 62 features: Σ 2^i over the row's 1-columns (sql/features_bit_term.sql)."""
    words = []
    for lo in range(0, len(cols), WORD_BITS):
        terms = [sql.fragment("features_bit_term", col=sql.column(c), weight=exp.convert(1 << i))
                 for i, c in enumerate(cols[lo:lo + WORD_BITS])]
        words.append(_balanced(terms, _add))
    return words


def _word_columns(count: int, alias: str) -> list[exp.Column]:
    """alias.w_0, alias.w_1, ...: the mask words by the names sql/features_masks.sql gives them."""
    return [sql.column(f"w_{i}", alias) for i in range(count)]


def mask_counts(engine: Engine, table: Table, cols: Sequence[str], class_col: str, c1: Any
                ) -> features.BinaryCounts:
    """The distinct containment sets with n_1, n_2 (sql/features_masks.sql), unpacked to bits."""
    words = mask_words(cols)
    text, params = sql.render("features_masks", engine.dialect, tbl=table.expr, word=words,
                              w=_word_columns(len(words), "r"), cls=sql.column(class_col), c1=c1)
    df = engine.fetch_df(text, params)
    packed = df[[f"w_{i}" for i in range(len(words))]].to_numpy(np.int64)
    bits = np.arange(WORD_BITS, dtype=np.int64)
    masks = ((packed[:, :, None] >> bits) & 1).astype(bool).reshape(len(df), -1)[:, :len(cols)]
    n = df["n"].to_numpy(np.int64)
    n1 = df["n1"].to_numpy(np.int64)
    return features.BinaryCounts(masks, n1, n - n1)


def column_hamdist(engine: Engine, table: Table, cols: Sequence[str], class_col: str, classes: Sequence[Any]
                   ) -> np.ndarray:
    """HamDist of every feature from the per-class column sums (sql/features_class_sums.sql)."""
    sums = np.zeros((2, len(cols)), dtype=np.float64)
    sizes = np.zeros(2, dtype=np.float64)
    for lo in range(0, len(cols), COLUMN_CHUNK):
        chunk = list(cols[lo:lo + COLUMN_CHUNK])
        text, params = sql.render("features_class_sums", engine.dialect, tbl=table.expr,
                                  cls=sql.column(class_col), col=sql.columns(chunk))
        for row in engine.fetch_all(text, params):
            c = list(classes).index(row[0])
            sizes[c] = row[1]
            sums[c, lo:lo + len(chunk)] = [float(v) for v in row[2:]]
    return features.hamdist_from_sums(sums[0], sums[1], sizes[0], sizes[1])


def containment(engine: Engine, table: Table, cols: Sequence[str], class_col: str | None = None,
                classes: Sequence[Any] | None = None) -> Containment:
    """AC(D), k-anonymity, AC(e) histogram and (with a class) DistCnt and HamDist, all by SQL."""
    cls = sql.column(class_col) if class_col else exp.Literal.number(0)
    c1 = classes[0] if classes else 0
    words = mask_words(cols)
    missing = _balanced([sql.fragment("features_word_miss", a=sql.column(f"w_{i}", "a"), b=sql.column(f"w_{i}", "b"))
                         for i in range(len(words))], _add)
    text, params = sql.render("features_supports", engine.dialect, tbl=table.expr, word=words, cls=cls, c1=c1,
                              w=_word_columns(len(words), "r"), missing=missing, aw=_word_columns(len(words), "a"))
    rows = np.array(engine.fetch_all(text, params), dtype=np.int64).reshape(-1, 3)
    n, n1, support = rows[:, 0], rows[:, 1], rows[:, 2]
    by_ac: dict[int, int] = {}
    for value in np.unique(support)[:10].tolist():
        by_ac[int(value)] = int(n[support == value].sum())
    result = Containment(rows=int(n.sum()), masks=len(n), ac=int(support.min()), kanon=int(n.min()),
                         rows_by_ac=by_ac)
    if class_col and classes is not None:
        result.distcnt = features.distcnt_from_groups(n1, n - n1)
        result.hamdist = float(column_hamdist(engine, table, cols, class_col, classes).sum())
    return result


# ---------------------------------------------------------------- the job


def select(data: features.BinaryCounts, values: np.ndarray, k: int, method: str, privacy: str, mode: str,
           top_r: int) -> tuple[features.Selection, list[tuple[int, ...]]]:
    """Run one method of anonsql.features on the statistics; (selection, maximal's candidates)."""
    if method == "hamdist":
        return features.greedy_hamdist(data, k, privacy=privacy, mode=mode, values=values), []
    if method in ("distcnt", "cm"):
        return features.greedy_distcnt(data, k, privacy=privacy, mode=mode, criterion=method), []
    if method == "maximal":
        if privacy != "ac":
            raise AnonsqlError("--method maximal mines k-AC feature sets (Lemma 3); --privacy kanon does not apply")
        best, candidates = features.maximal_select(data, k, top_r, values=values)
        return features.Selection(best, [float(values[x]) for x in best]), candidates
    raise AnonsqlError(f"unknown method '{method}'; choose one of {', '.join(features.METHODS)}")


def run_features(engine: Engine, source: Table, cols: Sequence[str], class_col: str, classes: list[Any],
                 rows: int, k: int, *, method: str, privacy: str, mode: str, top_r: int, out: str | None,
                 materialize: bool, replace: bool, progress: Callable[[str], None] | None = None) -> FeaturesReport:
    """The whole job on validated input (see anonsql.api.select_features for the checks)."""
    say = progress or (lambda _msg: None)
    seconds: dict[str, float] = {}
    target, replaced = _target(engine, source, out, replace, k)

    start = time.perf_counter()
    data = mask_counts(engine, source, cols, class_col, classes[0])
    values = column_hamdist(engine, source, cols, class_col, classes)
    seconds["statistics"] = time.perf_counter() - start
    say(f"statistics: {rows:,} rows, {len(cols):,} features, {len(data.n1):,} distinct containment sets "
        f"({seconds['statistics']:.2f} s)")

    start = time.perf_counter()
    choice, candidates = select(data, values, k, method, privacy, mode, top_r)
    seconds["selection"] = time.perf_counter() - start
    chosen = [cols[x] for x in choice.selected]
    say(f"selection: {len(chosen)} feature(s) by {method} ({seconds['selection']:.2f} s)")

    with engine.transaction():
        start = time.perf_counter()
        if replaced is not None:
            _drop(engine, replaced)
        items = sql.columns([*chosen, class_col])
        name = "create_table_as" if materialize else "features_create_view"
        engine.execute(*sql.render(name, engine.dialect, out=target.expr, src=source.expr, item=items))
        seconds["write"] = time.perf_counter() - start

        start = time.perf_counter()
        written = get_table(engine, target)
        check = (containment(engine, written, chosen, class_col, classes) if chosen
                 else _empty_projection(inputs.require_rows(engine, written)))
        problems = []
        if check.rows != rows:
            problems.append(f"the output has {check.rows} rows, the source {rows}")
        bound = check.kanon if privacy == "kanon" else check.ac
        if bound < k:
            problems.append(f"the output is only {bound}-{'anonymous' if privacy == 'kanon' else 'AC'}, not {k}")
        seconds["verify"] = time.perf_counter() - start
        if problems:
            raise AnonsqlError("verification failed, nothing was written: " + "; ".join(problems))
    say(f"verify: AC = {check.ac} >= {k} on {target} ({seconds['verify']:.2f} s)")
    return FeaturesReport(
        table=str(source), out=str(target), materialized=materialize, class_column=class_col, classes=classes,
        k=k, method=method, privacy=privacy, mode=mode, top_r=top_r if method == "maximal" else None, rows=rows,
        features_considered=len(cols), selected=chosen, ac=check.ac, kanon=check.kanon,
        hamdist=check.hamdist or 0.0, distcnt=check.distcnt or 0.0, full_hamdist=float(values.sum()),
        full_distcnt=features.distcnt(data, range(len(cols))),
        stopped_by=cols[choice.stopped_by] if choice.stopped_by is not None else None,
        skipped=len(choice.skipped), candidates=[[cols[x] for x in c] for c in candidates], verified=True,
        seconds=seconds,
    )


def _empty_projection(rows: int) -> Containment:
    """Nothing selected: every row contains the empty set, so AC = k-anonymity = the row count."""
    return Containment(rows=rows, masks=1, ac=rows, kanon=rows, rows_by_ac={rows: rows}, distcnt=0.0, hamdist=0.0)


def _target(engine: Engine, source: Table, out: str | None, replace: bool, k: int
            ) -> tuple[sql.TableName, Table | None]:
    """The output's name (default <table>_ac<k> beside the source) and what it replaces."""
    return output_table(engine, source, out, f"{source.name}_ac{k}", replace)


def _drop(engine: Engine, table: Table) -> None:
    text, params = sql.render("features_object_type", engine.dialect, schema_name=table.schema,
                              table_name=table.name)
    kind = engine.fetch_all(text, params)[0][0]
    if kind == "VIEW":
        engine.execute(*sql.render("features_drop_view", engine.dialect, tbl=table.expr))
    else:
        drop_table(engine, table.expr)


# ---------------------------------------------------------------- entry points (validated input)


def select_features(engine: Engine, table: str, class_column: str, k: int, *, key: str | None = None,
                    feature_names: Sequence[str] = (), method: str = "distcnt", privacy: str = "ac",
                    mode: str = "stop", top_r: int = 20, out: str | None = None, materialize: bool = False,
                    replace: bool = False, progress: Callable[[str], None] | None = None) -> FeaturesReport:
    """Validate the input (one AnonsqlError, nothing written) and run the features job."""
    k = inputs.require_k(k)
    if method not in features.METHODS:
        raise AnonsqlError(f"unknown method '{method}'; choose one of {', '.join(features.METHODS)}")
    if privacy not in features.PRIVACY:
        raise AnonsqlError(f"unknown privacy model '{privacy}'; choose one of {', '.join(features.PRIVACY)}")
    if mode not in features.MODES:
        raise AnonsqlError(f"unknown mode '{mode}'; choose one of {', '.join(features.MODES)}")
    if isinstance(top_r, bool) or not isinstance(top_r, int) or top_r < 1:
        raise AnonsqlError(f"--top-r must be an integer >= 1, got {top_r!r}")
    tab = get_table(engine, table)
    key_col = tab.column(key).name if key else None
    cls = inputs.require_class_column(engine, tab, class_column)
    if cls == key_col:
        raise AnonsqlError(f"column '{cls}' cannot be both the class and the key")
    rows = inputs.require_rows(engine, tab)
    if k > rows:
        raise AnonsqlError(f"k = {k} is larger than the table ({rows:,} rows): no row can be {k}-AC")
    classes = two_classes(engine, tab, cls)
    cols = feature_columns(tab, cls, key_col, feature_names)
    require_binary(engine, tab, cols)
    return run_features(engine, tab, cols, cls, classes, rows, k, method=method, privacy=privacy, mode=mode,
                        top_r=top_r, out=out, materialize=materialize, replace=replace, progress=progress)


def ac_report(engine: Engine, table: str, *, class_column: str | None = None, key: str | None = None,
              feature_names: Sequence[str] = ()) -> AcReport:
    """AC(D) of `table` over its 0/1 feature columns (and DistCnt, HamDist with a class). Reads only."""
    tab = get_table(engine, table)
    key_col = tab.column(key).name if key else None
    cls = inputs.require_class_column(engine, tab, class_column) if class_column else None
    inputs.require_rows(engine, tab)
    classes = two_classes(engine, tab, cls) if cls else None
    cols = feature_columns(tab, cls, key_col, feature_names)
    require_binary(engine, tab, cols)
    c = containment(engine, tab, cols, cls, classes)
    return AcReport(table=str(tab), features=cols, class_column=cls, rows=c.rows, distinct_masks=c.masks,
                    ac=c.ac, kanon=c.kanon, rows_by_ac=c.rows_by_ac, distcnt=c.distcnt, hamdist=c.hamdist)


# ---------------------------------------------------------------- binarize


@dataclass
class BinarizeReport:
    table: str
    out: str
    rows: int
    columns: list[str]  # the derived 0/1 columns, in spec order
    ones: dict[str, int]  # rows with a 1 per derived column, counted by SQL on the output
    density: float  # share of 1 cells (Zhang et al. Table 3's "Density")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _rule_expr(rule: spec.BinaryRule, col: str) -> exp.Expression:
    """The 0/1 expression of one rule (values inlined: PostgreSQL's CREATE TABLE AS binds none)."""
    if rule.is_range:
        bound = lambda b: exp.Null() if b is None else exp.convert(b)  # noqa: E731
        return sql.fragment("binarize_range", col=sql.column(col), lower=bound(rule.lower), upper=bound(rule.upper))
    terms = [sql.fragment("binarize_equals", col=sql.column(col), value=exp.convert(v)) for v in rule.values]
    return _balanced(terms, _add)  # distinct values: at most one term is 1


def binarize(engine: Engine, table: str, rules: Sequence[spec.BinaryRule], out: str, *, keep: Sequence[str] = (),
             replace: bool = False) -> BinarizeReport:
    """A new table with the `keep` columns (key, class) and one 0/1 column per rule, in SQL."""
    tab = get_table(engine, table)
    rows = inputs.require_rows(engine, tab)
    kept = tab.resolve(keep)
    clash = sorted({r.name.lower() for r in rules} & {k.lower() for k in kept})
    if clash:
        raise AnonsqlError(f"derived column '{clash[0]}' has the name of a kept column")
    kinds = {c.name: c.kind for c in tab.columns}
    items = sql.columns(kept)
    for rule in rules:
        col = tab.column(rule.column).name
        if rule.is_range and kinds[col] not in _NUMERIC_KINDS:
            raise AnonsqlError(f"'{rule.name}': interval on column '{col}' of type {kinds[col]} (needs numbers)")
        items.append(exp.alias_(_rule_expr(rule, col), sql.ident(rule.name)))
    target, existing = output_table(engine, tab, out, out, replace)
    with engine.transaction():
        if existing is not None:
            _drop(engine, existing)
        engine.execute(*sql.render("create_table_as", engine.dialect, out=target.expr, src=tab.expr, item=items))
        written = get_table(engine, target)
        names = [r.name for r in rules]
        text, params = sql.render("binarize_ones", engine.dialect, tbl=written.expr, col=sql.columns(names))
        row = engine.fetch_all(text, params)[0]
        if int(row[0]) != rows:
            raise AnonsqlError(f"binarize wrote {row[0]} rows, the source has {rows}")
    ones = {n: int(v) for n, v in zip(names, row[1:])}
    return BinarizeReport(str(tab), str(written), rows, names, ones, sum(ones.values()) / (rows * len(names)))


# ---------------------------------------------------------------- long (row key, item) input

#: PostgreSQL truncates identifiers to 63 bytes; an item becomes a column name.
_MAX_NAME = 63


def select_features_long(engine: Engine, table: str, items: str, class_column: str, key: str, item_column: str,
                         k: int, *, feature_names: Sequence[str] = (), out: str | None = None, replace: bool = False,
                         **options: Any) -> FeaturesReport:
    """Feature selection on a long (row key, item) table: `table` holds one row per entity
    (key, class), `items` its (key, item) pairs. The items are pivoted in SQL into a staging
    table of 0/1 columns (one per distinct item), the wide job runs on it, and the result is
    materialized (a view would have to repeat the pivot) before the staging table is dropped."""
    k = inputs.require_k(k)
    rows_tab = get_table(engine, table)
    items_tab = get_table(engine, items)
    key_col, ikey, icol = rows_tab.column(key).name, items_tab.column(key).name, items_tab.column(item_column).name
    if ikey == icol:
        raise AnonsqlError(f"--item '{icol}' is the key column of {items_tab}")
    cls = inputs.require_class_column(engine, rows_tab, class_column)
    text, params = sql.render("features_distinct_items", engine.dialect, tbl=items_tab.expr, item=sql.column(icol))
    values = [row[0] for row in engine.fetch_all(text, params)]
    names = [str(v) for v in values]
    if not names:
        raise AnonsqlError(f"items table {items_tab} has no items in column '{icol}'")
    too_long = [n for n in names if len(n.encode()) > _MAX_NAME or not n.strip()]
    if too_long or len({n.lower() for n in names} | {cls.lower()}) != len(names) + 1:
        bad = too_long[0] if too_long else "(two items, or an item and the class, differ only in case)"
        raise AnonsqlError(f"item {bad!r} cannot be a column name (1..{_MAX_NAME} bytes, unique ignoring case)")
    target = sql.TableName.parse(out) if out else sql.TableName(f"{rows_tab.name}_ac{k}")
    staging = sql.TableName(f"{target.name}__items", target.schema)
    flags = [exp.alias_(sql.fragment("features_item_flag", item=sql.column(icol, "i"), value=exp.convert(v)),
                        sql.ident(n)) for v, n in zip(values, names)]
    with engine.transaction():
        if find_table(engine, staging) is not None:
            raise AnonsqlError(f"staging table {staging} exists (a failed earlier run?); drop it first")
        engine.execute(*sql.render("features_pivot", engine.dialect, out=staging.expr, rows=rows_tab.expr,
                                   items=items_tab.expr, key=sql.column(key_col), ikey=sql.column(ikey),
                                   item=[sql.column(cls, "r"), *flags],
                                   group=[sql.column(key_col, "r"), sql.column(cls, "r")]))
    try:
        report = select_features(engine, str(staging), cls, k, feature_names=feature_names, out=str(target),
                                 materialize=True, replace=replace, **options)
        report.table = f"{rows_tab} + {items_tab}"
        return report
    finally:
        drop_table(engine, staging.expr)
