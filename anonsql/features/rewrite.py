"""Decisions → SQL for feature selection: the binarized table, the published projection, the
long input's staging pivot, and the reviewable `--emit-sql` script of a run.

Each statement is a `Step` (an sql/ file and its bindings) so that the same decisions are
executed by the job and printed, pretty and with literal values, in the script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..errors import AnonsqlError
from ..rewrite import Script
from . import verify
from .spec import BinaryRule
from .stats import NUMERIC_KINDS, balanced_sum


@dataclass(frozen=True)
class Step:
    """One statement of a run: what it does, its sql/ file and the bindings."""

    comment: str
    name: str
    bindings: dict[str, Any]

    def run(self, engine: Engine) -> None:
        engine.execute(*sql.render(self.name, engine.dialect, **self.bindings))

    def readable(self, dialect: str) -> str:
        return sql.readable(self.name, dialect, **self.bindings)


def replace_step(engine: Engine, existing: Table) -> Step:
    """Drop the view or table that --replace overwrites (sql/features/object_type.sql tells which)."""
    text, params = sql.render("features/object_type", engine.dialect, schema_name=existing.schema,
                              table_name=existing.name)
    is_view = engine.fetch_all(text, params)[0][0] == "VIEW"
    return Step(f"replace the existing {'view' if is_view else 'table'} {existing}",
                "common/drop_view" if is_view else "common/drop_table", dict(tbl=existing.expr))


def publish_step(source: Table | sql.TableName, target: sql.TableName, attrs: Sequence[str], class_column: str,
                 materialize: bool) -> Step:
    """The published projection Π_S(D): the selected columns S and the class, as a table or view."""
    kind = "table" if materialize else "view"
    chosen = ", ".join(attrs) if attrs else "(none)"
    return Step(f"publish Π_S(D) as a {kind}: S = {chosen}, then the class {class_column}",
                "common/create_table_as" if materialize else "features/create_view",
                dict(out=target.expr, src=source.expr, item=sql.columns([*attrs, class_column])))


def _rule_expr(rule: BinaryRule, col: str) -> exp.Expr:
    """The 0/1 expression of one rule (values inlined: PostgreSQL's CREATE TABLE AS binds none)."""
    if rule.is_range:
        return sql.fragment("features/binarize_range", col=sql.column(col),
                            lower=exp.Null() if rule.lower is None else exp.convert(rule.lower),
                            upper=exp.Null() if rule.upper is None else exp.convert(rule.upper))
    terms = [sql.fragment("features/binarize_equals", col=sql.column(col), value=exp.convert(v)) for v in rule.values]
    return balanced_sum(terms)  # distinct values: at most one term is 1


def binarize_step(source: Table, target: sql.TableName, rules: Sequence[BinaryRule], kept: Sequence[str]) -> Step:
    """CREATE TABLE target AS the kept columns and one 0/1 column per rule (Zhang et al. Sec. 5.1)."""
    kinds = {c.name: c.kind for c in source.columns}
    items: list[exp.Expr] = list(sql.columns(kept))
    for rule in rules:
        col = source.column(rule.column).name
        if rule.is_range and kinds[col] not in NUMERIC_KINDS:
            raise AnonsqlError(f"'{rule.name}': interval on column '{col}' of type {kinds[col]} (needs numbers)")
        items.append(exp.alias_(_rule_expr(rule, col), sql.ident(rule.name)))
    return Step(f"{len(rules)} derived 0/1 columns of {source}" + (f", with {', '.join(kept)} copied" if kept else ""),
                "common/create_table_as", dict(out=target.expr, src=source.expr, item=items))


def pivot_steps(rows: Table, items: Table, staging: sql.TableName, key: str, item_key: str, item_column: str,
                class_column: str, values: Sequence[Any]) -> tuple[Step, Step]:
    """The long (key, item) input as a wide 0/1 staging table, one column per item, and its drop."""
    flags = [exp.alias_(sql.fragment("features/item_flag", item=sql.column(item_column, "i"), value=exp.convert(v)),
                        sql.ident(str(v))) for v in values]
    create = Step(f"staging: {items} pivoted to one 0/1 column per item ({len(values)} items)", "features/pivot",
                  dict(out=staging.expr, rows=rows.expr, items=items.expr, key=sql.column(key),
                       ikey=sql.column(item_key), item=[sql.column(class_column, "r"), *flags],
                       group=[sql.column(key, "r"), sql.column(class_column, "r")]))
    return create, Step("drop the staging table", "common/drop_table", dict(tbl=staging.expr))


def _script(dialect: str, title: str, steps: Sequence[Step]) -> Script:
    script = Script(dialect, title)
    for step in steps:
        script.step(step.comment, step.readable(dialect))
    return script


def binarize_script(dialect: str, source: Table, target: sql.TableName, steps: Sequence[Step],
                    names: Sequence[str], rows: int) -> Script:
    """The script of a binarize run, ending with the row-count and density query."""
    script = _script(dialect, f"anonsql binarize: {source} -> {target} (holds the spec, no row values)", steps)
    script.check(f"rows and rows with a 1 per derived column: n must be {rows}",
                 verify.binarized_query(dialect, target, names))
    return script


def features_script(dialect: str, source: str, target: sql.TableName, steps: Sequence[Step], k: int,
                    attrs: Sequence[str], rows: int) -> Script:
    """The script of a features run, ending with the AC >= k query on the published projection."""
    script = _script(dialect, f"anonsql features: {source} -> {target}, {len(attrs)} selected feature(s), "
                              f"k = {k} (holds column names only, no row values)", steps)
    check = (f"k-anonymity by containment: ac (AC(D)) must be >= {k} and n = {rows}" if attrs
             else f"nothing selected: every row contains the empty set, so AC(D) = n, which must be {rows} >= {k}")
    script.check(check, verify.ac_query(dialect, target, attrs))
    return script
