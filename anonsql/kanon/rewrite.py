"""Decisions → SQL: the set-based statements that write an algorithm's result back.

A run is a list of steps: SQL statements, plus the decisions relation, which is bulk
loaded when executing and written as INSERT ... VALUES when emitting a script for review.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from sqlglot import exp

from . import sql
from .engine import Engine

DECISIONS_TABLE = "anonsql_suppression_decisions"


@dataclass
class SuppressionPlan:
    """Turn cells NULL group by group: rows of group `keys[g]` lose the QIs where `suppress[g]`."""

    source: exp.Table
    out: exp.Table  # == source for an in-place run
    qi: list[str]
    class_column: str
    keys: np.ndarray  # (G,) group keys of the groups whose pattern changes
    suppress: np.ndarray  # (G, M) bool
    copy: bool = True

    def _flags(self) -> list[exp.Identifier]:
        return [sql.ident(f"s_{j}") for j in range(len(self.qi))]

    def _render(self, engine: Engine) -> dict[str, tuple[str, dict]]:
        decisions = sql.TableName(DECISIONS_TABLE).expr
        return {
            "copy": sql.render("copy_table", engine.dialect, out=self.out, src=self.source),
            "create": sql.render("suppression_decisions", engine.dialect, decisions=decisions, flag=self._flags()),
            "apply": sql.render(
                "apply_suppression", engine.dialect, out=self.out, decisions=decisions,
                qi=[sql.ident(c) for c in self.qi], flag=self._flags(),
                row_key=sql.group_key(sql.columns([*self.qi, self.class_column], table="t")),
            ),
            "drop": sql.render("drop_temp_table", engine.dialect, tbl=decisions),
        }

    def _rows(self) -> list[list]:
        return [[key, *map(bool, flags)] for key, flags in zip(self.keys.tolist(), self.suppress)]

    def execute(self, engine: Engine) -> None:
        """Run the plan on `engine` (the caller holds the transaction)."""
        steps = self._render(engine)
        if self.copy:
            engine.execute(*steps["copy"])
        engine.execute(*steps["drop"])
        engine.execute(*steps["create"])
        columns = ["group_key"] + [f"s_{j}" for j in range(len(self.qi))]
        frame = pd.DataFrame(self._rows(), columns=columns)
        cols_sql = ", ".join(sql.ident(c).sql(engine.dialect) for c in columns)
        engine.insert_rows(sql.TableName(DECISIONS_TABLE).expr.sql(engine.dialect), cols_sql, frame)
        engine.execute(*steps["apply"])
        engine.execute(*steps["drop"])

    def script(self, engine: Engine) -> str:
        """The same run as a reviewable SQL script for `engine`'s dialect (one transaction)."""
        steps = self._render(engine)
        rows = self._rows()
        insert = "-- no group changes its pattern: no decisions to insert"
        if rows:
            values = exp.values([tuple(exp.convert(v) for v in row) for row in rows])
            insert = exp.insert(values, sql.TableName(DECISIONS_TABLE).expr).sql(engine.dialect) + ";"
        parts = ["BEGIN;"]
        if self.copy:
            parts.append(steps["copy"][0] + ";")
        parts += [steps["create"][0] + ";", insert, steps["apply"][0] + ";", steps["drop"][0] + ";", "COMMIT;"]
        return "\n\n".join(parts) + "\n"


def changed_groups(keys: np.ndarray, codes: np.ndarray, final_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The groups whose QI pattern changes, and for each the cells newly turned ⊥."""
    suppress = (final_codes < 0) & (codes >= 0)
    changed = suppress.any(axis=1)
    return keys[changed], suppress[changed]


def suppression_plan(source: exp.Table, out: exp.Table, qi: Sequence[str], class_column: str,
                     keys: np.ndarray, codes: np.ndarray, final_codes: np.ndarray, *, copy: bool) -> SuppressionPlan:
    changed_keys, suppress = changed_groups(keys, codes, final_codes)
    return SuppressionPlan(source, out, list(qi), class_column, changed_keys, suppress, copy)
