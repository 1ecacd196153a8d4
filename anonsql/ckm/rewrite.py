"""The CKM decisions as SQL: the ptable and the spec written as small public tables, then the
published table by ONE statement (sql/ckm/publish.sql): counts and cell keys of every grouping
set, a range join to the stored ptable, the perturbed counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from sqlglot import exp

from .. import sql
from ..catalog import Table
from ..engine import Engine
from ..tables.spec import Spec
from ..tables.stats import sets_expr
from .keys import RecordKeys
from .ptable import Ptable

#: The published table's own columns, after the dimensions' labels.
PUBLISHED = ["grouping_id", "value"]


def labels(dims: Sequence[str]) -> list[exp.Expr]:
    """Each dimension's label in a grouping-set query ('Total' where summed: sql/tables/label.sql)."""
    return [exp.alias_(sql.fragment("tables/label", dim=sql.column(d)), sql.ident(d)) for d in dims]


def cell_bindings(dialect: str, source: Table, spec: Spec, keys: RecordKeys) -> dict[str, Any]:
    """What the publishing and recount statements share: the rows with their record keys, grouped
    by the spec's grouping sets."""
    cols = sql.columns(spec.dims)
    return dict(dim=cols, src=source.expr, h=keys.hash_expr(dialect), rkey=keys.rkey_expr(),
                gid=exp.Grouping(expressions=[c.copy() for c in cols]), sets=sets_expr(cols, spec.sets),
                **keys.params())


def publish(engine: Engine, source: Table, spec: Spec, keys: RecordKeys, table: Ptable, out: exp.Table,
            ptable_out: exp.Table) -> None:
    """Write the ptable, then the published table in one statement (the caller holds the transaction)."""
    write_ptable(engine, table, ptable_out)
    engine.execute(*publish_sql(engine.dialect, source, spec, keys, table, out, ptable_out))


def render(name: str, dialect: str, **bindings: Any) -> tuple[str, dict[str, Any]]:
    """sql.render for the statements holding rows' record keys: the hash `h` (whose padded keys are
    parameters of its own) and `rkey` go into the tree first, so that their parameters are bound too."""
    tree = sql.template(name)
    for ph in list(tree.find_all(exp.Placeholder)):
        if ph.name in ("h", "rkey"):
            ph.replace(bindings[ph.name].copy())
    return sql.bind(tree, dialect, {k: v for k, v in bindings.items() if k not in ("h", "rkey")})


def publish_sql(dialect: str, source: Table, spec: Spec, keys: RecordKeys, table: Ptable, out: exp.Table,
                ptable_out: exp.Table) -> tuple[str, dict[str, Any]]:
    return render("ckm/publish", dialect, out=out, label=labels(spec.dims),
                      out_dim=sql.columns(spec.dims, "c"), ptable=ptable_out, top=table.top,
                      **cell_bindings(dialect, source, spec, keys))


def write_ptable(engine: Engine, table: Ptable, out: exp.Table) -> None:
    lo, hi = table.intervals()
    engine.execute(*sql.render("ckm/create_ptable", engine.dialect, out=out))
    frame = pd.DataFrame({"i": table.i, "v": table.v, "p": table.p, "lo": lo, "hi": hi})
    engine.insert_rows(out, list(frame.columns), frame)


def write_spec(engine: Engine, entries: dict[str, str], out: exp.Table) -> None:
    engine.execute(*sql.render("ckm/create_spec", engine.dialect, out=out))
    frame = pd.DataFrame({"name": list(entries), "value": list(entries.values())}, dtype=object)
    engine.insert_rows(out, ["name", "value"], frame)
