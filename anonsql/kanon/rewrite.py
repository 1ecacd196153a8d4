"""Decisions → SQL: copy the source (unless in place), then ONE joined UPDATE that turns cells NULL.

Executed, the decisions relation is keyed by the group key (one hash join on both engines) and
bulk loaded; in the `--emit-sql` script it spells out each group's original values under the
real column names, so a reviewer can read what is suppressed where.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from .. import sql
from ..engine import Engine
from ..rewrite import Script
from ..stats import QIClassCounts

DECISIONS_TABLE = "anonsql_suppression_decisions"


@dataclass
class SuppressionPlan:
    """Turn cells NULL group by group: rows of group g lose the QIs where `suppress[g]`."""

    source: exp.Table
    out: exp.Table  # == source for an in-place run
    qi: list[str]
    class_column: str
    keys: np.ndarray  # (G,) group keys (sql/common/group_key.sql) of the groups that change
    values: list[list[Any]]  # (G, M+1) their original QI values y and class c, None for ⊥
    suppress: np.ndarray  # (G, M) bool
    rows: np.ndarray  # (G,) N(y, c): the rows of each group
    copy: bool = True
    one_class: bool = False  # no --class: class_column names the constant label of sql/kanon/one_class.sql

    @property
    def flags(self) -> list[str]:
        """The flag column of each QI, `suppress_<qi>`, kept distinct from the table's names."""
        taken = {*self.qi, self.class_column, "group_key"}
        names = []
        for name in self.qi:
            flag = f"suppress_{name}"
            while flag in taken:
                flag = "_" + flag
            taken.add(flag)
            names.append(flag)
        return names

    def _class(self, table: str | None = None) -> exp.Expr:
        """The class of a row: its column, or the one constant label of a run without --class."""
        return sql.fragment("kanon/one_class") if self.one_class else sql.column(self.class_column, table)

    def _bindings(self) -> dict[str, Any]:
        return dict(out=self.out, decisions=sql.TableName(DECISIONS_TABLE).expr, qi=sql.columns(self.qi),
                    flag=[sql.ident(f) for f in self.flags],
                    row_key=sql.group_key([*sql.columns(self.qi, table="t"), self._class("t")]))

    def changes(self) -> pd.DataFrame:
        """The private changes relation (--changes): group key, blanked column, original value, rows."""
        return pd.DataFrame([[key, name, None if value is None else str(value), int(n)]
                             for key, vals, row, n in zip(self.keys.tolist(), self.values, self.suppress, self.rows)
                             for name, value, blank in zip(self.qi, vals, row) if blank],
                            columns=["group_key", "column_name", "original_value", "row_count"])

    def execute(self, engine: Engine, columns: Sequence[str]) -> None:
        """Run the plan on `engine` (the caller holds the transaction); `columns` are the source's.
        Without UPDATE (Spark) the output is ONE CREATE TABLE AS SELECT instead of copy + UPDATE."""
        d, binds = engine.dialect, self._bindings()
        decisions = binds["decisions"]
        if self.copy and engine.supports_update:
            engine.execute(*sql.render("common/copy_table", d, out=self.out, src=self.source))
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))
        engine.execute(*sql.render("kanon/suppression_decisions", d, decisions=decisions, flag=binds["flag"]))
        flag_columns = ["group_key", *self.flags]
        frame = pd.DataFrame([[key, *map(bool, row)] for key, row in zip(self.keys.tolist(), self.suppress)],
                             columns=flag_columns)
        engine.insert_rows(decisions.sql(d), ", ".join(sql.ident(c).sql(d) for c in flag_columns), frame)
        if engine.supports_update:
            engine.execute(*sql.render("kanon/apply_suppression", d, **binds,
                                       decision_key=sql.column("group_key", table="d")))
        else:
            engine.execute(*self._create_suppressed(d, binds, columns))
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))

    def _create_suppressed(self, dialect: str, binds: dict[str, Any], columns: Sequence[str]
                           ) -> tuple[str, dict[str, Any]]:
        """sql/kanon/create_suppressed.sql: the output as a CASE over the source LEFT JOIN the
        decisions, the decisions broadcast on Spark (a hint, set on the tree: templates are DuckDB's)."""
        flag = dict(zip(self.qi, binds["flag"]))
        tree = sql.template("kanon/create_suppressed")
        if dialect == "spark":
            tree.expression.set("hint", exp.Hint(expressions=[  # the SELECT of the CREATE
                exp.JoinHint(this="BROADCAST", expressions=[exp.to_table("d")])]))
        item = [exp.alias_(exp.Case().when(exp.column(flag[c], table="d"), exp.null()).else_(sql.column(c, "t")),
                           sql.ident(c)) if c in flag else sql.column(c, "t") for c in columns]
        return sql.bind(tree, dialect, dict(out=self.out, src=self.source, decisions=binds["decisions"],
                                            row_key=binds["row_key"], item=item))

    def script(self, dialect: str, title: str, warnings: Sequence[str], checks: Sequence[tuple[str, str]], *,
               replace: bool = False, extra: Sequence[tuple[str, str]] = ()) -> str:
        """The same run as a reviewable script for `dialect`, ending with the verification queries;
        `replace` first drops the existing output table (--replace), `extra` (comment, statement)
        steps run after the UPDATE (--drop, --pseudonymize)."""
        binds = self._bindings()
        decisions = binds["decisions"]
        script = Script(dialect, title, list(warnings))
        if replace:
            script.step("drop the old output, replaced by this run (sql/common/drop_table.sql)",
                        sql.readable("common/drop_table", dialect, tbl=self.out))
        if self.copy:
            script.step("copy (sql/common/copy_table.sql)",
                        sql.readable("common/copy_table", dialect, out=self.out, src=self.source))
        script.step("the decisions relation (sql/kanon/readable_decisions.sql)",
                    sql.readable("kanon/readable_decisions", dialect, decisions=decisions, qi=binds["qi"],
                                 cls=exp.alias_(self._class(), sql.ident(self.class_column)) if self.one_class
                                 else sql.column(self.class_column), src=self.source,
                                 flag=[exp.alias_(exp.false(), f) for f in binds["flag"]]))
        script.rows(f"the decisions: {len(self.values):,} groups (y, c) change their pattern", decisions,
                    [*self.qi, self.class_column, *self.flags],
                    [[*vals, *map(bool, row)] for vals, row in zip(self.values, self.suppress)])
        script.step("apply them in one joined UPDATE (sql/kanon/apply_suppression.sql)",
                    sql.readable("kanon/apply_suppression", dialect, **binds, decision_key=sql.group_key(
                        sql.columns([*self.qi, self.class_column], table="d"))))
        script.step("drop the decisions (sql/common/drop_temp_table.sql)",
                    sql.readable("common/drop_temp_table", dialect, tbl=decisions))
        for comment, statement in extra:
            script.step(comment, statement)
        for comment, query in checks:
            script.check(comment, query)
        return script.text()


def suppression_plan(source: exp.Table, out: exp.Table, groups: QIClassCounts, class_column: str,
                     final_codes: np.ndarray, *, copy: bool, one_class: bool = False) -> SuppressionPlan:
    """The groups whose QI pattern changes, and for each the cells newly turned ⊥."""
    suppress = (final_codes < 0) & (groups.codes >= 0)
    changed = np.flatnonzero(suppress.any(axis=1))
    values = [[sql.plain(groups.values[j][code]) if code >= 0 else None for j, code in enumerate(groups.codes[g])]
              + [sql.plain(groups.class_values[groups.classes[g]])] for g in changed]
    return SuppressionPlan(source, out, list(groups.qi), class_column, groups.keys[changed], values,
                           suppress[changed], groups.counts[changed], copy, one_class)
