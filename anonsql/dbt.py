"""Python model helpers of the dbt package (integrations/dbt_anonsql): in a dbt Python model,

    from anonsql.dbt import kanon

    def model(dbt, session):
        return kanon(dbt, session, dbt.ref("patients"), qi=["age", "sex", "zip"], k=3)

runs anonsql's kanon job (or `safe_table`'s, the tables job) on the model's input and returns the
published rows, which dbt writes as the model. Where it runs: dbt-duckdb, whose Python models get a
DuckDB connection (`session`) and relations (`dbt.ref`). The input's rows are written to the
private table `<model>__anonsql_private_input`, the job writes `<model>__anonsql_output` and proves
its guarantee there by SQL, the output is read back as an Arrow table (the model's rows pass
through Python, as a Python model's do), and both tables are dropped whatever happens. dbt-spark
runs Python models only on Databricks clusters (submitted by REST, not in dbt's process) and anonsql
wraps no caller's Spark session, so there the helpers refuse in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlglot
from sqlglot import exp

from .engine import Engine, connect
from .errors import AnonsqlError
from .report import Report
from .sql import TableName, ident, render

__all__ = ["kanon", "safe_table"]


def kanon(dbt: Any, session: Any, data: Any, *, qi: list[str] | str, k: int = 5, class_column: str | None = None,
          **options: Any) -> Any:
    """The rows of `data` (e.g. `dbt.ref('patients')`) made k-anonymous over `qi` by anonsql's cell
    suppression, as an Arrow table for dbt to write; `options` are `anonsql.k_anonymize`'s (cost,
    seed, l_diversity, drop, pseudonymize, ...), `out` and `in_place` excepted."""
    from .api import k_anonymize

    options = _own(options)
    return _run("kanon", dbt, session, data, lambda engine, table, out: k_anonymize(
        engine, table, qi, class_column, k, out=out, replace=True, **options))


def safe_table(dbt: Any, session: Any, data: Any, *, dims: list[str] | str, min_count: int = 3,
               **options: Any) -> Any:
    """A safe table of counts of `data` by `dims` (anonsql's tables job: primary and secondary cell
    suppression, audited by the attacker's linear program), as an Arrow table for dbt to write;
    `options` are `anonsql.safe_table`'s (margins, measure, contributor, dominance, ...). The
    private audit anonsql keeps beside a safe table is not kept: the model is the public table."""
    from .api import safe_table as tables
    from .tables.job import PRIVATE_AUDIT

    options = _own(options)
    return _run("safe_table", dbt, session, data, lambda engine, table, out: tables(
        engine, table, dims, min_count=min_count, out=out, replace=True, **options), beside=(PRIVATE_AUDIT,))


def _own(options: dict[str, Any]) -> dict[str, Any]:
    """The job's options: where it writes is the helper's to say."""
    taken = sorted({"out", "replace", "in_place"} & set(options))
    if taken:
        raise AnonsqlError(f"anonsql.dbt: the model is the output; drop {', '.join(taken)}")
    return options


def _run(helper: str, dbt: Any, session: Any, data: Any, job: Callable[[Any, str, str], Report],
         beside: tuple[str, ...] = ()) -> Any:
    """The job on a cursor of dbt's DuckDB connection: input written, job run, output read, the working
    tables dropped (the input, the output and the tables the job writes beside it, by suffix)."""
    query = getattr(data, "sql_query", None)
    if not callable(query) or not callable(getattr(session, "cursor", None)):
        raise AnonsqlError(f"anonsql.dbt.{helper} runs in dbt-duckdb's Python models (a DuckDB connection and "
                           f"relation, e.g. dbt.ref('name')), not on {type(session).__name__} and "
                           f"{type(data).__name__}: dbt-spark runs Python models only on Databricks clusters")
    this = dbt.this
    private = TableName(f"{this.identifier}__anonsql_private_input", this.schema)
    out = TableName(f"{this.identifier}__anonsql_output", this.schema)
    working = (private, out, *(TableName(out.name + suffix, out.schema) for suffix in beside))
    engine = connect(session.cursor())  # a cursor: a connection of its own to dbt's database
    try:
        _drop(engine, working)
        source = exp.Subquery(this=sqlglot.parse_one(query(), read=engine.dialect),
                              alias=exp.TableAlias(this=ident("input")))
        engine.execute(*render("dbt/model_input", engine.dialect, out=private.expr, query=source))
        report = job(engine, _quoted(private), _quoted(out))
        if not report.ok:  # a job raises when its check fails; a report without ok is not published either
            raise AnonsqlError(f"anonsql {helper} did not hold on {this.identifier}: " + "; ".join(report.lines()))
        return engine.fetch_arrow(*render("dbt/model_output", engine.dialect, tbl=out.expr))
    finally:
        _drop(engine, working)
        engine.close()


def _drop(engine: Engine, tables: tuple[TableName, ...]) -> None:
    for table in tables:
        engine.execute(*render("dbt/drop_working_table", engine.dialect, tbl=table.expr))


def _quoted(name: TableName) -> str:
    """`name` spelled as anonsql reads a table name (TableName.parse): "schema"."name"."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in (name.schema or "main", name.name))
