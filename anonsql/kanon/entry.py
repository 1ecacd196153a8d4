"""The kanon job's one entry on an open engine: the arguments checked (values, then against the
table), then the job (anonsql.kanon.job). Behind `anonsql.k_anonymize` and a release's kanon step."""

from __future__ import annotations

from collections.abc import Sequence

from .. import identifiers, validate
from ..catalog import get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Progress
from . import job
from .model import COSTS, NEEDS_POSITIVE_ALPHA


def k_anonymize(engine: Engine, table: str, qi: Sequence[str] | str, class_column: str | None, k: int, *,
                cost: str = "mar", alpha: float = 1.0, seed: int = 0, out: str | None = None,
                in_place: bool = False, replace: bool = False, emit_sql: str | None = None,
                execute: bool = True, progress: Progress | None = None,
                drop: Sequence[str] | str | None = None, pseudonymize: Sequence[str] | str | None = None,
                key_file: str | None = None, changes: str | None = None, script: bool = False) -> job.KanonReport:
    """See anonsql.api.k_anonymize; `script` builds the reviewable script (report.script) without
    writing it anywhere (`emit_sql` builds and writes it)."""
    k = validate.k(k)
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
    if key_file and not pseudo:
        raise AnonsqlError("--key-file is the key of --pseudonymize, which names no column")
    key = identifiers.read_key(key_file) if pseudo else None
    if pseudo:
        identifiers.pseudonymize_sql(engine.dialect)  # refuses an engine without the SQL, before any work
    rows = validate.rows(engine, tab)
    engine.expect_rows(rows)
    validate.k_within(k, rows)
    return job.run(engine, tab, rows, qi_cols, cls, k, cost=cost, alpha=alpha, seed=seed, out=out,
                   in_place=in_place, replace=replace, emit_sql=emit_sql, execute=execute,
                   progress=progress, drop=dropped, pseudonymize=pseudo, key=key, changes=changes, script=script)
