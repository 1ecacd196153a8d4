"""Generalize, then suppress (issue 33): kanon with --hierarchy. The optimal global recoding
(anonsql.kanon.lattice) is searched in SQL over the hierarchies' lattice, the source is seen
recoded at the chosen node (a temporary view, each QI replaced by its label), and the kanon job
(Kameya & Hayashi's bottom-up suppression) runs on that view, so its one CREATE TABLE AS SELECT
writes labels and NULLs together; an independent SQL check compares every published value
with the labels the SOURCE rows take at the chosen level."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlglot import exp

from .. import sql
from ..catalog import Column, Table, output_table
from ..engine import Engine
from ..errors import AnonsqlError
from ..hierarchy import Hierarchy, level_expr
from ..hierarchy.expressions import BOUNDED_KINDS, bound_exprs
from ..report import Progress, Report, silent
from ..stats import scratch_table
from . import job, relabel
from .lattice import Evaluated, Search, search

BASE = "anonsql_recoding_base"
VIEW = "anonsql_kanon_recoded"
CLASS = "anonsql_c"  # the class column of the base relation (--search-utility mar)


def _name(j: int, level: int) -> str:
    return f"c_{j}_{level}"


#: The search's utilities (--search-utility): ARX's loss metric, or the papers' MAR cost (KL).
UTILITIES = ("loss", "mar")
#: What each utility is called in the report.
UTILITY_NAMES = {"loss": "loss metric (ARX)", "mar": "MAR cost (KL of the class-conditional distributions)"}


def plan(engine: Engine, source: Table, hierarchies: Sequence[Hierarchy], k: int, limit: int,
         say: Progress = silent, utility: str = "loss", class_column: str | None = None) -> tuple[Search, float]:
    """The chosen node (levels in `hierarchies`' order) and the search's seconds: the base
    relation built once (sql/kanon/recoding_base.sql), each level's bound read
    (recoding_bounds), then batches of nodes evaluated by GROUPING SETS scans (lattice_nodes): one for
    feasibility (rows in classes below k), one for the `utility` loss of the batch's feasible nodes
    (kanon/label_loss.sql or, with the class of each row in the base, kanon/label_kl.sql)."""
    d, m = engine.dialect, len(hierarchies)
    base = scratch_table(BASE, d)
    labels, keys, first, loss = [], [], [], []
    for j, h in enumerate(hierarchies):
        for level in range(h.top + 1):
            labels.append(exp.alias_(level_expr(h, level), _name(j, level)))
            keys.append(level_expr(h, level))
            loss.append(exp.alias_(_loss_fragment(utility, j, level), f"loss_{j}_{level}"))
        first.append(exp.alias_(sql.fragment("kanon/first_leaf", leaf=sql.column(_name(j, 0))), f"first_{j}"))
    if utility == "mar":  # the class beside the labels (a constant without one: selected, not grouped)
        labels.append(exp.alias_(_class(class_column), CLASS))
        keys += [sql.column(class_column)] if class_column else []
    start = time.perf_counter()
    engine.execute(*sql.render("common/drop_temp_table", d, tbl=base))
    engine.execute(*sql.render("kanon/recoding_base", d, base=base, src=source.expr, label=labels, key=keys,
                               first=first, loss=loss))
    try:
        totals = [exp.alias_(exp.func("SUM", exp.Mul(this=sql.column("anonsql_n"), expression=exp.func(
            "LEAST", sql.column(f"loss_{j}_{level}"), sql.column(f"loss_{j}_{h.top}")))), f"t_{j}_{level}")
                  for j, h in enumerate(hierarchies) for level in range(h.top + 1)]
        row = [float(v or 0) for v in engine.fetch_all(*sql.render("kanon/recoding_bounds", d, base=base,
                                                                   total=totals))[0]]
        bounds, at = [], 0
        for h in hierarchies:
            bounds.append(np.array(row[at:at + h.top + 1]))
            at += h.top + 1
        tops = [h.top for h in hierarchies]

        def scan(nodes: np.ndarray, loss: bool) -> list[tuple[int, float]]:
            """(rows in classes below k, loss metric sum) of each node, by one GROUPING SETS scan; without
            `loss` the loss aggregates are left out (0), which halves the scan."""
            used = [sorted({int(level) for level in nodes[:, j]}) for j in range(m)]  # GROUPING() takes grouped ones
            sets = [exp.Tuple(expressions=[sql.column(_name(j, int(level))) for j, level in enumerate(node)])
                    for node in nodes]
            text, params = sql.render("kanon/lattice_nodes", d, node=sql.columns([f"g_{j}" for j in range(m)]),
                                      grouping=_masks(used), base=base, sets=sets, k=k,
                                      kept=_kept(used) if loss else exp.Literal.number(0),
                                      dropped=_dropped(tops) if loss else exp.Literal.number(0))
            found = {}
            for r in engine.fetch_all(text, params):
                levels = tuple(_level(int(mask), levels) for mask, levels in zip(r[:m], used))
                found[levels] = (int(r[m + 1]), float(r[m + 2]))
            return [found[tuple(int(v) for v in node)] for node in nodes]

        def evaluate(nodes: np.ndarray) -> Evaluated:
            """Feasibility first (a scan without the loss), then the loss of the feasible nodes alone."""
            suppressed = np.array([s for s, _ in scan(nodes, False)])
            loss = np.full(len(nodes), np.inf)
            feasible = np.flatnonzero(suppressed <= limit)
            if len(feasible):
                loss[feasible] = [value for _, value in scan(nodes[feasible], True)]
            return Evaluated(suppressed, loss)

        chosen = search(tops, bounds, limit, evaluate)
    finally:
        engine.execute(*sql.render("common/drop_temp_table", d, tbl=base))
    seconds = time.perf_counter() - start
    say(f"recoding: {chosen.evaluated:,} of {chosen.nodes:,} lattice nodes evaluated in {chosen.scans:,} scans "
        f"({seconds:.2f} s)")
    return chosen, seconds


def _class(class_column: str | None) -> exp.Expr:
    """The class of a row in the labels check: its column, or one constant label without --class."""
    return sql.column(class_column) if class_column else sql.fragment("kanon/one_class")


def _masks(used: Sequence[Sequence[int]]) -> list[exp.Expr]:
    """g_j = GROUPING(c_j_l, ...) over the levels `used[j]` of QI j in a batch: its bit mask."""
    return [exp.alias_(exp.func("GROUPING", *(sql.column(_name(j, level)) for level in levels)), f"g_{j}")
            for j, levels in enumerate(used)]


def _loss_fragment(utility: str, j: int, level: int) -> exp.Expr:
    """The loss of a base row's QI j at `level` under `utility` (kanon/label_loss or label_kl)."""
    label, first = sql.column(_name(j, level)), sql.column(f"first_{j}")
    if utility == "mar":
        return sql.fragment("kanon/label_kl", leaf=sql.column(_name(j, 0)), label=label, cls=sql.column(CLASS),
                            first=first)
    return sql.fragment("kanon/label_loss", label=label, first=first)


def _row_loss(j: int, level: int) -> exp.Expr:
    """SUM(anonsql_n · loss_j_l): the loss of QI j's cells of a class at `level`."""
    return exp.func("SUM", exp.Mul(this=sql.column("anonsql_n"), expression=sql.column(f"loss_{j}_{level}")))


def _kept(used: Sequence[Sequence[int]]) -> exp.Expr:
    """A class's loss kept: Σ_j Σ_l (1 - GROUPING(c_j_l)) · SUM(N · loss_j_l), the loss of the one
    level of each QI its grouping set grouped, over its rows."""
    total: exp.Expr = exp.Literal.number(0)
    for j, levels in enumerate(used):
        for level in levels:
            kept = exp.paren(exp.Sub(this=exp.Literal.number(1),
                                     expression=exp.func("GROUPING", sql.column(_name(j, level)))))
            total = exp.Add(this=total, expression=exp.Mul(this=kept, expression=_row_loss(j, level)))
    return total


def _dropped(tops: Sequence[int]) -> exp.Expr:
    """A class's loss suppressed whole: Σ_j SUM(N · loss_j_⊥)."""
    total: exp.Expr = exp.Literal.number(0)
    for j, top in enumerate(tops):
        total = exp.Add(this=total, expression=_row_loss(j, top))
    return total


def _level(mask: int, levels: Sequence[int]) -> int:
    """The level whose column a GROUPING() bit mask over `levels` says was grouped (its bit 0;
    the first argument is the most significant bit)."""
    for i, level in enumerate(levels):
        if not mask >> (len(levels) - 1 - i) & 1:
            return level
    raise AnonsqlError(f"grouping mask {mask} names no level")  # pragma: no cover - SQL gives one


def run(engine: Engine, source: Table, rows: int, qi: Sequence[str], class_column: str | None, k: int,
        hierarchies: Sequence[Hierarchy], max_suppressed: float, *, out: str | None, emit_sql: str | None,
        execute: bool, in_place: bool, progress: Progress | None = None, bounds: bool = False,
        utility: str = "loss", local: bool = False, **options: Any) -> job.KanonReport:
    """Search the node, recode the source as a view, run the kanon job on it, check the labels.
    With `bounds`, each interval or date QI gets `<col>_lo`/`<col>_hi` columns beside it (bound_columns);
    with `local`, blanked cells are then given back as labels (anonsql.kanon.relabel)."""
    if not engine.recodes_globally:
        raise AnonsqlError("kanon --hierarchy does not run on this engine yet (Spark): run it on DuckDB or PostgreSQL")
    if in_place:
        raise AnonsqlError("--hierarchy writes text labels into a new table; it cannot run --in-place")
    if local:
        _local_refusals(bounds, emit_sql, execute, options)
    say = progress or silent
    by_column = {h.column: h for h in hierarchies}
    stray = [h.column for h in hierarchies if h.column not in qi]
    if stray:
        raise AnonsqlError(f"--hierarchy names {', '.join(stray)}, not a quasi-identifier (--qi)")
    ordered = [by_column.get(c) or Hierarchy.suppression_only(c) for c in qi]  # a QI without one: value, then ⊥
    bounded = bound_columns(source, ordered) if bounds else {}
    limit = int(np.floor(max_suppressed * rows + 1e-9))
    chosen, seconds = plan(engine, source, ordered, k, limit, say, utility, class_column)
    level_of = {h.column: level for h, level in zip(ordered, chosen.levels)}
    d = engine.dialect
    view = sql.TableName(VIEW, engine.temp_schema)
    items: list[Any] = []
    columns: list[Column] = []
    as_text = {h.column for h, level in zip(ordered, chosen.levels) if level or (local and h.top > 1)}
    for c in source.columns:
        items.append(exp.alias_(_as_text(ordered[qi.index(c.name)], level_of[c.name]), sql.ident(c.name))
                     if c.name in as_text else sql.column(c.name))
        columns.append(Column(c.name, "VARCHAR") if c.name in as_text else c)
        if c.name in bounded:
            h = ordered[qi.index(c.name)]
            for name, expr in zip(bounded[c.name], bound_exprs(h, level_of[c.name], c.data_type, d)):
                items.append(exp.alias_(expr, sql.ident(name)))
                columns.append(Column(name, c.data_type))
    if local:  # each QI's label at the node beside it, hidden: the pass after the job reads it
        for j, h in enumerate(ordered):
            at = _as_text(h, chosen.levels[j]) if h.column in as_text else level_expr(h, chosen.levels[j])
            items.append(exp.alias_(at, relabel.hidden(j)))
            columns.append(Column(relabel.hidden(j), "VARCHAR" if h.column in as_text
                                  else source.column(h.column).data_type))
    engine.execute(*sql.render("common/drop_view", d, tbl=view.expr))
    engine.execute(*sql.render("kanon/recoded_view", d, view=view.expr, src=source.expr, item=items))
    recoded = Table(view.schema or "", view.name, tuple(columns))

    def check(report: Report, written: Table) -> None:
        if not local:  # with it, relabel checks the labels at the node or above on the output itself
            labels(engine, report, source, written, ordered, chosen.levels, class_column)
        if bounded:
            bound_check(engine, report, source, written, ordered, chosen.levels, bounded)

    out = out or f"{source.name}_k{k}"
    target = sql.TableName.parse(out)
    work = relabel.scratch(source)
    if local:  # the output's name checked before any work (the job writes the working table)
        output_table(engine, source, out, out, bool(options.get("replace")))
    node = "; ".join(f"{h.column} level {level}: {h.meaning(level)}" for h, level in zip(ordered, chosen.levels))
    before = [(f"global recoding (issue 33), the lattice node of least {UTILITY_NAMES[utility]}: {node}; the source "
               "seen recoded at it (sql/kanon/recoded_view.sql)",
               sql.readable("kanon/recoded_view", d, view=view.expr, src=source.expr, item=[i.copy() for i in items]))]
    checks = [(f"{h.column}: published values that are neither NULL nor a label of as many source rows at level "
               f"{level}: must return 0", sql.readable("kanon/recoding_outside", d, out=target.expr, src=source.expr,
                                                       col=sql.column(h.column), label=level_expr(h, level),
                                                       cls=_class(class_column)))
              for h, level in zip(ordered, chosen.levels)]
    checks += [(f"{h.column}: published ranges [{lo}, {hi}) that do not hold the source rows of their value, or "
                f"bounds NULL where the value is not: must return 0",
                sql.readable("kanon/recoding_bounds_outside", d, **_bounds_bindings(target.expr, source.expr, h, level,
                                                                                    (lo, hi))))
               for h, level in zip(ordered, chosen.levels) if h.column in bounded for lo, hi in [bounded[h.column]]]
    try:
        report = job.run(engine, recoded, rows, qi, class_column, k, out=str(work) if local else out,
                         emit_sql=emit_sql, execute=execute, in_place=False, progress=progress, also_verify=check,
                         script_before=before, script_checks=checks,
                         follows={b: c for c, pair in bounded.items() for b in pair}, **options)
    except BaseException:
        if local:  # a job that failed after writing its working table
            engine.execute(*sql.render("common/drop_temp_table", d, tbl=work.expr))
        raise
    finally:
        engine.execute(*sql.render("common/drop_view", d, tbl=view.expr))
    report.table = str(source)
    given: dict[str, int] = {}
    if local:
        with report.timed("local recoding"):
            given = relabel.run(engine, report, source, work, ordered, chosen.levels, class_column, k, out,
                                bool(options.get("replace")), say)
        report.out = str(target)
        report.warnings = [w.replace(str(work), str(target)).replace(work.name, str(target))  # said of the output
                           for w in report.warnings if relabel.HIDDEN not in w]
        report.suppressed_by_column = {c: n - given[c] for c, n in report.suppressed_by_column.items()}
        report.suppressed_cells -= sum(given.values())
        report.suppressed_ratio = report.suppressed_cells / report.qi_cells if report.qi_cells else 0.0
    for h, level in zip(ordered, chosen.levels):  # NULL on every row of the view: not the source's own NULLs
        if level == h.top:
            report.original_nulls_by_column.pop(h.column, None)
    report.recoding = {
        "levels": {h.column: level for h, level in zip(ordered, chosen.levels)},
        "meaning": {h.column: f"{h.spec}: level {level} of {h.top}, {h.meaning(level)}"
                    for h, level in zip(ordered, chosen.levels)},
        "max_suppressed_records": max_suppressed, "records_in_small_classes": chosen.suppressed,
        "utility": UTILITY_NAMES[utility],
        **({"kl_divergence": chosen.loss / rows if rows else 0.0} if utility == "mar" else
           {"loss_metric": chosen.loss / (rows * len(ordered)) if rows else 0.0}),
        "lattice_nodes": chosen.nodes, "nodes_evaluated": chosen.evaluated, "nodes_pruned": chosen.pruned,
        "scans": chosen.scans, "nodes_per_second": chosen.evaluated / seconds if seconds else 0.0,
        "bounds": {c: list(pair) for c, pair in bounded.items()},
        **({"local_recoding": {"cells_given_back": sum(given.values()), "by_column": given}} if local else {}),
    }
    report.seconds = {"search": seconds, **report.seconds}
    return report


def _as_text(h: Hierarchy, level: int) -> exp.Expr:
    """QI h's label at `level`, text (level 0, the value, cast: --local-recoding publishes labels beside it)."""
    return relabel.text(level_expr(h, 0)) if level == 0 else level_expr(h, level)


def _local_refusals(bounds: bool, emit_sql: str | None, execute: bool, options: dict[str, Any]) -> None:
    """--local-recoding's combinations not built yet, each refused in one line before any work."""
    for given, what in [(bounds, "--hierarchy-bounds"), (emit_sql or not execute or options.get("script"),
                                                         "a script (--emit-sql, a release)"),
                        (options.get("models"), "--l-diversity, --entropy-l, --recursive-cl or --t-closeness"),
                        (options.get("changes"), "--changes"), (options.get("restore"), "--restore (it includes it)")]:
        if given:
            raise AnonsqlError(f"--local-recoding does not take {what} yet")


def labels(engine: Engine, report: Report, source: Table, written: Table, hierarchies: Sequence[Hierarchy],
           levels: Sequence[int], class_column: str | None) -> None:
    """Record the check that every published value of each recoded QI is ⊥ or, at its chosen level,
    the label of as many SOURCE rows of its class (sql/kanon/recoding_outside.sql), one count per QI."""
    bad = []
    for h, level in zip(hierarchies, levels):
        text, params = sql.render("kanon/recoding_outside", engine.dialect, out=written.expr, src=source.expr,
                                  col=sql.column(h.column), label=level_expr(h, level), cls=_class(class_column))
        n = int(engine.fetch_all(text, params)[0][0])
        if n:
            bad.append(f"{h.column}: {n} value(s)")
    report.check("values are the source's or its ancestors in the hierarchy", not bad, "kanon/recoding_outside",
                 "; ".join(bad))


def bound_columns(source: Table, hierarchies: Sequence[Hierarchy]) -> dict[str, tuple[str, str]]:
    """--hierarchy-bounds: each interval or date QI's lower/upper bound columns, `<col>_lo` and
    `<col>_hi`; one error line if the source already has such a column, or no QI can have them."""
    bounded = {h.column: (f"{h.column}_lo", f"{h.column}_hi") for h in hierarchies if h.kind in BOUNDED_KINDS}
    if not bounded:
        raise AnonsqlError("--hierarchy-bounds adds bound columns to interval and date hierarchies; none is given")
    taken = {c.lower() for c in source.column_names}
    clash = [name for pair in bounded.values() for name in pair if name.lower() in taken]
    if clash:
        raise AnonsqlError(f"--hierarchy-bounds would add {', '.join(clash)}, already a column of {source}")
    return bounded


def _bounds_bindings(out: exp.Table, src: exp.Table, h: Hierarchy, level: int, names: Sequence[str]
                     ) -> dict[str, Any]:
    """The bindings of sql/kanon/recoding_bounds_outside.sql for QI `h` at `level`, bounds `names`."""
    return dict(out=out, src=src, col=sql.column(h.column), lo=sql.column(names[0]), hi=sql.column(names[1]),
                label=level_expr(h, level), x=sql.column(h.column, "s"))


def bound_check(engine: Engine, report: Report, source: Table, written: Table, hierarchies: Sequence[Hierarchy],
                levels: Sequence[int], bounded: dict[str, tuple[str, str]]) -> None:
    """Record the check that every published range [lo, hi) holds the source rows of its value and is
    NULL where the value is ⊥ (sql/kanon/recoding_bounds_outside.sql), one count per bounded QI."""
    bad = []
    for h, level in zip(hierarchies, levels):
        if h.column in bounded:
            text, params = sql.render("kanon/recoding_bounds_outside", engine.dialect,
                                      **_bounds_bindings(written.expr, source.expr, h, level, bounded[h.column]))
            n = int(engine.fetch_all(text, params)[0][0])
            if n:
                bad.append(f"{h.column}: {n} row(s)")
    report.check("bound columns hold the source values", not bad, "kanon/recoding_bounds_outside", "; ".join(bad))
