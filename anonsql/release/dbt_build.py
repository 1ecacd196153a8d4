"""`anonsql dbt build`: dbt's build in this process, the dbt_anonsql materializations' jobs run by
anonsql on adapters where dbt runs no Python (dbt-postgres).

There the materialization writes the model's SQL to `<model>__anonsql_private_input`, commits, and
logs one request (`anonsql-dbt-job {json}`: the function, the input and output names, the job's
options; never a value or a credential). dbt fires its events' callbacks synchronously, in the
thread that runs the model, so the job below is done (or has failed, raising into the model) before
the materialization goes on. The job connects with the credentials of the profile dbt loaded; the
private input is dropped whatever the outcome.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..catalog import drop_table
from ..engine import connect
from ..errors import AnonsqlError
from ..kanon import entry as kanon
from ..report import Report
from ..sql.names import TableName
from ..tables import entry as tables

#: The prefix of a materialization's request in dbt's log (integrations/dbt_anonsql/macros/materializations).
REQUEST = "anonsql-dbt-job "
#: Set while `anonsql dbt build` runs dbt: the materializations log their request instead of refusing.
FLAG = "ANONSQL_DBT_BUILD"


@dataclass(kw_only=True)
class DbtBuildReport(Report):
    """What dbt built and which models anonsql's jobs wrote."""

    PROVES: ClassVar[bool] = False
    #: A database error dbt passes on may quote a cell's value.
    PRIVATE: ClassVar[tuple[str, ...]] = ("messages",)

    dbt_args: list[str] = field(default_factory=list)
    success: bool = False
    nodes: dict[str, str] = field(default_factory=dict)
    #: dbt's message of each node that errored or failed (names and counts, as dbt logs them).
    messages: dict[str, str] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        failed = sorted(n for n, s in self.nodes.items() if s not in ("success", "pass"))
        return [f"dbt build: {len(self.nodes)} nodes, {'success' if self.success else 'failed'}; anonsql wrote "
                f"{len(self.jobs)} models" + (f" ({', '.join(self.jobs)})" if self.jobs else "")
                + (f"; not passed: {', '.join(failed)}" if failed else "")] + [
            f"  {name}: {message.splitlines()[0] if message else ''}" for name, message in self.messages.items()]


def database_url(job: dict[str, Any], credentials: Any) -> str:
    """anonsql's `db` for a request: the URL scheme the package's macro gives for the adapter
    (anonsql_database_url_scheme) and dbt's credentials (held in memory only, never reported)."""
    if not job.get("scheme"):
        raise AnonsqlError(f"anonsql dbt build runs the dbt_anonsql jobs on dbt-postgres, not dbt-{job['adapter']}")
    quote = urllib.parse.quote
    url = (f"{job['scheme']}://{quote(credentials.user, safe='')}:{quote(credentials.password or '', safe='')}"
           f"@{credentials.host}:{credentials.port}/{quote(credentials.database, safe='')}")
    return url + (f"?sslmode={quote(credentials.sslmode)}" if getattr(credentials, "sslmode", None) else "")


def run_job(job: dict[str, Any], url: str) -> str:
    """One materialization's request: the anonsql job on the model's database; the private input
    dropped whatever happens; an error when the job's guarantee does not hold. The model's name."""
    jobs: dict[str, Callable[..., Report]] = {"k_anonymize": kanon.k_anonymize, "safe_table": tables.safe_table}
    run = jobs[job["function"]]
    with connect(url) as engine:
        try:
            report = run(engine, job["input"], **job["kwargs"])
        finally:
            drop_table(engine, TableName.parse(job["input"]).expr)
    if not report.ok:
        raise AnonsqlError(f"anonsql {job['function']} did not hold on {job['kwargs']['out']}: "
                           + "; ".join(report.lines()))
    return str(job["kwargs"]["out"])


def build(dbt_args: Sequence[str]) -> DbtBuildReport:
    """`dbt build DBT_ARGS` in this process, each dbt_anonsql request run as it is logged."""
    try:
        from dbt.adapters.factory import get_adapter_by_type
        from dbt.cli.main import dbtRunner
    except ImportError as e:
        raise AnonsqlError("anonsql dbt build needs dbt: pip install 'anonsql[dbt]'") from e
    report = DbtBuildReport(table="", dbt_args=list(dbt_args))

    def on_event(event: Any) -> None:
        if event.info.name in ("JinjaLogDebug", "JinjaLogInfo") and event.data.msg.startswith(REQUEST):
            job = json.loads(event.data.msg[len(REQUEST):])
            report.jobs.append(run_job(job, database_url(job, get_adapter_by_type(job["adapter"]).config.credentials)))

    before = os.environ.get(FLAG)
    os.environ[FLAG] = "1"
    try:
        result = dbtRunner(callbacks=[on_event]).invoke(["build", *dbt_args])
    finally:
        if before is None:
            del os.environ[FLAG]
        else:
            os.environ[FLAG] = before
    if result.exception is not None:
        raise AnonsqlError(f"dbt build did not run: {str(result.exception).splitlines()[0]}")
    report.success = bool(result.success)
    for r in getattr(result.result, "results", None) or []:
        report.nodes[r.node.name] = str(r.status)
        if str(r.status) in ("error", "fail"):
            report.messages[r.node.name] = str(r.message)
    return report
