"""The nbc jobs: SQL views (P, N) → SafetyTransform / EST → published tables → SQL check → report.

`views`, `check`, `publish`, `verify` and `breach` of Mozafari & Zaniolo (2009), each on an
open engine (anonsql.api opens it). The views come from one GROUPING SETS scan
(sql/nbc_views.sql). NULL attribute values are ignored, as the paper's NBC counts complete
(A_i, C) pairs: they count in P_c but in no N^i_{t,c}. Published counts are integers stored as
DECIMAL(38,0) in <out>_class(class, count, prior) and <out>_attr(attribute, value, class,
count); values and classes are their SQL text. The write and the SQL check of condition (10)
run in one transaction that is rolled back if the check fails.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import inputs, sql, stats
from .catalog import Table, find_table, get_table
from .engine import Engine
from .errors import AnonsqlError
from .loading import drop_table, write_frame
from .nbc import equivalence as eq
from .nbc.breach import breach
from .nbc.est import est, prior_safe
from .nbc.transform import publish_safe, validate
from .nbc.views import Viewset, amplification, is_safe, k_sind, smallest_rho

#: Verify enumerates ΠA_i when it has at most this many tuples (the issue's 10^7).
FULL_PRODUCT_LIMIT = 10**7
#: Published integers must fit DECIMAL(38,0) with room for Σ_t in the SQL check.
MAX_DIGITS = 36
#: --synthetic writes Σ_c P_c rows; the transformed counts are often astronomically large,
#: so beyond this many rows it refuses (before writing anything) instead of filling the disk.
SYNTHETIC_ROW_LIMIT = 10**7


@dataclass
class Views:
    """(P, N) of a table, classes in precedence order (last wins ties), with their labels."""

    attrs: list[str]
    class_column: str
    classes: list[str]  # labels as text, precedence order
    values: list[list[str]]  # per attribute: value labels as text (sorted by the typed value)
    view: Viewset
    codes: np.ndarray  # distinct complete tuples of the table, as value indexes
    rows: int
    null_cells: list[int]  # per attribute: rows whose value is NULL (ignored in N^i)


def precedence_order(labels: list[str], precedence: Sequence[str] | None) -> list[int]:
    """Indexes of `labels` in precedence order: SQL sort order by default (last wins)."""
    if not precedence:
        return list(range(len(labels)))
    if sorted(precedence) != sorted(labels) or len(set(precedence)) != len(precedence):
        raise AnonsqlError(f"--precedence must list every class exactly once: classes are {', '.join(labels)}")
    return [labels.index(p) for p in precedence]


def load_views(engine: Engine, table: Table, attrs: Sequence[str], class_col: str,
               precedence: Sequence[str] | None = None) -> Views:
    """P_c and N^i_{t,c} in one SQL scan, plus the table's distinct complete tuples."""
    m = len(attrs)
    text, params = sql.render("nbc_views", engine.dialect, tbl=table.expr, attr=sql.columns(attrs),
                              cls=sql.column(class_col))
    df = engine.fetch_df(text, params)
    g = df.iloc[:, :m].to_numpy(np.int64)
    n = df["n"].to_numpy(np.int64)
    class_codes, class_values = stats.encode(df.iloc[:, 3 * m])
    text_of = dict(zip(class_codes.tolist(), df.iloc[:, 3 * m + 1]))
    labels = [text_of[i] for i in range(len(class_values))]
    order = precedence_order(labels, precedence)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    C = len(labels)
    P = [0] * C
    for r in np.nonzero(g.sum(axis=1) == m)[0]:
        P[rank[class_codes[r]]] += int(n[r])
    N, values, nulls = [], [], []
    for j in range(m):
        rows = np.nonzero(g[:, j] == 0)[0]
        codes, uniq = stats.encode(df.iloc[rows, m + j])
        text_of = dict(zip(codes.tolist(), df.iloc[rows, 2 * m + j]))
        counts = [[0] * C for _ in uniq]
        null = 0
        for code, cls_code, cnt in zip(codes, class_codes[rows], n[rows]):
            if code < 0:
                null += int(cnt)
            else:
                counts[code][rank[cls_code]] += int(cnt)
        N.append(counts)
        values.append([text_of[i] for i in range(len(uniq))])
        nulls.append(null)
    text, params = sql.render("nbc_complete_tuples", engine.dialect, tbl=table.expr, attr=sql.columns(attrs))
    complete = engine.fetch_df(text, params).dropna()
    index = [{x: t for t, x in enumerate(vals)} for vals in values]
    codes = np.array([[index[j][x] for j, x in enumerate(row)] for row in complete.itertuples(index=False)],
                     dtype=np.int64).reshape(-1, m)
    return Views(list(attrs), class_col, [labels[i] for i in order], values, Viewset(P, N), codes,
                 int(sum(P)), nulls)


@dataclass
class ViewsReport:
    table: str
    class_column: str
    attributes: list[str]
    classes: list[str]  # precedence order, last wins ties
    rows: int
    P: dict[str, int]
    domain_sizes: dict[str, int]
    null_cells: dict[str, int]  # ignored in N^i (the paper's NBC counts complete pairs)
    zero_counts: int  # N^i_{t,c} = 0: no rho makes the raw views safe (Corollary 4)
    smallest_rho: float | None  # Corollary 4; None when a zero count makes it infinite
    smallest_rho_exact: str | None
    k_sind: int  # Lemma 10: min_c P_c
    N: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def views_report(table: Table, v: Views, with_counts: bool) -> ViewsReport:
    rho = smallest_rho(v.view)
    zeros = sum(x == 0 for attr in v.view.N for row in attr for x in row)
    rows = None
    if with_counts:
        rows = [{"attribute": a, "value": v.values[i][t], "class": v.classes[c], "count": v.view.N[i][t][c]}
                for i, a in enumerate(v.attrs) for t in range(len(v.values[i])) for c in range(len(v.classes))]
    return ViewsReport(
        str(table), v.class_column, v.attrs, v.classes, v.rows, dict(zip(v.classes, v.view.P)),
        {a: len(vals) for a, vals in zip(v.attrs, v.values)}, dict(zip(v.attrs, v.null_cells)), zeros,
        None if rho is None else float(rho), None if rho is None else str(rho), int(k_sind(v.view)), rows)


@dataclass
class CheckReport:
    table: str
    rho: float
    safe: bool  # condition (10) holds for rho on the raw views
    smallest_rho: float | None
    amplification: float | None  # max ratio in (10); safe iff amplification^n <= rho

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_report(table: Table, v: Views, rho: Fraction) -> CheckReport:
    amp, r0 = amplification(v.view), smallest_rho(v.view)
    return CheckReport(str(table), float(rho), is_safe(v.view, rho), None if r0 is None else float(r0),
                       None if amp is None else float(amp))


def _equivalence_blocks(v: Views):
    """The tuples to compare: all of ΠA_i when affordable (it holds every table tuple), else the table's."""
    full = eq.product_size(v.view) <= FULL_PRODUCT_LIMIT
    return (eq.chunks(v.view) if full else [v.codes]), full


@dataclass
class PublishReport:
    table: str
    out_class: str
    out_attr: str
    class_column: str
    attributes: list[str]
    classes: list[str]
    method: str  # 'SafetyTransform' or 'EST'
    rho: float  # rho of Corollary 4, or r of r-closeness for EST
    original_smallest_rho: float | None
    achieved_rho: float  # smallest rho for which (10) holds on the published counts
    identity: bool  # the views were already safe and are published unchanged (Section 6.3)
    k: int  # Step 2 root exponent
    bits: int  # Step 2 precision
    k_sind: int  # Lemma 10 on the published views
    equivalence_checked_on: str  # 'full product' or 'table tuples'
    verified: bool
    seconds: dict[str, float] = field(default_factory=dict)
    prior_weights: dict[str, int] = field(default_factory=dict)  # F_c (EST); all 1 for SafetyTransform
    est: dict[str, Any] = field(default_factory=dict)  # EST: Statement 14 figures, θ, k, sub-labels
    out_rows: str | None = None  # --synthetic: a table whose NBC views equal the published counts

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def out_names(out: str) -> tuple[sql.TableName, sql.TableName]:
    ref = sql.TableName.parse(out)
    return sql.TableName(ref.name + "_class", ref.schema), sql.TableName(ref.name + "_attr", ref.schema)


def run_publish(engine: Engine, table: Table, v: Views, rho: Fraction, out: str, replace: bool,
                prior: list[Fraction] | None = None, synthetic: bool = False) -> PublishReport:
    """SafetyTransform (or EST when `prior` is given, rho then being r), exact checks, then the two
    tables (and with `synthetic` the rows table) written and SQL-checked in one transaction."""
    seconds: dict[str, float] = {}
    names = out_names(out)
    rows_name = sql.TableName(names[0].name[: -len("_class")] + "_rows", names[0].schema) if synthetic else None
    if rows_name is not None:
        names = (*names, rows_name)
    existing = [find_table(engine, name) for name in names]
    for name, found in zip(names, existing):
        if found is not None and (found.schema, found.name) == (table.schema, table.name):
            raise AnonsqlError(f"--out would overwrite the source table {table}")
        if found is not None and not replace:
            raise AnonsqlError(f"output table {found} already exists (use --replace to overwrite it)")
    validate(v.view)
    full = eq.product_size(v.view) <= FULL_PRODUCT_LIMIT
    start = time.perf_counter()
    weights = [1] * v.view.classes
    if prior is None:
        # With ΠA_i enumerable the least precision that passes Definition 2 on it is used;
        # otherwise publish_safe falls back to its provable precision.
        oracle = (lambda w: not eq.differences(v.view, w, eq.chunks(v.view), limit=1)) if full else None
        result = publish_safe(v.view, rho, oracle)
        pub, k, bits, identity, extra = result.view, result.k, result.bits, result.identity, {}
    else:
        if not full:
            raise AnonsqlError(f"FAIL: EST proves NBC-equivalence over all of ΠA_i, which has more than "
                               f"{FULL_PRODUCT_LIMIT:,} tuples here")
        res = est(v.view, prior, rho, lambda a, b: not eq.differences(a, b, eq.chunks(a), limit=1))
        if not res.ok:
            raise AnonsqlError(f"FAIL: {res.reason}; nothing written")
        pub, k, bits, identity, weights, extra = res.view, res.details["k"], res.details["bits"], False, \
            res.weights, res.details
    seconds["transform"] = time.perf_counter() - start
    start = time.perf_counter()
    blocks, full = _equivalence_blocks(v)
    diffs = eq.differences(v.view, pub, blocks, limit=1)
    if diffs or not prior_safe(pub, weights, rho):
        raise AnonsqlError("internal check failed, nothing written: "
                           + (describe(v, diffs[0]) if diffs else "published counts miss condition (10)"))
    seconds["exact_check"] = time.perf_counter() - start
    biggest = max(pub.values())
    if len(str(biggest)) > MAX_DIGITS:
        raise AnonsqlError(f"FAIL: the published integers need {len(str(biggest))} digits, more than the "
                           f"{MAX_DIGITS} that DECIMAL(38,0) holds with room for sums; try a larger rho")
    if rows_name is not None and sum(pub.P) > SYNTHETIC_ROW_LIMIT:
        raise AnonsqlError(f"FAIL: --synthetic would write {sum(pub.P):,} rows (the sum of the published P_c), "
                           f"more than {SYNTHETIC_ROW_LIMIT:,}; nothing written (publish without --synthetic)")
    start = time.perf_counter()
    with engine.transaction():
        for found in existing:
            if found is not None:
                drop_table(engine, found.expr)
        write_published(engine, names, v, pub, weights)
        problems = sql_check(engine, names, rho, v.view.n, v.view.classes)
        if rows_name is not None:
            write_frame(engine, synthetic_rows(v, pub), rows_name)
            problems += check_synthetic(engine, get_table(engine, rows_name), v, pub)
        if problems:
            raise AnonsqlError("verification failed, nothing was written: " + "; ".join(problems))
    seconds["write_and_sql_check"] = time.perf_counter() - start
    r0, achieved = smallest_rho(v.view), smallest_rho(pub)
    return PublishReport(
        str(table), str(names[0]), str(names[1]), v.class_column, v.attrs, v.classes,
        "SafetyTransform" if prior is None else "EST", float(rho), None if r0 is None else float(r0),
        float(achieved), identity, k, bits, int(k_sind(pub)), "full product" if full else "table tuples", True,
        seconds, dict(zip(v.classes, weights)), {k_: v_ for k_, v_ in extra.items()},
        None if rows_name is None else str(rows_name))


def synthetic_rows(v: Views, pub: Viewset) -> pd.DataFrame:
    """Rows whose NBC views are exactly the published counts: for class c, P_c rows in which
    attribute i takes value t in N^i_{t,c} of them (Σ_t N^i_{t,c} = P_c after Step 3). Only
    the per-(attribute, class) marginals matter to a naive Bayes classifier, so each
    attribute column is laid out independently, values in order."""
    columns: dict[str, list] = {a: [] for a in v.attrs} | {v.class_column: []}
    for c, label in enumerate(v.classes):
        for i, a in enumerate(v.attrs):
            for t, value in enumerate(v.values[i]):
                columns[a].extend([value] * int(pub.N[i][t][c]))
        columns[v.class_column].extend([label] * int(pub.P[c]))
    return pd.DataFrame(columns, dtype=object)


def check_synthetic(engine: Engine, rows: Table, v: Views, pub: Viewset) -> list[str]:
    """Recount the rows table by SQL: its N(x_i, c) and N(c) must equal the published counts."""
    counts = stats.attr_class_counts(engine, rows, v.attrs, v.class_column)
    classes = stats.class_counts(engine, rows, v.class_column)
    got = {(i, str(x), str(c)): int(n) for i in range(len(v.attrs))
           for x, row in zip(counts.values[i], counts.counts[i]) for c, n in zip(counts.class_values, row) if n}
    want = {(i, v.values[i][t], v.classes[c]): int(pub.N[i][t][c]) for i in range(len(v.attrs))
            for t in range(len(v.values[i])) for c in range(len(v.classes)) if pub.N[i][t][c]}
    problems = [] if got == want else ["the synthetic rows' N(x_i, c) differ from the published counts"]
    if {str(c): int(n) for c, n in zip(classes.values, classes.counts)} != dict(zip(v.classes, map(int, pub.P))):
        problems.append("the synthetic rows' class counts differ from the published P_c")
    return problems


def write_published(engine: Engine, names, v: Views, pub: Viewset, weights: list[int]) -> None:
    """Create <out>_class and <out>_attr and bulk-load the integer counts (as text: no rounding)."""
    class_rows = pd.DataFrame({"class": v.classes, "count": [str(p) for p in pub.P], "prior": weights})
    attr_rows = pd.DataFrame(
        [(a, v.values[i][t], v.classes[c], str(pub.N[i][t][c]))
         for i, a in enumerate(v.attrs) for t in range(len(v.values[i])) for c in range(len(v.classes))],
        columns=["attribute", "value", "class", "count"])
    for name, create, frame in ((names[0], "nbc_create_class", class_rows), (names[1], "nbc_create_attr", attr_rows)):
        engine.execute(*sql.render(create, engine.dialect, out=name.expr))
        cols = ", ".join(sql.ident(c).sql(engine.dialect) for c in frame.columns)
        engine.insert_rows(name.expr.sql(engine.dialect), cols, frame)


def sql_check(engine: Engine, names, rho: Fraction, n: int, classes: int) -> list[str]:
    """Condition (10) and Σ_t N = P on the materialized tables (sql/nbc_check_safety.sql)."""
    text, params = sql.render("nbc_check_safety", engine.dialect, attr_tbl=names[1].expr, class_tbl=names[0].expr,
                              rho=float(rho), n=n)
    bad_values, bad_classes, bad_sums, attributes, found = engine.fetch_all(text, params)[0]
    problems = []
    if bad_values:
        problems.append(f"{bad_values} (attribute, value) pairs violate condition (10)")
    if bad_classes:
        problems.append("the class counts P_c violate condition (10)")
    if bad_sums:
        problems.append(f"{bad_sums} (attribute, class) sums differ from P_c")
    if attributes != n or found != classes:
        problems.append(f"expected {n} attributes and {classes} classes, found {attributes} and {found}")
    return problems


def read_published(engine: Engine, v: Views, published: str) -> Viewset:
    """The published tables as a viewset laid out on the source's values and class order."""
    names = out_names(published)
    tables = [get_table(engine, name) for name in names]
    P: list[int | None] = [None] * len(v.classes)
    cls_pos = {c: i for i, c in enumerate(v.classes)}
    text, params = sql.render("nbc_read_class", engine.dialect, tbl=tables[0].expr)
    for label, n in engine.fetch_all(text, params):
        if label not in cls_pos:
            raise AnonsqlError(f"published class {label!r} is not a class of the source")
        P[cls_pos[label]] = int(n)
    N: list[list[list[int | None]]] = [[[None] * len(v.classes) for _ in vals] for vals in v.values]
    attr_pos = {a: i for i, a in enumerate(v.attrs)}
    val_pos = [{x: t for t, x in enumerate(vals)} for vals in v.values]
    text, params = sql.render("nbc_read_attr", engine.dialect, tbl=tables[1].expr)
    for attr, value, label, n in engine.fetch_all(text, params):
        i = attr_pos.get(attr)
        t = None if i is None else val_pos[i].get(value)
        if t is None or label not in cls_pos:
            raise AnonsqlError(f"published row ({attr!r}, {value!r}, {label!r}) has no counterpart in the source")
        N[i][t][cls_pos[label]] = int(n)
    missing = sum(x is None for x in P) + sum(x is None for attr in N for row in attr for x in row)
    if missing:
        raise AnonsqlError(f"the published tables lack {missing} counts of the source's (value, class) pairs")
    return Viewset(P, N)


def describe(v: Views, d: eq.Difference) -> str:
    tau = ", ".join(f"{a}={v.values[i][t]}" for i, (a, t) in enumerate(zip(v.attrs, d.tuple)))
    lo, hi = v.classes[d.lower], v.classes[d.higher]
    who = f"original ranks {lo} above {hi}" if d.original_gt else f"original ranks {hi} at or above {lo}"
    return f"tuple ({tau}): {who}, the published views do not"


@dataclass
class VerifyReport:
    table: str
    published: str
    equivalent: bool
    checked_on: str  # 'full product' or 'table tuples'
    tuples_checked: int
    differences: list[str]
    published_smallest_rho: float | None
    k_sind: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_verify(engine: Engine, table: Table, v: Views, published: str) -> VerifyReport:
    """Definition 2 between the source's NBC and the one trained on the published tables."""
    pub = read_published(engine, v, published)
    blocks, full = _equivalence_blocks(v)
    diffs = eq.differences(v.view, pub, blocks, limit=10)
    r = smallest_rho(pub)
    return VerifyReport(str(table), published, not diffs, "full product" if full else "table tuples",
                        eq.product_size(v.view) if full else len(v.codes), [describe(v, d) for d in diffs],
                        None if r is None else float(r), int(k_sind(pub)))


# ---- entry points: validate input, run on an open engine (anonsql.api opens it) ----

def parse_ratio(value: Any, name: str) -> Fraction:
    """rho or r as an exact rational > 1 ('2', '1.3', 2.0, Fraction(3, 2))."""
    try:
        x = value if isinstance(value, Fraction) else Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise AnonsqlError(f"{name} must be a number > 1, got {value!r}") from None
    if x <= 1:
        raise AnonsqlError(f"{name} must be > 1 (1 would forbid any change of belief), got {value}")
    return x


def _prepare(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str,
             precedence: Sequence[str] | str | None) -> tuple[Table, Views]:
    tab = get_table(engine, table)
    cols = tab.resolve(inputs.split_names(attrs))
    if not cols:
        raise AnonsqlError("no attributes given (--attrs a,b,c)")
    cls = inputs.require_class_column(engine, tab, class_column, cols)
    inputs.require_rows(engine, tab)
    v = load_views(engine, tab, cols, cls, inputs.split_names(precedence))
    validate(v.view)
    return tab, v


def nbc_views(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str, *,
              precedence: Sequence[str] | str | None = None, counts: bool = False) -> ViewsReport:
    """The NBC-enabling views (P, N) of `table` and the smallest rho of Corollary 4."""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    return views_report(tab, v, counts)


def nbc_check(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: Any, *,
              precedence: Sequence[str] | str | None = None) -> CheckReport:
    """Are the raw views already safe for rho (condition (10))?"""
    r = parse_ratio(rho, "rho")
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    return check_report(tab, v, r)


def nbc_publish(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: Any = None,
                out: str = "", *, precedence: Sequence[str] | str | None = None, replace: bool = False,
                prior: str | dict | None = None, r: Any = None, synthetic: bool = False) -> PublishReport:
    """SafetyTransform the views (rho), or EST them (prior and r), and write <out>_class and
    <out>_attr (and with `synthetic` <out>_rows), checked by SQL."""
    if prior is None:
        if r is not None:
            raise AnonsqlError("--r (r-closeness) needs --prior")
        if rho is None:
            raise AnonsqlError("give --rho (SafetyTransform) or --prior with --r (EST)")
        r = parse_ratio(rho, "rho")
    else:
        if rho is not None:
            raise AnonsqlError("give --rho (SafetyTransform) or --prior with --r (EST), not both")
        r = parse_ratio(r, "r")
    if not out or not str(out).strip():
        raise AnonsqlError("--out is required: the published tables are <out>_class and <out>_attr")
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    weights = None if prior is None else parse_prior(prior, v.classes)
    return run_publish(engine, tab, v, r, out, replace, weights, synthetic)


def nbc_verify(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str, published: str, *,
               precedence: Sequence[str] | str | None = None) -> VerifyReport:
    """Definition 2: do the published tables classify every tuple exactly like the source?"""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    return run_verify(engine, tab, v, published)


def parse_prior(text: str | dict, classes: list[str]) -> list[Fraction]:
    """The prior F as 'label=weight,...' (weights > 0, any scale; labels as the views print them)."""
    if isinstance(text, dict):
        pairs = {str(k): v for k, v in text.items()}
    else:
        items = inputs.split_names(text) if text else []
        if not items or any("=" not in i for i in items):
            raise AnonsqlError(f"--prior must be class=weight[,class=weight...], got {text!r}")
        pairs = dict(i.rsplit("=", 1) for i in items)
    if sorted(pairs) != sorted(classes):
        raise AnonsqlError(f"--prior must give every class exactly once: classes are {', '.join(classes)}")
    weights = []
    for c in classes:
        try:
            w = Fraction(str(pairs[c]).strip())
        except (ValueError, ZeroDivisionError):
            raise AnonsqlError(f"--prior weight of {c!r} is not a number: {pairs[c]!r}") from None
        if w <= 0:
            raise AnonsqlError(f"--prior weight of {c!r} must be > 0, got {pairs[c]}")
        weights.append(w)
    return weights


def parse_known(text: str | dict, attrs: Sequence[str]) -> dict[int, str]:
    """Bob's quasi-identifier value I_0, 'attr=value,attr=value' (values as the views print them)."""
    pairs = dict(text) if isinstance(text, dict) else dict(
        item.split("=", 1) for item in inputs.split_names(text) if "=" in item)
    if not pairs or (isinstance(text, str) and len(pairs) != len(inputs.split_names(text))):
        raise AnonsqlError(f"--known must be attr=value[,attr=value...], got {text!r}")
    unknown = [a for a in pairs if a not in attrs]
    if unknown:
        raise AnonsqlError(f"--known names {', '.join(unknown)}, not among the attributes {', '.join(attrs)}")
    return {attrs.index(a): str(val) for a, val in pairs.items()}


def nbc_breach(engine: Engine, table: str, class_column: str, attrs: Sequence[str] | str, known: str | dict, *,
               published: str | None = None, precedence: Sequence[str] | str | None = None) -> dict[str, Any]:
    """Section 4's attacker on a tiny table: prior and posterior of each class for I_0 = `known`,
    over all worlds consistent with the table's views (or with the `published` ones)."""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    view = read_published(engine, v, published) if published else v.view
    I0 = parse_known(known, v.attrs)
    P = dict(zip(v.classes, view.P))
    N = [{(v.values[i][t], v.classes[c]): view.N[i][t][c] for t in range(len(v.values[i]))
          for c in range(len(v.classes)) if view.N[i][t][c]} for i in range(view.n)]
    b = breach(P, N, I0)
    return {"table": str(tab), "views": published or "original", "known": {v.attrs[i]: x for i, x in I0.items()},
            "worlds": b.worlds, "prior": {c: float(x) for c, x in b.prior.items()},
            "posterior": {c: float(x) for c, x in b.posterior.items()},
            "posterior_exact": {c: str(x) for c, x in b.posterior.items()},
            "class_share": {c: float(x) for c, x in b.class_share.items()}}
