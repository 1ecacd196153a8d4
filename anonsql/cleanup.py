"""`anonsql cleanup`: put right, in every schema, what crashed runs left on an engine without
transactions (Spark): an output finished or restored under its name, stale working tables dropped
(anonsql.catalog.recover_schema). DuckDB and PostgreSQL write in transactions and leave none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, cast

from .catalog import recover_schema
from .engine import Engine
from .engine.base import StagingEngine
from .report import Report


@dataclass(kw_only=True)
class CleanupReport(Report):
    """What `cleanup` did, one line per table it renamed or dropped, and where it looked."""

    PROVES: ClassVar[bool] = False

    schemas: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        looked = f"{len(self.schemas)} schema(s) ({', '.join(self.schemas)})" if self.schemas else "nothing to look at"
        head = [f"cleanup of {self.table}: {len(self.actions)} action(s) in {looked}"]
        return head + [f"  {a}" for a in self.actions]


def cleanup(engine: Engine, where: str) -> CleanupReport:
    """Recover every crashed staged run in every schema of `engine` (`where` names it in the report)."""
    report = CleanupReport(table=where)
    if engine.supports_transactions:
        report.notes.append(f"{engine.dialect} writes in transactions: a failed or killed run leaves no working "
                            "tables, so there is nothing to clean up")
        return report
    staging = cast(StagingEngine, engine)
    with report.timed("cleanup"):
        report.schemas = staging.schemas()
        for schema in report.schemas:
            report.actions += recover_schema(staging, schema)
    return report
