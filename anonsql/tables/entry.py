"""The tables job's one entry on an open engine: the arguments parsed and checked (values, then
against the table) into a Spec, then the job (anonsql.tables.job). Behind `anonsql.safe_table` and
a release's tables step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import validate
from ..catalog import get_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..report import Progress
from . import MARGINS
from .job import TablesReport, run
from .rules import Rules
from .spec import Spec, parse_assignment, parse_cells, parse_tables
from .suppress import Protection


def safe_table(engine: Engine, table: str, dims: Sequence[str] | str | None = None, *,
               tables: str | Sequence[Sequence[str]] | None = None, margins: str = "cube",
               measure: str | None = None, contributor: str | None = None, min_count: int = 3,
               zero_unsafe: bool = False, dominance: str | tuple[int, float] | None = None,
               p_percent: float | None = None, protection: float = 0.0,
               hierarchy: Mapping[str, str] | str | None = None,
               publish: str | Sequence[Mapping[str, str]] | None = None, out: str | None = None, replace: bool = False,
               bounds: bool = False, emit_sql: str | None = None, execute: bool = True,
               progress: Progress | None = None, script: bool = False, allow_empty_secondaries: bool = False,
               structural_zeros: str | Sequence[Mapping[str, str]] | None = None,
               previous: str | None = None) -> TablesReport:
    """See anonsql.api.safe_table; `script` builds the reviewable script (report.script) without
    writing it anywhere (`emit_sql` builds and writes it); `previous`: last period's published
    table or its private audit (anonsql.tables.previous)."""
    validate.choice("margins", margins, MARGINS)
    min_count = validate.integer(min_count, "min_count", minimum=0)
    level = validate.number(protection, "protection (percent of the cell value)", minimum=0)
    if p_percent is not None:
        p_percent = validate.number(p_percent, "p_percent", above=0)
    dom = None if dominance is None else validate.dominance(dominance)
    validate.dry_run(execute, emit_sql)
    trees = parse_assignment(hierarchy, "--hierarchy") if isinstance(hierarchy, str) else dict(hierarchy or {})
    forced = parse_cells(publish) if isinstance(publish, str) else [dict(c) for c in publish or []]
    zeros = parse_cells(structural_zeros, "--structural-zeros") if isinstance(structural_zeros, str) else \
        [dict(c) for c in structural_zeros or []]
    if (dims is None or not validate.names(dims)) == (tables is None):
        raise AnonsqlError("give the table as --dims a,b,c or linked tables as --tables 'a*b,c*b' (one of them)")
    groups = parse_tables(tables) if isinstance(tables, str) else [list(t) for t in tables] if tables else \
        [validate.names(dims)]
    if (dom or p_percent is not None) and not (measure and contributor):
        raise AnonsqlError("--dominance and --p-percent need a magnitude table: --sum COLUMN --contributor COLUMN")
    tab = get_table(engine, table)
    groups = [tab.resolve(g) for g in groups]
    names = list(dict.fromkeys(d for g in groups for d in g))
    value = tab.column(measure).name if measure else None
    if value and tab.column(value).kind not in ("integer", "float", "decimal"):
        raise AnonsqlError(f"--sum column '{value}' is not numeric ({tab.column(value).data_type})")
    who = tab.column(contributor).name if contributor else None
    if set(names) & {value, who}:
        raise AnonsqlError("the --sum and --contributor columns cannot be dimensions")
    trees = {tab.column(d).name: t for d, t in trees.items()}
    if not set(trees) <= set(names):
        raise AnonsqlError(f"--hierarchy names {', '.join(sorted(set(trees) - set(names)))}, not a dimension")
    forced, zeros = ([{tab.column(d).name: v for d, v in c.items()} for c in cells] for cells in (forced, zeros))
    last = None if previous is None else get_table(engine, previous)
    engine.expect_rows(validate.rows(engine, tab))
    spec = Spec(names, [[names.index(d) for d in g] for g in groups], margins, value, who,
                Rules(min_count, zero_unsafe, dom, p_percent),
                Protection(level, allow_empty=bool(allow_empty_secondaries)), trees, forced, zeros)
    return run(engine, tab, spec, out=out, replace=replace, bounds=bounds, emit_sql=emit_sql, execute=execute,
               progress=progress, script=script, previous=last)

