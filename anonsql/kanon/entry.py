"""The kanon job's one entry on an open engine: the arguments checked (values, then against the
table), then the job (anonsql.kanon.job). Behind `anonsql.k_anonymize` and a release's kanon step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace as replace_dc
from typing import Any

from .. import identifiers, validate
from ..catalog import Table, get_table
from ..data.risk import ORDERED_KINDS
from ..engine import Engine
from ..errors import AnonsqlError
from ..hierarchy import parse_all, resolve
from ..report import Progress
from . import diversity, job, recoding
from .model import COSTS, NEEDS_POSITIVE_ALPHA

Limits = Mapping[str, Any] | str | None


def k_anonymize(engine: Engine, table: str, qi: Sequence[str] | str, class_column: str | None, k: int, *,
                cost: str = "mar", alpha: float = 1.0, seed: int = 0, out: str | None = None,
                in_place: bool = False, replace: bool = False, emit_sql: str | None = None,
                execute: bool = True, progress: Progress | None = None,
                drop: Sequence[str] | str | None = None, pseudonymize: Sequence[str] | str | None = None,
                key_file: str | None = None, changes: str | None = None, script: bool = False,
                l_diversity: Limits = None, entropy_l: Limits = None, recursive_cl: Limits = None,
                t_closeness: Limits = None, hierarchy: Sequence[str] | str | Mapping[str, str] | None = None,
                max_suppressed_records: float = 0.05, hierarchy_bounds: bool = False,
                search_utility: str = "loss", restore: bool = False, local_recoding: bool = False) -> job.KanonReport:
    """See anonsql.api.k_anonymize; `script` builds the reviewable script (report.script) without
    writing it anywhere (`emit_sql` builds and writes it). `hierarchy` generalizes first
    (anonsql.kanon.recoding): 'COL=KIND:ARGS' texts or {column: spec}; `hierarchy_bounds` adds
    the bound columns of its interval and date QIs; `search_utility` what the search minimises
    (recoding.UTILITIES)."""
    k = validate.k(k)
    hierarchies = parse_all(hierarchy)
    if local_recoding and not hierarchies:
        raise AnonsqlError("--local-recoding gives cells back as labels of --hierarchy's ladders: give --hierarchy")
    if hierarchy_bounds and not hierarchies:
        raise AnonsqlError("--hierarchy-bounds bounds --hierarchy's intervals and dates: give --hierarchy")
    utility = validate.choice("search utility", search_utility, recoding.UTILITIES)
    share = validate.number(max_suppressed_records, "--max-suppressed-records (a share of the rows)", minimum=0)
    if share > 1:
        raise AnonsqlError(f"--max-suppressed-records is a share of the rows, 0 to 1; got {max_suppressed_records!r}")
    parsed = [m for kind, spec in zip(diversity.KINDS, (l_diversity, entropy_l, recursive_cl, t_closeness))
              for m in diversity.parse(spec, kind)]
    cost = validate.choice("cost", cost, COSTS)
    positive = cost in NEEDS_POSITIVE_ALPHA  # eq. 10 is infinite at alpha = 0
    alpha = validate.number(alpha, f"alpha (the pseudo count) for cost '{cost}'",
                            minimum=None if positive else 0, above=0 if positive else None)
    seed = validate.seed(seed)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    tab = get_table(engine, table)
    qi_cols = validate.quasi_identifiers(tab, qi)
    cls = validate.class_column(engine, tab, class_column, qi_cols) if class_column is not None else None
    dropped, pseudo = identifiers.check_columns(tab, qi_cols, validate.names(drop), validate.names(pseudonymize),
                                                [cls] if cls else [])
    models = _sensitive_models(tab, parsed, [*qi_cols, *dropped, *pseudo])
    if key_file and not pseudo:
        raise AnonsqlError("--key-file is the key of --pseudonymize, which names no column")
    key = identifiers.read_key(key_file) if pseudo else None
    if pseudo:
        identifiers.pseudonymize_sql(engine.dialect)  # refuses an engine without the SQL, before any work
    rows = validate.rows(engine, tab)
    engine.expect_rows(rows)
    validate.k_within(k, rows)
    if hierarchies:
        return recoding.run(engine, tab, rows, qi_cols, cls, k, resolve(engine, tab, hierarchies), share, out=out,
                            emit_sql=emit_sql, execute=execute, in_place=in_place, progress=progress, cost=cost,
                            alpha=alpha, seed=seed, replace=replace, drop=dropped, pseudonymize=pseudo, key=key,
                            changes=changes, script=script, models=models, bounds=hierarchy_bounds,
                            utility=utility, restore=restore, local=local_recoding)
    return job.run(engine, tab, rows, qi_cols, cls, k, cost=cost, alpha=alpha, seed=seed, out=out,
                   in_place=in_place, replace=replace, emit_sql=emit_sql, execute=execute,
                   progress=progress, drop=dropped, pseudonymize=pseudo, key=key, changes=changes, script=script,
                   models=models, restore=restore)


def _sensitive_models(table: Table, models: Sequence[diversity.Model], changed: Sequence[str]
                      ) -> list[diversity.Model]:
    """The models on the table's columns: each named as the catalog spells it, numbered by its
    sensitive column (first mention first), t-closeness on numbers and dates with the ordered
    distance (as `check` measures it). A sensitive column may be the class, never a column the
    run changes (a quasi-identifier, dropped or pseudonymized)."""
    columns: list[str] = []
    out = []
    for m in models:
        column = table.column(m.name)
        if column.name in changed:
            raise AnonsqlError(f"{m.option}: sensitive column '{column.name}' is a quasi-identifier or is dropped "
                               "or pseudonymized by this run; name a column the run keeps")
        if column.name not in columns:
            columns.append(column.name)
        out.append(replace_dc(m, name=column.name, column=columns.index(column.name),
                              ordered=column.kind in ORDERED_KINDS))
    return out
