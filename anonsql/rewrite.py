"""Shared by every writing job: the reviewable SQL script of a run (`--emit-sql`).

A script says what the run does, then holds the statements in one transaction (the
decisions as a readable relation, one row per line, under the real column names) and ends
with the verification queries a reviewer can run on the result. Values are literals here,
because a person reads and runs it; the statements a job executes itself stay parameterized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import sql
from .sql import exp  # sqlglot.expressions, imported on first use

#: The head of a Spark script: what it is for, since it cannot run as is.
SPARK_NOTE = ("-- SPARK: a script to REVIEW, not to run as is: Spark SQL has no transactions and",
              "-- its temporary views take no INSERT. The job runs the same queries itself (decisions loaded",
              "-- as a DataFrame), writing under a staging name that gets the output name only after",
              "-- verification.")


@dataclass
class Script:
    """The statements of one run, in order, with the comments that explain them."""

    dialect: str
    title: str
    warnings: list[str] = field(default_factory=list)
    statements: list[tuple[str, str]] = field(default_factory=list)
    checks: list[tuple[str, str]] = field(default_factory=list)

    def step(self, comment: str, statement: str) -> None:
        """A statement of the run (rendered with `sql.readable`)."""
        self.statements.append((comment, statement))

    def rows(self, comment: str, table: exp.Table, columns: Sequence[str],
             rows: Sequence[Sequence[Any]]) -> None:
        """The decisions relation as one INSERT, a row per line, under the real column names."""
        if not rows:
            self.statements.append((comment + " (none: nothing changes)", ""))
            return
        cols = ", ".join(sql.ident(c).sql(self.dialect) for c in columns)
        lines = ",\n".join(
            "  " + exp.Tuple(expressions=[exp.convert(sql.plain(v)) for v in row]).sql(self.dialect) for row in rows)
        self.statements.append((comment, f"INSERT INTO {table.sql(self.dialect)} ({cols}) VALUES\n{lines}"))

    def check(self, comment: str, query: str) -> None:
        """A verification query a reviewer runs after the script (the job runs the same check)."""
        self.checks.append((comment, query))

    def text(self) -> str:
        if self.dialect == "spark":  # no transactions, and temporary views take no INSERT
            return self._text([*SPARK_NOTE, ""], [])
        return self._text(["BEGIN;", ""], ["COMMIT;", ""])

    def _text(self, begin: list[str], commit: list[str]) -> str:
        parts = [f"-- {self.title}"] + [f"-- {w}" for w in self.warnings] + [""] + begin
        for comment, statement in self.statements:
            parts.append(f"-- {comment}")
            if statement:
                parts.append(statement.rstrip(";") + ";")
            parts.append("")
        parts += commit
        if self.checks:
            parts += ["-- Verification: run these on the result; each says what it must return.", ""]
            for comment, query in self.checks:
                parts += [f"-- {comment}", query.rstrip(";") + ";", ""]
        return "\n".join(parts)
