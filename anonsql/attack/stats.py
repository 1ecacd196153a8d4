"""The attack room's SQL statistics → small results: class sizes, the population counts of the
sample's classes, and the linkage attack's counts per number of candidates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from .. import sql
from ..catalog import Table, find_table
from ..engine import Engine
from ..errors import AnonsqlError


@dataclass(frozen=True)
class PopulationRisk:
    """Re-identification risk against the population (sql/risk/population_risk.sql)."""

    source: str  # "population table T" or "weights W"
    population: float  # N: the population table's rows, or Σ w
    threshold: float
    journalist: float  # max_k 1/F_k
    records_above_threshold: int  # records with 1/F_k > threshold
    marketer: float  # (1/n) Σ f_k / F_k
    max_individual: float | None  # Benedetti-Franconi max_k r_k (weights only)
    expected_reidentified: float | None  # Σ f_k r_k (weights only)
    short_classes: int  # sample classes with F_k < f_k (taken as F_k = f_k)

    def lines(self) -> list[str]:
        lines = [f"  against the population ({self.source}, N = {self.population:,.0f}):",
                 f"    journalist risk (max 1/F_k): {self.journalist:.4g}; records with 1/F_k above "
                 f"{self.threshold:g}: {self.records_above_threshold:,}",
                 f"    marketer risk (expected share re-identified, mean f_k/F_k): {self.marketer:.4g}"]
        if self.max_individual is not None and self.expected_reidentified is not None:
            lines.append(f"    individual risk (Benedetti-Franconi): highest {self.max_individual:.4g}, "
                         f"expected re-identifications {self.expected_reidentified:,.2f}")
        return lines


def class_sizes(engine: Engine, table: Table, qi: Sequence[str]) -> list[tuple[int, int]]:
    """The frequency of frequencies [(k, c_k)] over `qi` (sql/data/class_size_histogram.sql)."""
    text, params = sql.render("data/class_size_histogram", engine.dialect, tbl=table.expr, qi=sql.columns(qi))
    return [(int(k), int(c)) for k, c in engine.fetch_all(text, params)]


def population_risk(engine: Engine, table: Table, qi: Sequence[str], threshold: float, *,
                    population: Table | None = None, weights: str | None = None) -> PopulationRisk:
    """The journalist and marketer risk (and, with weights, the individual risk) of `table`'s classes
    over `qi`, their population counts F_k from a population table or the sum of the weights."""
    if population is not None:
        flag = sql.unused_ident("in_sample", list(qi))
        classes = sql.subquery("risk/population_counts", "classes", tbl=table.expr, qi=sql.columns(qi),
                               population=population.expr, population_qi=sql.columns(population.resolve(qi)),
                               in_sample=flag)
        size = _scalar(engine, "common/row_count", tbl=population.expr)
        source = f"population table {population}"
    else:
        assert weights is not None
        classes = sql.subquery("risk/weighted_counts", "classes", tbl=table.expr, qi=sql.columns(qi),
                               w=sql.column(weights))
        size = _scalar(engine, "risk/weight_total", tbl=table.expr, w=sql.column(weights))
        source = f"sampling weights {weights}"
    text, params = sql.render("risk/population_risk", engine.dialect, classes=classes, threshold=threshold)
    journalist, above, marketer, top, expected, _n, short = engine.fetch_all(text, params)[0]
    individual = weights is not None
    return PopulationRisk(source, size, threshold, float(journalist), int(above), float(marketer),
                          float(top) if individual else None, float(expected) if individual else None, int(short))


def _scalar(engine: Engine, name: str, **bindings: object) -> float:
    text, params = sql.render(name, engine.dialect, **bindings)
    return float(engine.fetch_all(text, params)[0][0] or 0)


#: Up to this many quasi-identifiers the linkage takes every ⊥ pattern (2^m branches, most of them
#: empty, each probed by the few attacker classes of so few QIs) instead of a pass over the
#: published table to find those in use.
EVERY_PATTERN_UP_TO = 4


def null_patterns(engine: Engine, published: Table, qi: Sequence[str]) -> list[str]:
    """The ⊥ patterns in use in `published` over `qi` (sql/attack/null_patterns.sql); with few QIs
    every pattern there could be."""
    if len(qi) <= EVERY_PATTERN_UP_TO:
        return sorted(format(i, f"0{len(qi)}b") for i in range(2 ** len(qi)))
    text, params = sql.render("attack/null_patterns", engine.dialect, published=published.expr,
                              pattern=sql.fragment("attack/null_pattern", col=sql.columns(published.resolve(qi))))
    return sorted(str(r[0]) for r in engine.fetch_all(text, params))


def linkage_sql(dialect: str, published: Table, source: Table, qi: Sequence[str], key: str | None,
                patterns: Sequence[str]) -> str:
    """sql/attack/linkage.sql for these tables, its $matches the UNION ALL of one
    sql/attack/linkage_branch.sql per ⊥ pattern. The branch is generated once on stand-ins and each
    pattern's copy spliced in (anonsql.sql.splice): its literal pattern and the equalities of the
    columns it publishes, each generated once by sqlglot; hundreds of patterns cost no parsing."""
    pub_qi, src_qi = published.resolve(qi), source.resolve(qi)
    names = {n: sql.unused_ident(n, [*pub_qi, *src_qi]) for n in ("s", "c", "k", "n", "a_id")}
    text, _ = sql.render("attack/linkage", dialect, published=published.expr, source=source.expr,
                         qi=sql.columns(src_qi), pub_qi=sql.columns(pub_qi),
                         pub_s=sql.fragment("attack/null_pattern", col=sql.columns(pub_qi)),
                         pub_k=sql.column(published.resolve([key])[0]) if key else exp.Null(),
                         att_k=sql.column(source.resolve([key])[0]) if key else exp.Null(),
                         att_g=sql.group_key(sql.columns(src_qi)), matches=exp.Table(this=sql.stand_in(0).this),
                         **names)
    branch, _ = sql.render("attack/linkage_branch", dialect, pattern=sql.stand_in(1), same=sql.stand_in(2), **names)
    equal = [sql.text(exp.EQ(this=sql.column(a, "a"), expression=sql.column(p, "p")), dialect)
             for a, p in zip(src_qi, pub_qi)]
    branches = [sql.splice(branch, dialect, {
        1: sql.text(exp.Literal.string(pattern), dialect),
        2: " AND ".join(e for e, flag in zip(equal, pattern) if flag == "0") or sql.text(exp.true(), dialect)})
        for pattern in patterns]
    return sql.splice(text, dialect, {0: "(" + " UNION ALL ".join(branches) + ") AS m"})


def linkage_counts(engine: Engine, published: Table, source: Table, qi: Sequence[str],
                   key: str | None) -> list[tuple[int, int, int, int]]:
    """(m, attackers, classes, correct) per number of candidates m (sql/attack/linkage.sql)."""
    text = linkage_sql(engine.dialect, published, source, qi, key, null_patterns(engine, published, qi))
    return [(int(m), int(a), int(c), int(x)) for m, a, c, x in engine.fetch_all(text)]


@dataclass(frozen=True)
class _Relation(Table):
    """A relation read like a table (the attacker of anonsql.tables reads `out.expr` only)."""

    relation: exp.Expr | None = None

    @property
    def expr(self) -> exp.Table:
        return self.relation  # type: ignore[return-value]  # a subquery where a table name goes


def difference_cells(earlier: Table, later: Table, dims: Sequence[str]) -> tuple[Table, str]:
    """The two published tables as one (sql/attack/difference_cells.sql) and its extra dimension's name."""
    part = sql.unused_ident("part", list(dims))
    relation = sql.subquery("attack/difference_cells", "pair", earlier=earlier.expr, later=later.expr,
                            label=sql.columns(earlier.resolve(dims)), later_label=sql.columns(later.resolve(dims)),
                            part=part)
    return _Relation(earlier.schema, f"{earlier} and {later}", (), relation=relation), part.name


def primaries(engine: Engine, published: Table, dims: Sequence[str]) -> list[tuple[tuple, int]]:
    """The primary cells (labels, grouping id) of a published safe table: from its private audit
    (sql/tables/private_primaries.sql) when it exists, else every hidden cell."""
    from ..tables.job import PRIVATE_AUDIT

    audit = find_table(engine, sql.TableName(f"{published.name}{PRIVATE_AUDIT}", published.schema))
    if audit is not None:
        text, params = sql.render("tables/private_primaries", engine.dialect, audit=audit.expr,
                                  label=sql.columns(audit.resolve(dims)))
        return [(tuple(r[:-1]), int(r[-1])) for r in engine.fetch_all(text, params)]
    return [(labels, g) for labels, g, _, value in _cells(engine, published, dims) if value is None]


def cells(engine: Engine, published: Table, dims: Sequence[str]) -> list[tuple[tuple, int]]:
    """Every cell (labels, grouping id) of a published safe table."""
    return [(labels, g) for labels, g, _, _ in _cells(engine, published, dims)]


def _cells(engine: Engine, published: Table, dims: Sequence[str]) -> list[tuple[tuple, int, int, object]]:
    """(labels, grouping id, taxonomy level, value or None) of every cell of a published safe table."""
    text, params = sql.render("tables/published_cells", engine.dialect, out=published.expr,
                              label=sql.columns(published.resolve(dims)))
    n = len(dims)
    return [(tuple(r[:n]), int(r[n]), int(r[n + 1] or 0), r[n + 2]) for r in engine.fetch_all(text, params)]


def refine_groups(engine: Engine, table: Table, cols: Sequence[str]) -> list[tuple[tuple[str | None, ...], int]]:
    """The refinement attack's groups of `table` over `cols`: (values as text, ⊥ None; n_g)
    (sql/attack/refine_groups.sql)."""
    text, params = sql.render("attack/refine_groups", engine.dialect, tbl=table.expr, col=sql.columns(cols))
    n = len(cols)
    return [(tuple(None if v is None else str(v) for v in r[:n]), int(r[n])) for r in engine.fetch_all(text, params)]


def count_cells(engine: Engine, published: Table, dims: Sequence[str]) -> list[tuple[tuple, tuple[bool, ...], int]]:
    """The published cells of a safe count table: (labels, which dimensions are margins, count);
    hidden cells say nothing and are left out (sql/tables/published_cells.sql)."""
    n, rows = len(dims), _cells(engine, published, dims)
    if any(level for _, _, level, _ in rows):
        raise AnonsqlError(f"{published} has taxonomy totals (level > 0): the refinement attack reads tables of "
                           "plain values only")
    return [(labels, tuple(bool((g >> (n - 1 - d)) & 1) for d in range(n)), int(value))  # type: ignore[call-overload]
            for labels, g, _, value in rows if value is not None]
