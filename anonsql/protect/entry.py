"""The protect job's one entry on an open engine: the arguments checked (method, k over qi, top_k,
seed, the cells' file, the pseudonym key), then the job (anonsql.protect.job, which checks them against
the table). Behind `anonsql.protect_table` and a release's protect step."""

from __future__ import annotations

from collections.abc import Sequence

from .. import identifiers, validate
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Progress
from . import job
from .request import read_cells_csv
from .suppress import METHODS


def protect_table(engine: Engine, table: str, key: str, *, method: str = "dropp", target: str | None = None,
                  rows: Sequence[str] | str | None = None, cells: Sequence[tuple[str, str]] | str | None = None,
                  attrs: Sequence[str] | str | None = None, top_k: int | None = None, seed: int = 0,
                  out: str | None = None, in_place: bool = False, replace: bool = False,
                  delete_rows: bool = False, taxonomies: dict[str, str] | str | None = None,
                  emit_sql: str | None = None, execute: bool = True, progress: Progress | None = None,
                  drop: Sequence[str] | str | None = None, pseudonymize: Sequence[str] | str | None = None,
                  key_file: str | None = None, qi: Sequence[str] | str | None = None, k: int | None = None,
                  script: bool = False) -> job.ProtectReport:
    """See anonsql.api.protect_table; `script` builds the reviewable script (report.script)
    without writing it anywhere (`emit_sql` builds and writes it)."""
    validate.choice("method", method, METHODS)
    qi_cols = validate.names(qi)
    if k is not None:
        k = validate.k(k)
        if not qi_cols:
            raise AnonsqlError("--k needs --qi: the quasi-identifiers over which protect keeps k-anonymity")
    top_k = None if top_k is None else validate.integer(top_k, "top_k", minimum=2)
    seed = validate.seed(seed)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    if isinstance(cells, str):
        cells = read_cells_csv(cells)
    pseudo = validate.names(pseudonymize)
    if key_file and not pseudo:
        raise AnonsqlError("--key-file is the key of --pseudonymize, which names no column")
    pseudonym_key = identifiers.read_key(key_file) if pseudo else None
    if pseudo:
        identifiers.pseudonymize_sql(engine.dialect)  # refuses an engine without the SQL, before any work
    return job.protect_table(engine, table, key, method=method, target=target,
                             rows=None if rows is None else validate.names(rows), cells=cells,
                             attrs=validate.names(attrs) or None, top_k=top_k, seed=seed, out=out,
                             in_place=in_place, replace=replace, delete_rows=delete_rows,
                             taxonomies=taxonomies, emit_sql=emit_sql, execute=execute,
                             progress=progress, drop=validate.names(drop), pseudonymize=pseudo,
                             pseudonym_key=pseudonym_key, qi=qi_cols, k=k, script=script)
