"""The nbc jobs of Mozafari & Zaniolo (2009) on an open engine (anonsql.api opens it):
`views`, `check`, `publish`, `verify` and `breach`.

publish is the one data path: SQL views (P, N) -> SafetyTransform / EST -> <out>_class and
<out>_attr (and <out>_rows) -> independent SQL checks, all in one transaction that is rolled
back when a check fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from .. import validate
from ..catalog import Table, find_table, get_table, staged_outputs
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from ..report import Progress, Report, save, silent
from . import SYNTHETIC_ROW_LIMIT, rewrite, stats, verify
from . import equivalence as eq
from .breach import breach
from .est import achieved_r, est
from .stats import Views
from .transform import publish_safe
from .transform import validate as validate_views
from .views import Viewset, amplification, is_safe, k_sind, smallest_rho

Attrs = Sequence[str] | str
Precedence = Sequence[str] | str | None


def _rho_text(rho: Fraction | None) -> str:
    return ("none (a zero count: no rho makes the raw views safe)" if rho is None
            else f"{float(rho):,.4g} (exactly {rho})")


def _amplification(exact: str | None) -> str:
    """The smallest rho of Corollary 4 in plain words first: a decimal, what it means, then the
    exact fraction the paper's condition gives ('14776336/6561' alone told a steward nothing)."""
    if exact is None:
        return ("raw counts: a count of zero lets an attacker rule a class out for some values, so no "
                "amplification ratio makes them safe to publish as they are (rho: none, Corollary 4)")
    value = float(Fraction(exact))
    return (f"raw counts: seeing them can raise an attacker's odds on a person's class by up to {value:,.4g} "
            f"times, so they are safe to publish as they are only for --rho >= {value:,.4g} "
            f"(smallest rho of Corollary 4, exactly {exact})")


# ---- reports ----

@dataclass(kw_only=True)
class ViewsReport(Report):
    """The NBC-enabling views of a table and what Corollary 4 and Lemma 10 say about them."""

    PROVES: ClassVar[bool] = False

    class_column: str
    attrs: list[str]
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

    def lines(self) -> list[str]:
        lines = [f"{self.table}: {self.rows:,} rows, class {self.class_column} "
                 f"(classes in precedence order, last wins ties: {', '.join(self.classes)})",
                 "rows per class (P_c): " + ", ".join(f"{k}={v:,}" for k, v in self.P.items()),
                 "values per attribute (|A_i|): " + ", ".join(f"{k}={v}" for k, v in self.domain_sizes.items()),
                 f"zero counts (N^i_(t,c) = 0): {self.zero_counts}",
                 _amplification(self.smallest_rho_exact),
                 f"indistinguishability: {self.k_sind:,}, the rows of the smallest class, which a rho-safe "
                 f"publication of these views keeps (k-SIND, Lemma 10: min_c P_c)"]
        if any(self.null_cells.values()):
            lines.append("NULL cells ignored: " + ", ".join(f"{k}={v:,}" for k, v in self.null_cells.items() if v))
        lines += [f"  {x['attribute']}={x['value']} {x['class']}: {x['count']}" for x in self.N or []]
        return lines


@dataclass(kw_only=True)
class CheckReport(Report):
    """Are the raw views already safe for rho? One check: condition (10)."""

    rho: float
    smallest_rho: float | None
    amplification: float | None  # the largest ratio (10) bounds; safe iff amplification^n <= rho

    def lines(self) -> list[str]:
        verdict = "are safe" if self.ok else "are NOT safe"
        least = ("none: a zero count lets an attacker rule a class out" if self.smallest_rho is None
                 else f"{self.smallest_rho:,.4g}")
        return [f"the views of {self.table} {verdict} to publish for rho = {self.rho:g}: seeing them "
                f"{'raises' if self.ok else 'can raise'} an attacker's odds on a person's class by "
                f"{'at most' if self.ok else 'more than'} {self.rho:g} times (condition (10), Corollary 4); "
                f"the smallest safe rho: {least}"]


@dataclass(kw_only=True)
class PublishReport(Report):
    """Published rho-safe (or r-close) NBC-equivalent counts, and how they were made."""

    PROTECTS: ClassVar[str] = ("naive Bayes counts sharpening a guess of anyone's class beyond a bound, while "
                               "training the same classifier (rho-safe, NBC-equivalent views; Mozafari & Zaniolo "
                               "2009)")

    out_class: str
    out_attr: str
    out_rows: str | None = None  # --synthetic: a table whose NBC views equal the published counts
    class_column: str
    attrs: list[str]
    classes: list[str]
    method: str  # 'SafetyTransform' or 'EST'
    rho: float  # rho of Corollary 4, or r of r-closeness for EST
    original_smallest_rho: float | None
    root: str = "paper"  # root exponent choice: Figure 4's bound, or "least" (least distortion)
    achieved_rho: float = 0.0  # smallest rho for which (10) holds on the published counts
    achieved_r: float = 0.0  # the same on the prior-normalised counts (EST's r-closeness, exact)
    max_digits: int = 0  # digits of the largest published count (stored exactly, no limit)
    identity: bool = False  # the views were already safe and are published unchanged (Section 6.3)
    k: int = 0  # Step 2 root exponent
    bits: int = 0  # Step 2 precision
    k_sind: int = 0  # Lemma 10 on the published views
    equivalence_checked_on: str = ""  # 'full product' or 'table tuples' ('' in a dry run)
    prior_weights: dict[str, int] = field(default_factory=dict)  # F_c (EST); all 1 for SafetyTransform
    est: dict[str, Any] = field(default_factory=dict)  # EST: Statement 14 figures, θ, k, sub-labels
    emitted_sql: str | None = None

    def lines(self) -> list[str]:
        how = ("already safe, published unchanged" if self.identity
               else f"{self.method}, root exponent k = {self.k}, {self.bits} bits")
        level = "r-closeness level (r)" if self.method == "EST" else "amplification ratio (rho)"
        head = (f"published {self.out_class} and {self.out_attr} ({how})" if self.checks else
                f"{self.table}: script written to {self.emitted_sql}; database unchanged")
        achieved = (f"  achieved r-closeness (smallest r of condition (10) on the prior-normalised counts): "
                    f"{self.achieved_r:.6g}; least r any equivalent publication can reach: "
                    f"{self.est.get('least_r', 1):.6g}; " if self.method == "EST" else
                    "  achieved safety (smallest rho of Corollary 4 on the published counts): "
                    f"{self.achieved_rho:.6g}; ")
        return [head + (f"; synthetic rows in {self.out_rows}" if self.out_rows and self.checks else ""),
                achieved + f"requested {level}: {self.rho:g}",
                f"  class precedence, last wins ties: {', '.join(self.classes)}; "
                f"indistinguishability level (k-SIND, Lemma 10): {self.k_sind:,}"]


@dataclass(kw_only=True)
class VerifyReport(Report):
    """Do the published tables train a classifier that ranks classes like the source's (Definition 2)?"""

    published: str
    checked_on: str  # 'full product' or 'table tuples'
    tuples_checked: int
    differences: list[str]
    published_smallest_rho: float | None
    achieved_r: float | None  # condition (10)'s smallest r on the counts normalised by the published prior F_c
    prior_weights: dict[str, int]
    k_sind: int

    def lines(self) -> list[str]:
        if self.ok:
            return [f"{self.published}: NBC-equivalent to {self.table} (Definition 2) on the {self.checked_on} "
                    f"({self.tuples_checked:,} tuples); achieved r-closeness (r) for the prior "
                    f"{self.prior_weights}: {self.achieved_r if self.achieved_r is None else f'{self.achieved_r:.6g}'}"]
        return [f"{self.published}: NOT NBC-equivalent to {self.table}:"] + [f"  {d}" for d in self.differences]


@dataclass(kw_only=True)
class BreachReport(Report):
    """Section 4's attacker: the belief in each class for I_0 before and after seeing the views."""

    PROVES: ClassVar[bool] = False

    views: str  # 'original' or the published prefix
    known: dict[str, str]
    worlds: int
    prior: dict[str, float]
    posterior: dict[str, float]
    posterior_exact: dict[str, str]
    class_share: dict[str, float]
    achieved_r: float | None = None  # --published: condition (10)'s smallest r on its prior-normalised counts

    def lines(self) -> list[str]:
        known = ", ".join(f"{k}={v}" for k, v in self.known.items())
        tail = ([] if self.achieved_r is None else
                [f"  achieved r-closeness of the published views (r, condition (10) on P/F, N/F): "
                 f"{self.achieved_r:.6g}"])
        return [f"{self.worlds:,} possible worlds consistent with the {self.views} views, for {known}:"] + [
            f"  {k}: prior {self.prior[k]:.2%} (class share {self.class_share[k]:.2%}) -> posterior {v:.2%}"
            for k, v in self.posterior.items()] + tail


# ---- input ----

def prior_weights(text: str | dict[str, Any]) -> dict[str, Fraction]:
    """The prior F as 'label=weight,...' (weights > 0, any scale; labels as the views print them),
    by label. Read without the table, so the API checks it where it receives it (validate_params)."""
    if isinstance(text, dict):
        pairs = {str(k): v for k, v in text.items()}
    else:
        items = validate.names(text) if text else []
        if not items or any("=" not in i for i in items):
            raise AnonsqlError(f"--prior must be class=weight[,class=weight...], got {text!r}")
        pairs = dict(i.rsplit("=", 1) for i in items)
    weights = {}
    for c, raw in pairs.items():
        try:
            w = Fraction(str(raw).strip())
        except (ValueError, ZeroDivisionError):
            raise AnonsqlError(f"--prior weight of {c!r} is not a number: {raw!r}") from None
        if w <= 0:
            raise AnonsqlError(f"--prior weight of {c!r} must be > 0, got {raw}")
        weights[c] = w
    return weights


def parse_prior(text: str | dict[str, Any], classes: list[str]) -> list[Fraction]:
    """The prior's weights in the order of `classes`: the table's classes, each exactly once."""
    weights = prior_weights(text)
    if sorted(weights) != sorted(classes):
        raise AnonsqlError(f"--prior must give every class exactly once: classes are {', '.join(classes)}")
    return [weights[c] for c in classes]


def parse_known(text: str | dict[str, Any], attrs: Sequence[str]) -> dict[int, str]:
    """Bob's quasi-identifier value I_0, 'attr=value,attr=value' (values as the views print them)."""
    items = validate.names(text) if isinstance(text, str) else []
    pairs = dict(text) if isinstance(text, dict) else dict(item.split("=", 1) for item in items if "=" in item)
    if not pairs or (isinstance(text, str) and len(pairs) != len(items)):
        raise AnonsqlError(f"--known must be attr=value[,attr=value...], got {text!r}")
    unknown = [a for a in pairs if a not in attrs]
    if unknown:
        raise AnonsqlError(f"--known names {', '.join(unknown)}, not among the attributes {', '.join(attrs)}")
    return {list(attrs).index(a): str(val) for a, val in pairs.items()}


def precedence_order(labels: list[str], precedence: Sequence[str]) -> list[int]:
    """Indexes of `labels` in precedence order: SQL sort order by default (last wins)."""
    if not precedence:
        return list(range(len(labels)))
    if sorted(precedence) != sorted(labels) or len(set(precedence)) != len(precedence):
        raise AnonsqlError(f"--precedence must list every class exactly once: classes are {', '.join(labels)}")
    return [labels.index(p) for p in precedence]


def _prepare(engine: Engine, table: str, class_column: str, attrs: Attrs, precedence: Precedence,
             say: Progress = silent) -> tuple[Table, Views]:
    """Validate the input and read the views, classes in precedence order."""
    tab = get_table(engine, table)
    cols = tab.resolve(validate.names(attrs))
    if not cols:
        raise AnonsqlError("no attributes given (--attrs a,b,c)")
    cls = validate.class_column(engine, tab, class_column, cols)
    engine.expect_rows(validate.rows(engine, tab))
    say(f"reading the views (P_c, N^i_(t,c)) of {tab} by SQL")
    v = stats.load_views(engine, tab, cols, cls)
    v = v.ordered(precedence_order(v.classes, validate.names(precedence)))
    validate_views(v.view, v.classes, v.attrs)
    return tab, v


def _published(engine: Engine, v: Views, published: str) -> tuple[Viewset, list[int]]:
    """The published counts on the source's layout and the prior weights F_c they carry."""
    class_table, attr_table = (get_table(engine, name) for name in rewrite.names(published))
    prior = stats.published_prior(engine, class_table, attr_table)
    return stats.read_published(engine, v, class_table, attr_table), [prior.get(c, 1) for c in v.classes]


def _float(x: Fraction | None) -> float | None:
    return None if x is None else float(x)


# ---- jobs ----

def run_views(engine: Engine, table: str, class_column: str, attrs: Attrs, *, precedence: Precedence = None,
              counts: bool = False) -> ViewsReport:
    """The NBC-enabling views (P, N) of `table` and the smallest rho of Corollary 4."""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    rho = smallest_rho(v.view)
    rows = None
    if counts:
        rows = [{"attribute": a, "value": v.values[i][t], "class": v.classes[c], "count": v.view.N[i][t][c]}
                for i, a in enumerate(v.attrs) for t in range(len(v.values[i])) for c in range(len(v.classes))]
    return ViewsReport(
        table=str(tab), class_column=v.class_column, attrs=v.attrs, classes=v.classes, rows=v.rows,
        P={c: int(p) for c, p in zip(v.classes, v.view.P)},
        domain_sizes={a: len(vals) for a, vals in zip(v.attrs, v.values)}, null_cells=dict(zip(v.attrs, v.null_cells)),
        zero_counts=sum(x == 0 for attr in v.view.N for row in attr for x in row), smallest_rho=_float(rho),
        smallest_rho_exact=None if rho is None else str(rho), k_sind=int(k_sind(v.view)), N=rows)


def run_check(engine: Engine, table: str, class_column: str, attrs: Attrs, rho: Any, *,
              precedence: Precedence = None) -> CheckReport:
    """Are the raw views already safe for rho? Condition (10), decided exactly on the counts of
    sql/common/attr_class_counts.sql; a failing check is a result (exit 1), not an error."""
    ratio = validate.ratio(rho, "rho")
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    least = smallest_rho(v.view)
    report = CheckReport(table=str(tab), rho=float(ratio), smallest_rho=_float(least),
                         amplification=_float(amplification(v.view)))
    report.check(verify.SAFETY, is_safe(v.view, ratio), "common/attr_class_counts",
                 f"rho = {ratio}, smallest rho {_rho_text(least)}")
    return report


def _method(rho: Any, r: Any, prior: Any) -> Fraction:
    """rho (SafetyTransform) or r with a prior (EST), never both."""
    if prior is None:
        if r is not None:
            raise AnonsqlError("--r (r-closeness) needs --prior")
        if rho is None:
            raise AnonsqlError("give --rho (SafetyTransform) or --prior with --r (EST)")
        return validate.ratio(rho, "rho")
    if rho is not None:
        raise AnonsqlError("give --rho (SafetyTransform) or --prior with --r (EST), not both")
    return validate.ratio(r, "r")


def _transform(report: PublishReport, v: Views, rho: Fraction, prior: list[Fraction] | None) -> tuple[Viewset,
                                                                                                      list[int]]:
    """SafetyTransform (Figure 2) or EST (Figure 7); fills the report's choices."""
    full = verify.full_product(v)
    if prior is None:
        # The least precision whose output Definition 2 accepts on all of ΠA_i (decided exactly
        # without enumerating it); only beyond equivalence.decidable the provable precision.
        oracle = (lambda w: eq.equivalent(v.view, w)) if full else None
        result = publish_safe(v.view, rho, oracle, root=report.root)
        report.k, report.bits, report.identity = result.k, result.bits, result.identity
        return result.view, [1] * v.view.classes
    if not full:
        raise AnonsqlError(f"FAIL: EST proves NBC-equivalence over all of ΠA_i, which has {eq.product_size(v.view):,} "
                           "tuples here, beyond what equivalence.decidable can decide; nothing written")
    res = est(v.view, prior, rho, eq.equivalent, root=report.root)
    if not res.ok or res.view is None:
        raise AnonsqlError(f"FAIL: {res.reason}; nothing written")
    report.k, report.bits, report.est = res.details["k"], res.details["bits"], dict(res.details)
    return res.view, res.weights


def run_publish(engine: Engine, table: str, class_column: str, attrs: Attrs, rho: Any = None, out: str = "", *,
                precedence: Precedence = None, replace: bool = False, prior: str | dict[str, Any] | None = None,
                r: Any = None, synthetic: bool = False, emit_sql: str | None = None, execute: bool = True,
                root: str = "paper", progress: Progress | None = None, script: bool = False) -> PublishReport:
    """SafetyTransform the views (rho), or EST them (prior and r); write <out>_class and <out>_attr
    (and with `synthetic` <out>_rows) and check them by SQL, in one transaction. `emit_sql` also
    writes the run as a script; `execute=False` only writes the script; `script` only builds it
    (report.script, as with `emit_sql`). `root` "least" searches
    the least root exponent k whose output still meets rho (least distortion; the paper's
    Figure 4 bound is the default)."""
    say = progress or silent
    ratio = _method(rho, r, prior)
    if not out or not str(out).strip():
        raise AnonsqlError("--out is required: the published tables are <out>_class and <out>_attr")
    validate.dry_run(execute, emit_sql)
    tab, v = _prepare(engine, table, class_column, attrs, precedence, say)
    weights = None if prior is None else parse_prior(prior, v.classes)
    names = rewrite.names(out, synthetic)
    replacing = [find_table(engine, name) for name in names]  # what each output replaces (--replace)
    for found in replacing:
        if found is not None and (found.schema, found.name) == (tab.schema, tab.name):
            raise AnonsqlError(f"--out would overwrite the source table {tab}")
        if found is not None and not replace:
            raise AnonsqlError(f"output table {found} already exists (use --replace to overwrite it)")
    replaced = [found for found in replacing if found is not None]
    report = PublishReport(
        table=str(tab), out=str(out), out_class=str(names[0]), out_attr=str(names[1]),
        out_rows=str(names[2]) if synthetic else None, class_column=v.class_column, attrs=v.attrs,
        classes=v.classes, method="SafetyTransform" if weights is None else "EST", rho=float(ratio),
        original_smallest_rho=_float(smallest_rho(v.view)), root=root, emitted_sql=emit_sql)
    say(f"{report.method} for {'r' if weights else 'rho'} = {ratio}")
    with report.timed("transform"):
        pub, prior_weights = _transform(report, v, ratio, weights)
    report.prior_weights = dict(zip(v.classes, prior_weights))
    report.achieved_rho, report.k_sind = float(smallest_rho(pub) or 0), int(k_sind(pub))
    report.achieved_r = float(achieved_r(pub, prior_weights) or 0)
    report.max_digits = len(str(int(max(pub.values()))))
    if engine.exact_digits is not None and report.max_digits > engine.exact_digits:
        raise AnonsqlError(f"the published counts have up to {report.max_digits} digits and {engine.dialect}'s exact "
                           f"integers cannot check them: at most {engine.exact_digits} digits on {engine.dialect} "
                           "(try --root least, or DuckDB/PostgreSQL); nothing written")
    if synthetic and sum(pub.P) > SYNTHETIC_ROW_LIMIT:
        raise AnonsqlError(f"--synthetic would write {sum(pub.P):,} rows (the sum of the published P_c), more than "
                           f"{SYNTHETIC_ROW_LIMIT:,}; nothing written (publish without --synthetic)")
    tables = rewrite.outputs(names, v, pub, prior_weights, engine.integer_type(int(max(pub.values()))))
    if execute:
        _write_and_verify(engine, report, v, ratio, replacing, tables, say)
    if emit_sql or script:
        title = (f"anonsql nbc publish: {tab} -> {', '.join(map(str, names))} "
                 f"({report.method}, {'r' if weights else 'rho'} = {ratio})")
        report.script = rewrite.script(engine.dialect, title, replaced, tables, v, ratio).text()
        if emit_sql:
            save(emit_sql, report.script)
            if not execute:
                report.notes.append(f"dry run: the script is in {emit_sql}; nothing was written")
    return report


def _write_and_verify(engine: Engine, report: PublishReport, v: Views, rho: Fraction,
                      replacing: list[Table | None], tables: list[rewrite.Output], say: Progress) -> None:
    """The one transaction: replace, write, then the independent checks; a failure rolls back.
    The tables are written under staged_outputs' names (Spark: staging tables, renamed into
    place together once verified; elsewhere the outputs themselves, in the transaction)."""
    with engine.transaction(), staged_outputs(engine, [(t.name, old) for t, old in zip(tables, replacing)]) as staged:
        tables = [dataclasses.replace(t, name=name) for t, name in zip(tables, staged)]
        with report.timed("write"):
            say("writing the published tables")
            rewrite.write(engine, tables)
        with report.timed("verify"):
            say("checking condition (10), the sums and NBC-equivalence")
            class_table, attr_table = (get_table(engine, t.name) for t in tables[:2])
            report.checks += verify.safety(engine, class_table.expr, attr_table.expr, rho, v.view.n, v.view.classes)
            pub = stats.read_published(engine, v, class_table, attr_table)
            equivalence = verify.equivalence(v, pub, limit=1)
            report.equivalence_checked_on = equivalence.checked_on
            report.checks.append(equivalence.check())
            if len(tables) > 2:
                report.checks.append(verify.synthetic(engine, get_table(engine, tables[2].name), v, pub))
        if not report.ok:
            raise VerificationError(report.checks)


def run_verify(engine: Engine, table: str, class_column: str, attrs: Attrs, published: str, *,
               precedence: Precedence = None) -> VerifyReport:
    """Definition 2 between the source's NBC and the one trained on the published tables; a
    failing check is a result (exit 1), not an error."""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    pub, weights = _published(engine, v, published)
    equivalence = verify.equivalence(v, pub)
    return VerifyReport(table=str(tab), published=published, checks=[equivalence.check()],
                        checked_on=equivalence.checked_on, tuples_checked=equivalence.tuples,
                        differences=equivalence.differences, published_smallest_rho=_float(smallest_rho(pub)),
                        achieved_r=_float(achieved_r(pub, weights)), prior_weights=dict(zip(v.classes, weights)),
                        k_sind=int(k_sind(pub)))


def run_breach(engine: Engine, table: str, class_column: str, attrs: Attrs, known: str | dict[str, Any], *,
               published: str | None = None, precedence: Precedence = None) -> BreachReport:
    """Section 4's attacker on a tiny table: prior and posterior of each class for I_0 = `known`,
    over all worlds consistent with the table's views (or with the `published` ones)."""
    tab, v = _prepare(engine, table, class_column, attrs, precedence)
    view, weights = _published(engine, v, published) if published else (v.view, None)
    I0 = parse_known(known, v.attrs)
    P: dict[object, int] = {c: int(p) for c, p in zip(v.classes, view.P)}
    N = [{(v.values[i][t], v.classes[c]): int(view.N[i][t][c]) for t in range(len(v.values[i]))
          for c in range(len(v.classes)) if view.N[i][t][c]} for i in range(view.n)]
    b = breach(P, N, I0)
    return BreachReport(
        table=str(tab), views=published or "original", known={v.attrs[i]: x for i, x in I0.items()},
        worlds=b.worlds, prior={str(c): float(x) for c, x in b.prior.items()},
        posterior={str(c): float(x) for c, x in b.posterior.items()},
        posterior_exact={str(c): str(x) for c, x in b.posterior.items()},
        class_share={str(c): float(x) for c, x in b.class_share.items()},
        achieved_r=None if weights is None else _float(achieved_r(view, weights)))
