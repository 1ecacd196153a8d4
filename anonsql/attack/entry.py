"""The attack room's entries on an open engine: the arguments checked against the tables, then the
job (anonsql.attack.job). Behind anonsql.api's `reidentification_risk` and `linkage_attack`, and
the release's gates."""

from __future__ import annotations

from collections.abc import Sequence

from .. import validate
from ..catalog import Table, get_table
from ..engine import Engine
from ..errors import AnonsqlError
from .job import DifferenceReport, LinkageReport, RefineReport, RiskReport, difference, linkage, refine, risk

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


def refine_attack(engine: Engine, published: str, tables: Sequence[str] | str, *, qi: Sequence[str] | str | None = None,
                  class_column: str | None = None, method: str = "any", sensitive: Sequence[str] | str | None = None,
                  min_candidates: int = 2, strict: bool = True) -> RefineReport:
    """See anonsql.api.refine_attack (`strict` False: a release's own pairing, attack.job.refine)."""
    pub = get_table(engine, published)
    names = [t.strip() for t in tables.split(",")] if isinstance(tables, str) else list(tables)
    counted = [_count_table(engine, pub, get_table(engine, t)) for t in names if t]
    if method not in ("any", "kanon"):
        raise AnonsqlError(f"--method must be 'any' or 'kanon', got {method!r}")
    qi_cols: list[str] = []
    cls = None
    if method == "kanon":
        if not qi or not class_column:
            raise AnonsqlError("--method kanon needs --qi and --class: the quasi-identifiers and the class column "
                               "kanon ran with")
        qi_cols = validate.quasi_identifiers(pub, qi)
        cls = pub.column(class_column).name
        if cls in qi_cols:
            raise AnonsqlError(f"--class column '{cls}' is also a quasi-identifier")
    elif not counted:
        raise AnonsqlError("nothing to refine with: give --tables (safe count tables of the same rows) or "
                           "--method kanon")
    secret = pub.resolve([s.strip() for s in sensitive.split(",")] if isinstance(sensitive, str)
                         else list(sensitive or []))
    validate.rows(engine, pub)  # an empty published table: nothing to attack
    return refine(engine, pub, counted, qi=qi_cols, class_column=cls, sensitive=secret, min_candidates=min_candidates,
                  strict=strict)


def _count_table(engine: Engine, published: Table, table: Table) -> tuple[Table, list[str]]:
    """A safe count table of `anonsql tables` (suppression, counts) and its dimensions, named as in `published`."""
    from ..ckm.job import is_ckm
    from ..tables.rewrite import PUBLISHED

    missing = [c for c in PUBLISHED if c not in table.column_names]
    if missing:
        raise AnonsqlError(f"{table} is not a published table of 'anonsql tables' (no column {', '.join(missing)})")
    if is_ckm(engine, table):
        raise AnonsqlError(f"{table} holds noisy counts (the cell key method): they imply no count of the rows")
    if table.column("value").kind != "integer":
        raise AnonsqlError(f"{table} publishes sums ({table.column('value').data_type}), not counts: the refinement "
                           "attack reads count tables")
    return table, published.resolve([c for c in table.column_names if c not in PUBLISHED])
