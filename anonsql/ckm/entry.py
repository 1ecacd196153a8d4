"""The CKM job's one entry on an open engine: the arguments checked (values, then against the
table) into a tables Spec (the suppression tables' dims/cube/rollup spec, reused), the record keys
and the ptable parameters, then the job (anonsql.ckm.job). Behind `anonsql.ckm_table`,
`anonsql tables --method ckm` and a release's tables step with method = "ckm"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import sql, validate
from ..catalog import Table, get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Progress
from ..tables import MARGINS
from ..tables.spec import Spec, parse_assignment, parse_tables
from ..taxonomy.stats import read_taxonomies
from .job import CkmReport, run
from .keys import RecordKeys, record_keys
from .ptable import KEY_UNITS, Params
from .rewrite import SCALES, Magnitude


def ckm_table(engine: Engine, table: str, dims: Sequence[str] | str | None = None, *,
              tables: str | Sequence[Sequence[str]] | None = None, margins: str = "cube",
              record_key: str | None = None, record_key_column: str | None = None, key_file: str | None = None,
              D: int = 3, V: float = 1.5, js: int = 1, pstay: float | None = None, measure: str | None = None,
              contributor: str | None = None, top_k: int = 1, scale: str = "top", m: float = 0.05,
              compare_min_count: int | None = None, hierarchy: Mapping[str, str] | str | None = None,
              out: str | None = None, replace: bool = False, progress: Progress | None = None,
              emit_sql: str | None = None, execute: bool = True, script: bool = False) -> CkmReport:
    """See anonsql.api.ckm_table; `script` builds the reviewable script (report.script) without
    writing it anywhere (`emit_sql` builds and writes it)."""
    validate.choice("margins", margins, MARGINS)
    validate.choice("scale", scale, SCALES)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    params = Params(D, float(V), js, pstay).check()
    magnitude = Magnitude(validate.integer(top_k, "top_k", minimum=1), scale,
                          validate.number(m, "m (the magnitude noise per unit of v)", above=0))
    if contributor and not measure:
        raise AnonsqlError("--contributor needs a magnitude table: --sum COLUMN")
    if compare_min_count is not None:
        compare_min_count = validate.integer(compare_min_count, "compare_min_count", minimum=0)
    keys = record_keys(record_key, record_key_column, key_file)
    trees = parse_assignment(hierarchy, "--hierarchy") if isinstance(hierarchy, str) else dict(hierarchy or {})
    if (dims is None or not validate.names(dims)) == (tables is None):
        raise AnonsqlError("give the table as --dims a,b,c or linked tables as --tables 'a*b,c*b' (one of them)")
    groups = parse_tables(tables) if isinstance(tables, str) else [list(t) for t in tables] if tables else \
        [validate.names(dims)]
    tab = get_table(engine, table)
    groups = [tab.resolve(g) for g in groups]
    names = list(dict.fromkeys(d for g in groups for d in g))
    column = tab.column(keys.column)
    roles = {"the record key": column, **{option: tab.column(name) for option, name in
                                          (("--sum", measure), ("--contributor", contributor)) if name}}
    clash = [f"{role} column '{c.name}'" for role, c in roles.items() if c.name in names]
    if clash:
        raise AnonsqlError(f"{' and '.join(clash)} cannot be a dimension")
    if measure and roles["--sum"].kind not in ("integer", "float", "decimal"):
        raise AnonsqlError(f"--sum column '{roles['--sum'].name}' is not numeric ({roles['--sum'].data_type})")
    value, who = (roles[o].name if o in roles else None for o in ("--sum", "--contributor"))
    keys = RecordKeys(column.name, keys.key, units=not keys.derived and column.kind == "integer")
    if not keys.derived:
        _check_declared(engine, tab, keys, column.kind)
    else:
        missing = engine.fetch_all(*sql.render("common/null_count", engine.dialect, tbl=tab.expr,
                                               col=sql.column(keys.column)))[0][0]
        if missing:
            raise AnonsqlError(f"--record-key column '{keys.column}' is NULL on {missing:,} rows: every record needs a "
                               "unit to derive its key from")
    trees = {tab.column(d).name: t for d, t in trees.items()}
    if not set(trees) <= set(names):
        raise AnonsqlError(f"--hierarchy names {', '.join(sorted(set(trees) - set(names)))}, not a dimension")
    _check_leaves(engine, tab, trees)
    engine.expect_rows(validate.rows(engine, tab))
    spec = Spec(names, [[names.index(d) for d in g] for g in groups], margins, value, who, hierarchy=trees)
    return run(engine, tab, spec, keys, params, out=out, replace=replace, magnitude=magnitude,
               compare_min_count=compare_min_count, progress=progress, emit_sql=emit_sql, execute=execute,
               script=script)


def _check_leaves(engine: Engine, tab: Table, trees: Mapping[str, str]) -> None:
    """Each --hierarchy dimension's stored taxonomy has totals (a root with children) and every
    value of the column is one of its leaves (by text), so every row reaches each node above it."""
    for dim, tree in read_taxonomies(engine, trees).items():
        rows = engine.fetch_all(*sql.render("tables/domain", engine.dialect, dim=sql.column(dim), src=tab.expr))
        tree.check_leaves(dim, [label for _, label in rows])


def _check_declared(engine: Engine, tab: Table, keys: RecordKeys, kind: str) -> None:
    """A declared record key column holds a key on every row: numbers in [0, 1), or whole numbers in
    [0, 2^32) (units of 2^-32); else one error line."""
    if kind not in ("float", "decimal", "integer"):
        raise AnonsqlError(f"--record-key-column '{keys.column}' must hold record keys in [0, 1) (a float column) "
                           f"or whole numbers in [0, 2^32) (an integer column), it is {kind}")
    upper = KEY_UNITS if keys.units else 1
    bad = engine.fetch_all(*sql.render("ckm/record_key_range", engine.dialect, upper=upper,
                                       h=sql.column(keys.column), src=tab.expr))[0][0]
    if bad:
        raise AnonsqlError(f"--record-key-column '{keys.column}': {bad:,} rows hold no key in [0, "
                           f"{'2^32' if keys.units else '1'}) (the keys themselves are never shown: they are secret)")
