"""The bundled real data sets (fixtures/, UCI, CC BY 4.0) and the papers' preprocessing."""

from __future__ import annotations

import uuid
from importlib import resources

import pandas as pd
import pyarrow as pa

from .. import sql
from ..catalog import drop_table, find_table, get_table, staged_output
from ..engine import Engine
from ..errors import AnonsqlError, VerificationError
from .bundled import DATASETS, Dataset
from .loading import CsvFormat, LoadReport, count_rows, fill_table, read_frame, write_frame


def load_dataset(engine: Engine, name: str, table: str, *, replace: bool = False) -> LoadReport:
    """Load bundled data set `name` into `table`, preprocessed in SQL when it has a `derive` step.

    The raw rows of a derived data set go to a temporary table under a fresh reserved name
    (`anonsql_tmp_<random>`): private to this connection, it can never meet a user's table. The
    table is written under staged_output's name and checked there (Spark: a staging table that
    replaces an existing one only once checked).
    """
    spec = DATASETS[name]
    with resources.as_file(resources.files("anonsql._fixtures").joinpath(spec.file)) as path:
        frame, kinds = read_frame(str(path), CsvFormat.build(na=spec.na))
    if spec.row_id:
        frame.insert(0, "id", pd.Series(range(1, len(frame) + 1), dtype=pd.ArrowDtype(pa.int64())))
        kinds = {"id": "integer", **kinds}
    target = sql.TableName.parse(table)
    existing = find_table(engine, target)
    if existing is not None and not replace:
        raise AnonsqlError(f"table {existing} already exists (use --replace to overwrite it)")
    with engine.transaction(), staged_output(engine, target, existing) as out:
        if spec.derive is None:
            return _published_size(fill_table(engine, frame, target, out, kinds), spec)
        staging = sql.TableName(f"anonsql_tmp_{uuid.uuid4().hex}")
        write_frame(engine, frame, staging, kinds=kinds, temporary=True)
        engine.execute(sql.render(spec.derive, engine.dialect, out=out.expr, src=staging.expr)[0])
        drop_table(engine, staging.expr)
        derived = get_table(engine, out)
        rows = count_rows(engine, derived.expr)
        report = LoadReport(table=str(target), rows=rows, columns={c.name: c.kind for c in derived.columns})
        return _published_size(report, spec)


def _published_size(report: LoadReport, spec: Dataset) -> LoadReport:
    """The loaded table must have the data set's published row count (inside the load's transaction)."""
    report.check("the published number of rows", report.rows == spec.rows, "common/row_count",
                 f"{report.rows:,} of {spec.rows:,}")
    if not report.ok:
        raise VerificationError(report.checks)
    return report
