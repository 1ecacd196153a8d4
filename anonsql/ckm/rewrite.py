"""The CKM decisions as SQL: the ptable and the spec written as small public tables, then the
published table by ONE statement (sql/ckm/publish.sql, publish_sum.sql for a magnitude table):
counts and cell keys of every grouping set (sql/ckm/cells.sql, cells_sum.sql), a range join to
the stored ptable, the perturbed counts (and totals). `script` writes the same run for review
(--emit-sql): the ptable and spec rows spelled out, the one statement, a reviewer's check; the
HMAC's padded keys stay placeholders there, so the secret never reaches a file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..rewrite import Script
from ..tables.spec import Spec
from ..tables.stats import sets_expr, source_expr
from .keys import RecordKeys
from .ptable import Ptable

#: The published table's own columns, after the dimensions' labels (a magnitude table adds `frequency`).
PUBLISHED = ["grouping_id", "value", "frequency"]
#: How a magnitude cell's noise is scaled: the sum of its largest contributions, or its mean one.
SCALES = ("top", "mean")
#: The parameters that hold the secret (the HMAC's padded keys): never inlined into a script.
KEY_PARAMS = ("ipad", "opad")


@dataclass(frozen=True)
class Magnitude:
    """A magnitude table's noise: m * s_c * v, s_c the sum of the `top_k` largest contributions of
    cell c (scale 'top', cellKey's top_contr) or its mean contribution (scale 'mean')."""

    top_k: int = 1
    scale: str = "top"
    m: float = 0.05

    def bindings(self) -> dict[str, Any]:
        return dict(top_k=self.top_k, by_mean=self.scale == "mean", m=self.m)


def labels(dims: Sequence[str]) -> list[exp.Expr]:
    """Each dimension's label in a grouping-set query ('Total' where summed: sql/tables/label.sql)."""
    return [exp.alias_(sql.fragment("tables/label", dim=sql.column(d)), sql.ident(d)) for d in dims]


def cell_bindings(dialect: str, source: Table, spec: Spec, keys: RecordKeys,
                  magnitude: Magnitude | None = None, *, leaves: bool = False) -> dict[str, Any]:
    """What the publishing and recount statements share: the rows with their record keys, grouped
    by the spec's grouping sets (a magnitude table's also by contributor: --contributor, else the
    record key's unit). A dimension with a taxonomy (--hierarchy) is in every set, its rows joined
    to every node above their value (anonsql.tables.stats.source_expr, the suppression tables'
    rows), so each node's cell sums the counts and record keys of its leaves; with `leaves` the
    rows stay the source's (the verification's leaf cells, rolled up apart from SQL)."""
    cols = sql.columns(spec.dims)
    src = source_expr(source, spec, [keys.column]) if spec.hierarchy and not leaves else source.expr
    out = dict(dim=cols, src=src, h=keys.hash_expr(dialect), rkey=keys.rkey_expr(),
               gid=exp.Grouping(expressions=[c.copy() for c in cols]), sets=sets_expr(cols, spec.sets),
               **keys.params())
    if spec.measure and magnitude is not None:
        # GROUPING(d_1, ..., d_D) as the sum of GROUPING(d_j) * 2^(D-j): the contributor is grouped
        # too, and Spark's GROUPING_ID must name every grouping column
        bits: list[exp.Expr] = [exp.Mul(this=exp.Grouping(expressions=[c.copy()]),
                                        expression=exp.Literal.number(1 << (len(cols) - 1 - j)))
                                for j, c in enumerate(cols)]
        out.update(who=sql.column(spec.contributor or keys.column), measure=sql.column(spec.measure),
                   gid=reduce(lambda a, b: exp.Add(this=a, expression=b), bits),
                   sets=sets_expr(cols, spec.sets, [sql.column("ckm_who")]), **magnitude.bindings())
    return out


def publish(engine: Engine, source: Table, spec: Spec, keys: RecordKeys, table: Ptable, out: exp.Table,
            ptable_out: exp.Table, magnitude: Magnitude | None = None) -> None:
    """Write the ptable, then the published table in one statement (the caller holds the transaction)."""
    write_ptable(engine, table, ptable_out)
    engine.execute(*publish_sql(engine.dialect, source, spec, keys, table, out, ptable_out, magnitude))


def render(name: str, dialect: str, *, inline: bool = False, **bindings: Any) -> tuple[str, dict[str, Any]]:
    """sql.render for the statements over a table's cells: `$cells` becomes the cells' query
    (sql/ckm/cells.sql, or cells_sum.sql for a magnitude table, by `magnitude`), then the hash `h`
    (whose padded keys are parameters of its own) and `rkey` go into the tree, so that every
    parameter is bound. `inline`: the readable text of a script, values as literals but the padded
    keys as the placeholders $ipad / $opad (never their values)."""
    tree = sql.template(name)
    cells = "ckm/cells_sum" if bindings.get("measure") is not None else "ckm/cells"
    for ph in list(tree.find_all(exp.Placeholder)):
        if ph.name == "cells" and isinstance(ph.parent, exp.Table):
            ph.parent.replace(exp.Subquery(this=sql.template(cells), alias=ph.parent.args.get("alias")))
    for ph in list(tree.find_all(exp.Placeholder)):
        if ph.name in ("h", "rkey"):
            ph.replace(bindings[ph.name].copy())
    values = {k: v for k, v in bindings.items() if k not in ("h", "rkey")}
    if inline:
        values.update({k: exp.Placeholder(this=k) for k in KEY_PARAMS if k in values})
    return sql.bind(tree, dialect, values, inline=inline)


def publish_sql(dialect: str, source: Table, spec: Spec, keys: RecordKeys, table: Ptable, out: exp.Table,
                ptable_out: exp.Table, magnitude: Magnitude | None = None, *,
                inline: bool = False) -> tuple[str, dict[str, Any]]:
    """sql/ckm/publish.sql (counts) or publish_sum.sql (a magnitude table, with `magnitude`)."""
    return render("ckm/publish_sum" if spec.measure else "ckm/publish", dialect, inline=inline, out=out,
                  label=labels(spec.dims), out_dim=sql.columns(spec.dims, "c"), ptable=ptable_out, top=table.top,
                  **cell_bindings(dialect, source, spec, keys, magnitude))


def script(dialect: str, source: Table, spec: Spec, keys: RecordKeys, table: Ptable,
           outs: tuple[exp.Table, exp.Table, exp.Table], entries: dict[str, str], replaced: Sequence[exp.Table],
           magnitude: Magnitude | None = None) -> str:
    """The run as a reviewable script: `outs` the published table, its ptable and its spec; `entries`
    the spec's rows; `replaced` the old outputs the run drops first."""
    out, ptable_out, spec_out = outs
    warnings = ["PUBLIC tables only (the ptable and spec hold no data); the source's rows stay in the database."]
    if keys.derived:
        warnings.append("The record keys' secret is NOT in this script: bind $ipad and $opad to K xor 0x36.. and "
                        "K xor 0x5c.. (RFC 2104's padded keys, as --pseudonymize) to run it.")
    text = Script(dialect, f"anonsql tables --method ckm: {source} -> {out.sql(dialect)} "
                           f"({', '.join(spec.names)}, margins {spec.margins})", warnings)
    for old in replaced:
        text.step("drop the old output, replaced by this run (sql/common/drop_table.sql)",
                  sql.readable("common/drop_table", dialect, tbl=old))
    lo, hi = table.intervals()
    text.step("sql/ckm/create_ptable.sql", sql.readable("ckm/create_ptable", dialect, out=ptable_out))
    p = table.params
    text.rows(f"the ptable D={p.D} V={p.V:g} js={p.js} (fingerprint {table.fingerprint()[:16]}): p(i -> i + v) and "
              "its cell key interval [lo, hi) in units of 2^-32", ptable_out, ["i", "v", "p", "lo", "hi"],
              [[int(a), int(b), float(c), int(d), int(e)] for a, b, c, d, e in zip(table.i, table.v, table.p, lo, hi)])
    text.step("sql/ckm/create_spec.sql", sql.readable("ckm/create_spec", dialect, out=spec_out))
    text.rows("what the table was published from (names and parameters, never the key)", spec_out,
              ["name", "value"], [list(item) for item in entries.items()])
    name = "publish_sum" if spec.measure else "publish"
    text.step(f"the published table in one statement (sql/ckm/{name}.sql)",
              publish_sql(dialect, source, spec, keys, table, out, ptable_out, magnitude, inline=True)[0])
    text.check("every count recounted and its noise looked up in the ptable: no rows (sql/ckm/check_cells.sql)",
               render("ckm/check_cells", dialect, inline=True, out=out, ptable=ptable_out, top=table.top,
                      key=sql.group_key(sql.columns(spec.dims)), label=labels(spec.dims),
                      count=sql.column("frequency" if spec.measure else "value"),
                      **cell_bindings(dialect, source, spec, keys, magnitude))[0])
    return text.text()


def write_ptable(engine: Engine, table: Ptable, out: exp.Table) -> None:
    lo, hi = table.intervals()
    engine.execute(*sql.render("ckm/create_ptable", engine.dialect, out=out))
    frame = pd.DataFrame({"i": table.i, "v": table.v, "p": table.p, "lo": lo, "hi": hi})
    engine.insert_rows(out, list(frame.columns), frame)


def write_spec(engine: Engine, entries: dict[str, str], out: exp.Table) -> None:
    engine.execute(*sql.render("ckm/create_spec", engine.dialect, out=out))
    frame = pd.DataFrame({"name": list(entries), "value": list(entries.values())}, dtype=object)
    engine.insert_rows(out, ["name", "value"], frame)
