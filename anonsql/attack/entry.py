"""The attack room's entries on an open engine: the arguments checked against the tables, then the
job (anonsql.attack.job). Behind anonsql.api's `reidentification_risk` and `linkage_attack`, and
the release's gates."""

from __future__ import annotations

from collections.abc import Sequence

from .. import validate
from ..catalog import Table, get_table
from ..engine import Engine
from ..errors import AnonsqlError
from .job import DifferenceReport, LinkageReport, RiskReport, difference, linkage, risk

_NUMERIC = ("integer", "float", "decimal")


def reidentification_risk(engine: Engine, table: str, qi: Sequence[str] | str, *, population: str | None = None,
                          population_weights: str | None = None, sampling_fraction: float | None = None,
                          risk_threshold: float = 0.2, max_journalist_risk: float | None = None) -> RiskReport:
    """See anonsql.api.reidentification_risk."""
    if population and population_weights:
        raise AnonsqlError("give the population as --population TABLE or --population-weights COLUMN, not both")
    tab = get_table(engine, table)
    qi_cols = validate.quasi_identifiers(tab, qi)
    pop = get_table(engine, population) if population else None
    if pop is not None:
        _same_kinds(tab, pop, qi_cols, "population")
    weights = tab.column(population_weights).name if population_weights else None
    if weights is not None:
        if tab.column(weights).kind not in _NUMERIC:
            raise AnonsqlError(f"--population-weights column '{weights}' is not numeric "
                               f"({tab.column(weights).data_type})")
        if weights in qi_cols:
            raise AnonsqlError(f"--population-weights column '{weights}' is also a quasi-identifier")
    rows = validate.rows(engine, tab)
    engine.expect_rows(rows)
    return risk(engine, tab, qi_cols, rows, threshold=risk_threshold, population=pop, weights=weights,
                sampling_fraction=sampling_fraction, max_journalist_risk=max_journalist_risk)


def linkage_attack(engine: Engine, published: str, source: str, qi: Sequence[str] | str, *, key: str | None = None,
                   max_linkage_success: float | None = None) -> LinkageReport:
    """See anonsql.api.linkage_attack."""
    pub, src = get_table(engine, published), get_table(engine, source)
    qi_cols = validate.quasi_identifiers(src, qi)
    _same_kinds(src, pub, qi_cols, "published")
    if key is not None:
        key = src.column(key).name
        pub.resolve([key])
        if key in qi_cols:
            raise AnonsqlError(f"--key column '{key}' is also a quasi-identifier")
    validate.rows(engine, pub)  # an empty published table: nothing to attack
    engine.expect_rows(validate.rows(engine, src))
    return linkage(engine, pub, src, qi_cols, key, max_linkage_success=max_linkage_success)


def _same_kinds(table: Table, other: Table, qi: Sequence[str], what: str) -> None:
    """`other` holds the quasi-identifiers of `table`, each of the same kind (values compare as equal)."""
    for mine, theirs in zip(qi, other.resolve(qi)):
        a, b = table.column(mine), other.column(theirs)
        if a.kind != b.kind:
            raise AnonsqlError(f"quasi-identifier {mine} is {a.kind} in {table} but {b.kind} in the {what} table "
                               f"{other}: their values cannot be matched")


def difference_attack(engine: Engine, earlier: str, later: str, *, min_count: int = 3) -> DifferenceReport:
    """See anonsql.api.difference_attack."""
    from ..tables.rewrite import PUBLISHED

    tabs = [get_table(engine, earlier), get_table(engine, later)]
    dims = []
    for tab in tabs:
        missing = [c for c in PUBLISHED if c not in tab.column_names]
        if missing:
            raise AnonsqlError(f"{tab} is not a published table of 'anonsql tables' (no column {', '.join(missing)})")
        dims.append([c for c in tab.column_names if c not in PUBLISHED])
    if [d.lower() for d in dims[0]] != [d.lower() for d in dims[1]]:
        raise AnonsqlError(f"{tabs[0]} and {tabs[1]} have other dimensions ({', '.join(dims[0])} / "
                           f"{', '.join(dims[1])}): the difference attack needs two tables of the same cells")
    return difference(engine, tabs[0], tabs[1], dims[0], min_count)
