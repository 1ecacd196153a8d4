"""Decisions → SQL: ONE statement that turns cells NULL, a CREATE TABLE AS SELECT for a new
table or an UPDATE in place.

The decisions are integer codes of the value dictionaries of the statistics
(anonsql.stats.qi_class_counts, temporary tables built once from the grouped relation), bulk
loaded. Rows find their group (y, c) by typed SQL equality, so values that group together match
together (numeric 1.0 and 1.00, -0.0 and 0.0, NaN, intervals), with no per-row text key and no
limit on the number of columns: on DuckDB and Spark each row is coded by the dictionaries and
joined by codes; on PostgreSQL each code of the small decisions is turned back into its value
(sql/kanon/decision_values.sql) and the rows join on their own values, one hash join with no
per-row dictionary lookup, save in a column where a decision names ⊥ (coded there: NULL is
never equal to NULL).
In the `--emit-sql` script the decisions spell out each group's original values under the real
column names, so a reviewer can read what is suppressed where, and the script codes them with
the same dictionaries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import identifiers, sql
from ..engine import Engine, engine_class
from ..errors import AnonsqlError
from ..sql import exp  # sqlglot.expressions, imported on first use
from ..stats import NULL_CODE, QIClassCounts, analyze, dictionary_codes, scratch_table

DECISIONS_TABLE = "anonsql_suppression_decisions"  # the codes; in a script, the readable values
CODES_TABLE = "anonsql_suppression_codes"  # a script's decisions, coded


@dataclass
class SuppressionPlan:
    """Turn cells NULL group by group: rows of group g lose the QIs where `suppress[g]`."""

    source: exp.Table
    out: exp.Table  # == source for an in-place run
    qi: list[str]
    class_column: str
    codes: np.ndarray  # (G, M+1) dictionary codes of the changed groups: y_1..y_m, then c (-1 = ⊥)
    labels: list[np.ndarray]  # per QI, then the class: code -> the value's exact text
    suppress: np.ndarray  # (G, M) bool
    rows: np.ndarray  # (G,) N(y, c): the rows of each group
    dictionaries: list[exp.Table]  # the value dictionaries of the statistics, QIs then class
    columns: list[str]  # the source's columns, in order
    copy: bool = True
    one_class: bool = False  # no --class: class_column names the constant label of sql/kanon/one_class.sql
    drop: Sequence[str] = ()  # a copy leaves these columns out (--drop)
    pseudonymize: Sequence[str] = ()  # a copy writes their keyed pseudonyms (--pseudonymize)
    follows: Mapping[str, str] = field(default_factory=dict)  # a copy's column -> the QI whose ⊥ it takes too

    @property
    def flags(self) -> list[str]:
        """The flag column of each QI in a script, `suppress_<qi>`, kept distinct from the table's names."""
        taken = {*self.qi, self.class_column}
        names = []
        for name in self.qi:
            flag = f"suppress_{name}"
            while flag in taken:
                flag = "_" + flag
            taken.add(flag)
            names.append(flag)
        return names

    def _flag_names(self) -> list[str]:
        return [f"s_{j}" for j in range(len(self.qi))]

    def values(self) -> list[list[Any]]:
        """(G, M+1) the changed groups' original QI values y and class c as text, None for ⊥: built
        only for a script or --changes (a plain run needs the codes alone)."""
        texts = [np.append(labels, [None])[codes] for labels, codes in zip(self.labels, self.codes.T)]  # -1 -> None
        return np.column_stack(texts).tolist()

    def changes(self) -> dict[str, np.ndarray]:
        """The private changes relation (--changes, sql/kanon/create_changes.sql): per blanked cell
        pattern the group's number and original values, the column, its value, the rows."""
        names = [*self.qi, self.class_column]
        rows = [(g, json.dumps(dict(zip(names, vals)), ensure_ascii=False), name,
                 None if value is None else str(value), int(n))
                for g, (vals, row, n) in enumerate(zip(self.values(), self.suppress, self.rows))
                for name, value, blank in zip(self.qi, vals, row) if blank]
        columns = {"group_id": np.int64, "group_values": object, "column_name": object, "original_value": object,
                   "row_count": np.int64}
        return {name: np.fromiter((r[i] for r in rows), dtype=dtype, count=len(rows))
                for i, (name, dtype) in enumerate(columns.items())}

    def execute(self, engine: Engine, key: identifiers.Key | None = None) -> None:
        """Run the plan on `engine` (the caller holds the transaction); `key` for --pseudonymize.
        A copy is ONE CREATE TABLE AS SELECT, in place ONE UPDATE."""
        d = engine.dialect
        decisions = scratch_table(DECISIONS_TABLE, d)
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))
        engine.execute(*sql.render("kanon/suppression_decisions", d, decisions=decisions,
                                   code=[sql.ident(c) for c in _code_names(self.qi)],
                                   flag=[sql.ident(f) for f in self._flag_names()]))
        frame = {**{name: self.codes[:, j].astype(np.int64) for j, name in enumerate(_code_names(self.qi))},
                 **{name: self.suppress[:, j].astype(bool) for j, name in enumerate(self._flag_names())}}
        engine.insert_rows(decisions, list(frame), frame)
        if engine.plans_from_statistics:
            engine.fetch_all(*sql.render("kanon/decisions_sample", d))
            engine.fetch_all(*sql.render("kanon/hash_join", d))
        analyze(engine, decisions)
        if self.pseudonymize and key is None:
            raise AnonsqlError("--pseudonymize needs a key")
        pads = dict(ipad=key.ipad, opad=key.opad) if key is not None else {}
        with engine.joins_as_written():  # the rows probed against each dictionary, then the decisions
            engine.execute(*self._apply(d, decisions, self._flag_names(), pads))
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=decisions))

    def _apply(self, dialect: str, decisions: exp.Table, flags: list[str], pads: dict[str, Any], *,
               inline: bool = False) -> tuple[str, dict[str, Any]]:
        """The write-back statement (`_write_back`) of this plan, bound with the values `pads`, or
        with `inline` pretty-printed with its values written out, for a script. `flags` name the
        decisions' flag columns; a copy also drops and pseudonymizes (`pads`: the padded keys of
        identifiers.Key, or placeholders in a script)."""
        # PostgreSQL matches a row by value (Engine.matches_by_value: each dictionary lookup there is a
        # hash join of every row, ~150 ms per 10^6 rows and column), save in a column where some
        # decision names ⊥ (code -1: NULL = NULL is never true); in a column matched by value a NULL or
        # a value the statistics never saw matches no decision, as its code (-1, -2) would not. DuckDB
        # codes the rows faster than it hashes their values; Spark broadcasts the dictionaries.
        traits = engine_class(dialect)
        by_code = [j for j in range(len(self.qi) + 1)
                   if not traits.matches_by_value or (self.codes[:, j] == NULL_CODE).any()]
        if not self.copy and not (traits.supports_update and traits.row_id):
            raise AnonsqlError(f"--in-place is not available on {dialect}")
        parts: dict[str, Any] = dict(
            sql_dialect=dialect, broadcast=traits.broadcast_hints, row_id=traits.row_id,
            copy=self.copy, source=self.source, out=self.out, qi=self.qi,
            class_column=self.class_column, one_class=self.one_class, columns=self.columns, drop=list(self.drop),
            pseudonymize=list(self.pseudonymize), dictionaries=self.dictionaries, decisions=decisions, flags=flags,
            by_code=by_code, follows=dict(self.follows))
        tree, binds = _write_back(**parts)
        return sql.bind(tree, dialect, {**pads, **binds}, inline=inline)

    def script(self, dialect: str, title: str, warnings: Sequence[str], checks: Sequence[tuple[str, str]], *,
               replace: bool = False, extra: Sequence[tuple[str, str]] = (),
               before: Sequence[tuple[str, str]] = ()) -> str:
        """The same run as a reviewable script for `dialect`, ending with the verification queries;
        `replace` first drops the existing output table (--replace), `before` (comment, statement)
        steps come first (the recoded view of --hierarchy), `extra` ones run after the write-back
        (--drop, --pseudonymize)."""
        from ..rewrite import Script  # only for --emit-sql: a run without it never loads the script writer

        readable, codes = scratch_table(DECISIONS_TABLE, dialect), scratch_table(CODES_TABLE, dialect)
        script = Script(dialect, title, list(warnings))
        if replace:
            script.step("drop the old output, replaced by this run (sql/common/drop_table.sql)",
                        sql.readable("common/drop_table", dialect, tbl=self.out))
        for comment, statement in before:
            script.step(comment, statement)
        values = _row_values(self.qi, self.class_column, self.one_class, "")
        for name, value, dictionary in zip([*self.qi, self.class_column], values, self.dictionaries):
            script.step(f"the value dictionary of {name}: value -> code (sql/common/value_dictionary.sql)",
                        sql.readable("common/value_dictionary", dialect, dict=dictionary, tbl=self.source,
                                     col=value))
        cls = exp.alias_(values[-1], sql.ident(self.class_column)) if self.one_class else values[-1]
        script.step("the decisions relation (sql/kanon/readable_decisions.sql)",
                    sql.readable("kanon/readable_decisions", dialect, decisions=readable, qi=sql.columns(self.qi),
                                 cls=cls, src=self.source,
                                 flag=[exp.alias_(exp.false(), sql.ident(f)) for f in self.flags]))
        script.rows(f"the decisions: {len(self.codes):,} groups (y, c) change their pattern", readable,
                    [*self.qi, self.class_column, *self.flags],
                    [[*vals, *map(bool, row)] for vals, row in zip(self.values(), self.suppress)])
        tree = sql.template("kanon/code_decisions")
        coded = dictionary_codes(tree.expression, sql.columns([*self.qi, self.class_column], table="r"),
                                 self.dictionaries)
        script.step("the decisions coded like the rows (sql/kanon/code_decisions.sql)",
                    sql.bind(tree, dialect, dict(codes=codes, decisions=readable, code=coded,
                                                 flag=sql.columns(self.flags, table="r")), inline=True)[0])
        how = ("the output in one CREATE TABLE AS SELECT (sql/kanon/create_suppressed.sql)" if self.copy
               else "apply them in one joined UPDATE (sql/kanon/apply_suppression.sql)")
        if self.copy and (self.drop or self.pseudonymize):
            how += (": direct identifiers dropped or given keyed pseudonyms HMAC-SHA256(K, v) there; the key is NOT "
                    "in this script: bind $ipad and $opad to K xor 0x36.. and K xor 0x5c.." if self.pseudonymize
                    else ": direct identifiers left out")
        holder = dict(ipad=exp.Placeholder(this="ipad"), opad=exp.Placeholder(this="opad")) if self.pseudonymize else {}
        script.step(how, self._apply(dialect, codes, self.flags, holder, inline=True)[0])
        for table in (readable, codes, *self.dictionaries):
            script.step("drop a working table (sql/common/drop_temp_table.sql)",
                        sql.readable("common/drop_temp_table", dialect, tbl=table))
        for comment, statement in extra:
            script.step(comment, statement)
        for comment, query in checks:
            script.check(comment, query)
        return script.text()


def _class_of(class_column: str, one_class: bool, table: str | None = None) -> exp.Expr:
    """The class of a row: its column, or the one constant label of a run without --class."""
    return sql.fragment("kanon/one_class") if one_class else sql.column(class_column, table)


def _row_values(qi: Sequence[str], class_column: str, one_class: bool, table: str) -> list[exp.Expr]:
    """The coded columns of a row: its QIs, then its class."""
    return [*sql.columns(qi, table=table), _class_of(class_column, one_class, table)]


def _code_names(qi: Sequence[str]) -> list[str]:
    return [f"y_{j}" for j in range(len(qi) + 1)]


def _write_back(*, sql_dialect: str, broadcast: bool, row_id: str | None,
                copy: bool, source: exp.Table, out: exp.Table, qi: list[str], class_column: str,
                one_class: bool, columns: list[str], drop: list[str], pseudonymize: list[str],
                dictionaries: list[exp.Table], decisions: exp.Table, flags: list[str], by_code: list[int],
                follows: Mapping[str, str]) -> tuple[exp.Expr, dict[str, Any]]:
    """The write-back statement as a tree and its bindings (SuppressionPlan._apply): sql/kanon/
    create_suppressed.sql for a copy (the decisions and dictionaries broadcast with `broadcast`
    (Engine.broadcast_hints): a hint, set on the tree, templates being DuckDB's),
    sql/kanon/apply_suppression.sql in place, rows addressed by the engine's `row_id`. A row
    is matched to its decision by the dictionary code of each column in `by_code`, by value in
    the others (the decisions' codes turned into values: sql/kanon/decision_values.sql). A copy's
    column in `follows` is NULL where its QI is (a generalized QI's bound columns)."""
    values, names = _row_values(qi, class_column, one_class, "t"), _code_names(qi)
    by_value = [j for j in range(len(values)) if j not in by_code]
    if copy:
        tree = sql.template("kanon/create_suppressed")
        query = tree.expression  # the SELECT of the CREATE
        if broadcast:
            query.set("hint", exp.Hint(expressions=[exp.JoinHint(this="BROADCAST", expressions=[
                exp.to_table(a) for a in ["x", *(f"d_{i}" for i in range(len(by_code)))]])]))
        flag = dict(zip(qi, flags))
        flag.update({c: flag[q] for c, q in follows.items()})
        item = [exp.alias_(exp.Case().when(exp.column(flag[c], table="x"), exp.null()).else_(sql.column(c, "t")),
                           sql.ident(c)) if c in flag
                else exp.alias_(identifiers.pseudonym(sql_dialect, sql.column(c, "t")), sql.ident(c))
                if c in pseudonymize else sql.column(c, "t") for c in columns if c not in drop]
        binds: dict[str, Any] = dict(out=out, src=source, item=item)
    else:
        tree = sql.template("kanon/apply_suppression")
        query = next(tree.find_all(exp.Subquery)).this  # the changed rows c
        binds = dict(out=out, qi=sql.columns(qi), flag=[sql.ident(f) for f in flags],
                     row_id=sql.fragment("kanon/row_id", row_id=sql.column(str(row_id))))
    own = query.args.get("joins") or []  # the template's join of the decisions goes after the dictionaries
    query.set("joins", [])
    codes = dictionary_codes(query, [values[j] for j in by_code], [dictionaries[j] for j in by_code])
    query.set("joins", [*query.args["joins"], *own])
    if by_value:  # the decisions as sql/kanon/decision_values.sql: their codes and those columns' values
        decided = sql.template("kanon/decision_values")
        for j in by_value:
            alias = f"e_{j}"
            decided.append("joins", exp.Join(this=exp.alias_(dictionaries[j], alias, table=True),
                                             side="LEFT", on=exp.EQ(this=exp.column("code", alias),
                                                                    expression=exp.column(names[j], "x"))))
        own[0].set("this", exp.Subquery(this=decided, alias=exp.TableAlias(this=exp.to_identifier("x"))))
        binds["value"] = [exp.alias_(exp.column("value", f"e_{j}"), f"v_{j}") for j in by_value]
    match = exp.and_(*(exp.EQ(this=code, expression=exp.column(names[j], "x")) for code, j in zip(codes, by_code)),
                     *(exp.EQ(this=values[j].copy(), expression=exp.column(f"v_{j}", "x")) for j in by_value))
    return tree, dict(binds, decisions=decisions, match=match)


def suppression_plan(source: exp.Table, out: exp.Table, groups: QIClassCounts, class_column: str,
                     final_codes: np.ndarray, columns: Sequence[str], *, copy: bool, one_class: bool = False,
                     drop: Sequence[str] = (), pseudonymize: Sequence[str] = (),
                     follows: Mapping[str, str] | None = None) -> SuppressionPlan:
    """The groups whose QI pattern changes, and for each the cells newly turned ⊥ (and in a copy
    the columns that `follow` a QI's ⊥)."""
    suppress = (final_codes < 0) & (groups.codes >= 0)
    changed = np.flatnonzero(suppress.any(axis=1))
    codes = np.column_stack([groups.codes[changed], groups.classes[changed]])
    return SuppressionPlan(source, out, list(groups.qi), class_column, codes, [*groups.values, groups.class_values],
                           suppress[changed],
                           groups.counts[changed], groups.dictionaries, list(columns), copy, one_class, drop,
                           pseudonymize, dict(follows or {}))
