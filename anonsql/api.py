"""The typed Python API behind the CLI: validate input, run the SQL, return result objects."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import identifiers, validate
from .catalog import Table, get_table
from .data import risk
from .engine import Engine, connect
from .errors import AnonsqlError
from .files import read_text
from .kanon.model import COSTS, NEEDS_POSITIVE_ALPHA
from .verify import KAnonymityReport, k_anonymity

if TYPE_CHECKING:
    from .data.binning import BinReport, BinSpec
    from .data.loading import LoadReport
    from .data.profile import ProfileReport
    from .evaluate.job import EvaluationReport
    from .features.job import AcReport, BinarizeReport, FeaturesReport
    from .kanon.job import KanonReport
    from .nbc.job import BreachReport, CheckReport, PublishReport, VerifyReport, ViewsReport
    from .protect import ProtectReport, TaxonomyReport, TaxonomyTree
    from .release import PlanReport, ReleaseReport, ReleaseVerifyReport
    from .tables.job import AuditReport, TablesReport


@contextmanager
def _open(db: str | Engine, *, create: bool = False) -> Iterator[Engine]:
    """Connect for one call; an Engine passed in stays open for the caller."""
    engine = connect(db, create=create)
    try:
        yield engine
    finally:
        if engine is not db:
            engine.close()


def load_csv(db: str | Engine | Any, path: str, table: str, *, na: Sequence[str] = (), replace: bool = False,
             types: Mapping[str, str] | str | None = None, delimiter: str | None = None,
             encoding: str | None = None) -> LoadReport:
    """Load a CSV file (header row, gzip OK) into a new table, parsed by DuckDB's CSV reader.

    Fields are trimmed; empty fields and `na` markers become NULL; `types` ('zip=text,...' or a
    dict) overrides the types read from the values; `delimiter` (default: from the header line)
    and `encoding` (default UTF-8) describe the file. See anonsql.data.loading.
    """
    from .data import loading

    fmt = loading.CsvFormat.build(na, delimiter, encoding, types)
    with _open(db, create=True) as engine:
        return loading.load_csv(engine, path, table, fmt, replace=replace)


def load_dataset(db: str | Engine, name: str, table: str | None = None, *, replace: bool = False) -> LoadReport:
    """Load a bundled data set (see anonsql.data.bundled.DATASETS) into `table` (default: its name)."""
    from .data import datasets

    validate.choice("data set", name, list(datasets.DATASETS))
    with _open(db, create=True) as engine:
        return datasets.load_dataset(engine, name, table or name.replace("-", "_"), replace=replace)


def profile(db: str | Engine | Any, table: str, *, qi: Sequence[str] | str | None = None,
            class_column: str | None = None, sensitive: Sequence[str] | str | None = None,
            risk_threshold: float = risk.RISK_THRESHOLD) -> ProfileReport:
    """Row count, per-column type/distinct/NULLs, the current k and re-identification risk over
    `qi`, l-diversity and t-closeness of each `sensitive` column, the class balance."""
    from .data import profile as _profile

    threshold = validate.number(risk_threshold, "risk threshold", minimum=0)
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = tab.resolve(validate.names(qi))
        cls = validate.class_column(engine, tab, class_column, qi_cols) if class_column else None
        sens = _sensitive(tab, validate.names(sensitive), qi_cols)
        rows = validate.rows(engine, tab)
        engine.expect_rows(rows)
        return _profile.profile_table(engine, tab, rows, qi_cols, cls, sens, threshold)


def check(db: str | Engine | Any, table: str, qi: Sequence[str] | str, k: int, *, show: int = 20,
          l_diversity: Mapping[str, int] | str | None = None, t_closeness: Mapping[str, float] | str | None = None,
          risk_threshold: float = risk.RISK_THRESHOLD) -> KAnonymityReport:
    """Is `table` k-anonymous over `qi` (NULL counting as its own value)? Lists the worst groups
    and the re-identification risk; `l_diversity` ('COL=L' or {col: l}) and `t_closeness`
    ('COL=T') add checks on sensitive columns. The report is truthy only when all hold."""
    k = validate.k(k)
    threshold = validate.number(risk_threshold, "risk threshold", minimum=0)
    ls = risk.parse_limits(l_diversity, "--l-diversity", whole=True)
    ts = risk.parse_limits(t_closeness, "--t-closeness", whole=False)
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = validate.quasi_identifiers(tab, qi)
        ls = dict(zip(_sensitive(tab, list(ls), qi_cols), ls.values()))
        ts = dict(zip(_sensitive(tab, list(ts), qi_cols), ts.values()))
        engine.expect_rows(validate.rows(engine, tab))
        report = k_anonymity(engine, tab, qi_cols, k, show=show)
        report.risk = risk.reidentification(engine, tab, qi_cols, threshold)
        for col in dict.fromkeys([*ls, *ts]):
            d = risk.diversity(engine, tab, qi_cols, col, l_required=int(ls[col]) if col in ls else None,
                               t_allowed=ts.get(col))
            report.sensitive.append(d)
            if col in ls:
                report.check(f"{ls[col]:g}-diversity of {col}", d.classes_below_l == 0, "data/attribute_disclosure",
                             f"{d.classes_below_l} classes, {d.rows_below_l} rows below" if d.classes_below_l else "")
            if col in ts:
                report.check(f"{ts[col]:g}-closeness of {col}", d.classes_above_t == 0, "data/attribute_disclosure",
                             f"{d.classes_above_t} classes, {d.rows_above_t} rows above" if d.classes_above_t else "")
        return report


def _sensitive(tab: Table, names: Sequence[str], qi: Sequence[str]) -> list[str]:
    """Sensitive columns: existing, and not quasi-identifiers themselves."""
    cols = tab.resolve(names)
    both = [c for c in cols if c in qi]
    if both:
        raise AnonsqlError(f"sensitive column {', '.join(both)} is also listed as a quasi-identifier")
    return cols


def k_anonymize(db: str | Engine, table: str, qi: Sequence[str] | str, class_column: str | None, k: int, *,
                cost: str = "mar", alpha: float = 1.0, seed: int = 0, out: str | None = None,
                in_place: bool = False, replace: bool = False, emit_sql: str | None = None,
                execute: bool = True, progress: Callable[[str], None] | None = None,
                drop: Sequence[str] | str | None = None, pseudonymize: Sequence[str] | str | None = None,
                key_file: str | None = None, changes: str | None = None) -> KanonReport:
    """k-anonymize `table` over `qi` by bottom-up cell suppression (Kameya & Hayashi 2016).

    Writes a new table (`out`, default <table>_k<k>) or, with `in_place`, rewrites the source
    in one transaction; checked by SQL before returning (VerificationError and a rollback
    otherwise). `class_column=None` treats all rows as one class (C = 1). `drop` removes direct
    identifiers, `pseudonymize` replaces them by HMAC-SHA256 pseudonyms keyed by `key_file`
    (or $ANONSQL_PSEUDONYM_KEY); `changes` names a new PRIVATE table listing every blanked
    cell's original value. `emit_sql` also writes the run as a reviewable script to that file
    (`-` for standard output); `execute=False` (a dry run) only writes the script.
    """
    from .kanon import job as _kanon_job

    k = validate.k(k)
    cost = validate.choice("cost", cost, COSTS)
    positive = cost in NEEDS_POSITIVE_ALPHA  # eq. 10 is infinite at alpha = 0
    alpha = validate.number(alpha, f"alpha (the pseudo count) for cost '{cost}'",
                            minimum=None if positive else 0, above=0 if positive else None)
    seed = validate.seed(seed)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = validate.quasi_identifiers(tab, qi)
        cls = validate.class_column(engine, tab, class_column, qi_cols) if class_column is not None else None
        dropped, pseudo = identifiers.check_columns(tab, qi_cols, validate.names(drop), validate.names(pseudonymize),
                                                    [cls] if cls else [])
        if key_file and not pseudo:
            raise AnonsqlError("--key-file is the key of --pseudonymize, which names no column")
        key = identifiers.read_key(key_file) if pseudo else None
        if pseudo:
            identifiers.pseudonymize_sql(engine.dialect)  # refuses an engine without the SQL, before any work
        rows = validate.rows(engine, tab)
        engine.expect_rows(rows)
        validate.k_within(k, rows)
        return _kanon_job.run(engine, tab, rows, qi_cols, cls, k, cost=cost, alpha=alpha, seed=seed, out=out,
                              in_place=in_place, replace=replace, emit_sql=emit_sql, execute=execute,
                              progress=progress, drop=dropped, pseudonymize=pseudo, key=key, changes=changes)


def bin_columns(db: str | Engine, table: str, specs: Sequence[str | BinSpec], out: str, *,
                replace: bool = False) -> BinReport:
    """Copy `table` to `out` with numeric columns replaced by range labels (width or quantiles)."""
    from .data import binning

    parsed = [s if isinstance(s, binning.BinSpec) else binning.BinSpec.parse(s) for s in specs]
    if not parsed:
        raise AnonsqlError("nothing to bin: give at least one COLUMN=width:W or COLUMN=quantiles:Q")
    with _open(db) as engine:
        tab = get_table(engine, table)
        engine.expect_rows(validate.rows(engine, tab))
        return binning.bin_columns(engine, tab, parsed, out, replace=replace)


def evaluate_classifiers(db: str | Engine, original: str, anonymized: str, qi: Sequence[str] | str,
                         class_column: str, *, key: str | None = None, folds: int = 10, seed: int = 0,
                         classifiers: Sequence[str] | str | None = None, alpha: float = 1.0,
             progress: Callable[[str], None] | None = None) -> EvaluationReport:
    """Stratified CV error of classifiers trained on `anonymized` and tested on `original`
    (Kameya & Hayashi 2016, Sec. 4), next to the baseline trained on `original`. Reads only.
    `classifiers` None: every one (anonsql.evaluate.CLASSIFIERS)."""
    from .evaluate import job as _evaluate_job

    with _open(db) as engine:
        return _evaluate_job.evaluate(engine, get_table(engine, original), get_table(engine, anonymized), qi,
                                      class_column, key, folds=folds, seed=seed, alpha=alpha, progress=progress,
                                      classifiers=_evaluate_job.CLASSIFIERS if classifiers is None else classifiers)


def nbc_views(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, *,
              precedence: Sequence[str] | str | None = None, counts: bool = False) -> ViewsReport:
    """The NBC-enabling views (P_c, N^i_{t,c}) in one SQL scan and Corollary 4's smallest rho."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_views(engine, table, class_column, attrs, precedence=precedence, counts=counts)


def nbc_check(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: object, *,
              precedence: Sequence[str] | str | None = None) -> CheckReport:
    """Do the raw views already satisfy condition (10) for rho (Corollary 4)? `ok` says."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_check(engine, table, class_column, attrs, rho, precedence=precedence)


def nbc_publish(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: object = None,
                out: str = "", *, precedence: Sequence[str] | str | None = None, replace: bool = False,
                prior: str | dict | None = None, r: object = None, synthetic: bool = False,
                emit_sql: str | None = None, execute: bool = True, root: str = "paper",
                progress: Callable[[str], None] | None = None) -> PublishReport:
    """Write <out>_class and <out>_attr: rho-safe (SafetyTransform) or r-close to `prior` (EST)
    counts, NBC-equivalent to the table's, checked by SQL in the same transaction; with
    `synthetic` also <out>_rows, a table whose NBC views equal the published counts.
    `emit_sql` also writes the run as a script; `execute=False` only writes the script.
    `root="least"` (least distortion) uses the least root exponent that still meets rho."""
    from .nbc import job as _nbc_job

    validate.output_file(emit_sql, "--emit-sql")
    with _open(db) as engine:
        return _nbc_job.run_publish(engine, table, class_column, attrs, rho, out, precedence=precedence,
                                    replace=replace, prior=prior, r=r, synthetic=synthetic, emit_sql=emit_sql,
                                    execute=execute, root=root, progress=progress)


def nbc_verify(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, published: str, *,
               precedence: Sequence[str] | str | None = None) -> VerifyReport:
    """Definition 2: does the NBC of the published tables rank classes exactly like the table's? `ok` says."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_verify(engine, table, class_column, attrs, published, precedence=precedence)


def nbc_breach(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, known: str | dict, *,
               published: str | None = None, precedence: Sequence[str] | str | None = None) -> BreachReport:
    """Tiny tables: the attacker's prior and posterior over all worlds consistent with the views."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_breach(engine, table, class_column, attrs, known, published=published,
                                   precedence=precedence)


def protect_table(db: str | Engine, table: str, key: str, *, method: str = "dropp", target: str | None = None,
            rows: Sequence[str] | str | None = None, cells: Sequence[tuple[str, str]] | str | None = None,
            attrs: Sequence[str] | str | None = None, top_k: int | None = None, seed: int = 0,
            out: str | None = None, in_place: bool = False, replace: bool = False,
            delete_rows: bool = False, taxonomies: dict[str, str] | str | None = None,
            emit_sql: str | None = None, execute: bool = True,
            progress: Callable[[str], None] | None = None, drop: Sequence[str] | str | None = None,
            pseudonymize: Sequence[str] | str | None = None, key_file: str | None = None,
            show_values: bool = False, qi: Sequence[str] | str | None = None, k: int | None = None) -> ProtectReport:
    """Hide confidential cells so that naive Bayes / ID3 no longer predict them (Hintoglu 2011).

    Cells are `target` in the rows whose `key` is in `rows`, or the (key, column) pairs of
    `cells` (or a CSV file of them); the classifiers read `attrs` (default: every other column).
    Writes a new table (`out`, default <table>_protected) or, with `in_place`, the source, plus
    <out>_changes (which holds the ORIGINAL values: private), in one transaction verified by SQL
    before returning. The generalization methods (decp-g, incp-g, dropp-g, hid3-g, e-decp-g,
    e-dropp-g) take `taxonomies`, column -> stored taxonomy name (or 'attr=name,...'), the
    target's at least. `emit_sql` also writes the run as a script; `execute=False` only writes it.
    The random next best guess is drawn among every admissible value (the thesis, Section 3.4);
    `top_k` (>= 2) bounds it to the k most probable values instead. `drop` removes direct
    identifiers from the output, `pseudonymize` replaces them by HMAC-SHA256 pseudonyms keyed by
    `key_file` (or $ANONSQL_PSEUDONYM_KEY), as k_anonymize does; neither may name the key or a
    target. The summary prints hidden cells' original values only with `show_values`.
    With `qi` and `k` (the input k-anonymous over `qi`), further QI cells are hidden where the
    hidden ones would leave a class under k (chosen by kanon's MAR cost) and the output is
    checked k-anonymous; `qi` alone warns (Report.warnings) when the output lost the input's k.
    """
    from . import protect as _protect

    validate.choice("method", method, _protect.METHODS)
    qi_cols = validate.names(qi)
    if k is not None:
        k = validate.k(k)
        if not qi_cols:
            raise AnonsqlError("--k needs --qi: the quasi-identifiers over which protect keeps k-anonymity")
    top_k = None if top_k is None else validate.integer(top_k, "top_k", minimum=2)
    seed = validate.seed(seed)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    if isinstance(cells, str):
        cells = _protect.read_cells_csv(cells)
    pseudo = validate.names(pseudonymize)
    if key_file and not pseudo:
        raise AnonsqlError("--key-file is the key of --pseudonymize, which names no column")
    pseudonym_key = identifiers.read_key(key_file) if pseudo else None
    with _open(db) as engine:
        if pseudo:
            identifiers.pseudonymize_sql(engine.dialect)  # refuses an engine without the SQL, before any work
        report = _protect.protect_table(engine, table, key, method=method, target=target,
                                        rows=None if rows is None else validate.names(rows), cells=cells,
                                        attrs=validate.names(attrs) or None, top_k=top_k, seed=seed, out=out,
                                        in_place=in_place, replace=replace, delete_rows=delete_rows,
                                        taxonomies=taxonomies, emit_sql=emit_sql, execute=execute,
                                        progress=progress, drop=validate.names(drop), pseudonymize=pseudo,
                                        pseudonym_key=pseudonym_key, qi=qi_cols, k=k)
    report.show_values = show_values
    return report


def binarize(db: str | Engine, table: str, spec: str, out: str, *, class_column: str | None = None,
             key: str | None = None, replace: bool = False, emit_sql: str | None = None,
             execute: bool = True) -> BinarizeReport:
    """Copy `table` to `out` as the 0/1 columns a TOML spec derives (plus key and class), in SQL.
    `emit_sql` also writes the run as a reviewable script; `execute=False` only writes the script."""
    from .features import job as _features_job
    from .features import spec as _features_spec

    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    rules = _features_spec.parse_spec(read_text(spec, "spec file"), spec)
    with _open(db) as engine:
        return _features_job.binarize(engine, table, rules, out, keep=[c for c in (key, class_column) if c],
                                      replace=replace, emit_sql=emit_sql, execute=execute)


def select_features(db: str | Engine, table: str, class_column: str, k: int, *, method: str = "distcnt",
                    privacy: str = "ac", mode: str = "stop", top_r: int = 20, key: str | None = None,
                    attrs: Sequence[str] | str | None = None, items: str | None = None,
                    item_column: str | None = None, out: str | None = None, view: bool = False,
                    replace: bool = False, emit_sql: str | None = None, execute: bool = True,
                    progress: Callable[[str], None] | None = None) -> FeaturesReport:
    """Publish the columns `attrs` (default: all but key and class) of a 0/1 table that keep the
    class signal under k-anonymity by containment (Zhang et al. 2017): a table (a view with
    `view`, which a later change of the base table voids: warned) re-checked by SQL to have
    AC >= k. `items` names a long (key, item) table whose rows' class is in `table`.
    `emit_sql` also writes the run as a script; `execute=False` only writes the script."""
    from . import features as _features
    from .features import job as _features_job

    k = validate.k(k)
    validate.choice("method", method, _features.METHODS)
    validate.choice("privacy model", privacy, _features.PRIVACY)
    validate.choice("mode", mode, _features.MODES)
    validate.integer(top_r, "top_r", minimum=1)
    if method == "maximal" and privacy != "ac":
        raise AnonsqlError("--method maximal mines k-AC feature sets (Lemma 3); --privacy kanon does not apply")
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    opts: dict[str, Any] = dict(attrs=validate.names(attrs), method=method, privacy=privacy, mode=mode, top_r=top_r,
                replace=replace, emit_sql=emit_sql, execute=execute, progress=progress)
    with _open(db) as engine:
        if items:
            if view:
                raise AnonsqlError("--view does not apply to --items: the pivot is staged, so the output is a table")
            if not key or not item_column:
                raise AnonsqlError("--items needs --key (the row key in both tables) and --item (the item column)")
            return _features_job.select_features_long(engine, table, items, class_column, key, item_column, k,
                                                      out=out, **opts)
        if item_column:
            raise AnonsqlError("--item needs --items (the long table)")
        return _features_job.select_features(engine, table, class_column, k, key=key, out=out,
                                             materialize=not view, **opts)


def containment(db: str | Engine, table: str, *, class_column: str | None = None, key: str | None = None,
                attrs: Sequence[str] | str | None = None) -> AcReport:
    """AC(D) of a 0/1 table (Zhang et al. Def. 6), its k-anonymity, and DistCnt/HamDist with a class."""
    from .features import job as _features_job

    with _open(db) as engine:
        return _features_job.ac(engine, table, class_column=class_column, key=key, attrs=validate.names(attrs))



def taxonomy_load(db: str | Engine, name: str, *, file: str | Path | None = None, table: str | None = None,
                  replace: bool = False) -> TaxonomyReport:
    """Validate a taxonomy (a TOML/JSON file, or a table with value and parent columns) and
    store it as `name` in anonsql_taxonomies, for the -g methods of protect."""
    from . import protect as _protect

    with _open(db) as engine:
        return _protect.load_taxonomy(engine, name, file=file, table=table, replace=replace)


def taxonomy_show(db: str | Engine, name: str) -> TaxonomyTree:
    """The stored taxonomy `name`: its (value, parent) rows in pre-order (the root's parent None)."""
    from . import protect as _protect

    with _open(db) as engine:
        return _protect.show_taxonomy(engine, name)


def safe_table(db: str | Engine, table: str, dims: Sequence[str] | str | None = None, *,
               tables: str | Sequence[Sequence[str]] | None = None, margins: str = "cube",
               measure: str | None = None, contributor: str | None = None, min_count: int = 3,
               zero_unsafe: bool = False, dominance: str | tuple[int, float] | None = None,
               p_percent: float | None = None, protection: float = 0.0,
               hierarchy: Mapping[str, str] | str | None = None,
               publish: str | Sequence[Mapping[str, str]] | None = None, out: str | None = None, replace: bool = False,
               bounds: bool = False, emit_sql: str | None = None, execute: bool = True,
               progress: Callable[[str], None] | None = None, allow_empty_secondaries: bool = False,
               structural_zeros: str | Sequence[Mapping[str, str]] | None = None) -> TablesReport:
    """Publish a safe aggregate table of `table`: counts (or sums of `measure`) by `dims` with their
    margins (`cube`, `rollup` or `none`), or the linked `tables` ('a*b,c*b') protected together.
    `hierarchy` ('dim=taxonomy,...') gives a dimension the totals of a stored taxonomy: every
    inner node (the root included) is published as the sum of the leaves under it.

    Cells failing a primary rule (fewer than `min_count` rows or contributors; with `measure` and
    `contributor` also (n,k)-`dominance` 'n,k' and the `p_percent` rule) are suppressed, then
    enough secondary cells that the attacker's LP recomputes none of them (interval width > 0,
    or +-`protection` percent of the value). The cells of `publish` ('d=v,e=w; d=v', a dimension
    left out is its total) are forced: always published (status z), never a secondary; if a
    primary cannot be protected without them, an error. `structural_zeros` (the same syntax) are
    cells known to be empty: published as 0, never hidden. An empty cell is never a secondary
    unless `allow_empty_secondaries`. Writes `out` (default <table>_tables: labels, grouping_id,
    level, value NULL when suppressed, status 'published' or 'suppressed', the bounds with
    `bounds`) and the private <out>_private_audit (true values, statuses, reasons), checked by SQL
    recounts and an LP built from the published table alone, in one transaction. `emit_sql` also
    writes the run as a script; `execute=False` only writes it.
    """
    from .tables import MARGINS, Protection, Rules, Spec, parse_assignment, parse_cells, parse_tables
    from .tables import job as _tables_job

    validate.choice("margins", margins, MARGINS)
    min_count = validate.integer(min_count, "min_count", minimum=0)
    level = validate.number(protection, "protection (percent of the cell value)", minimum=0)
    if p_percent is not None:
        p_percent = validate.number(p_percent, "p_percent", above=0)
    dom = _dominance(dominance)
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
    with _open(db) as engine:
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
        engine.expect_rows(validate.rows(engine, tab))
        spec = Spec(names, [[names.index(d) for d in g] for g in groups], margins, value, who,
                    Rules(min_count, zero_unsafe, dom, p_percent),
                    Protection(level, allow_empty=bool(allow_empty_secondaries)), trees, forced, zeros)
        return _tables_job.run(engine, tab, spec, out=out, replace=replace, bounds=bounds, emit_sql=emit_sql,
                               execute=execute, progress=progress)


def _dominance(text: str | tuple[int, float] | None) -> tuple[int, float] | None:
    """'n,k' (n contributors, k percent) -> (n, k)."""
    if text is None:
        return None
    parts = text.split(",") if isinstance(text, str) else list(text)
    try:
        n, k = int(parts[0]), float(parts[1])
        ok = len(parts) == 2 and n >= 1 and 0 < k <= 100
    except (ValueError, IndexError):
        ok = False
    if not ok:
        raise AnonsqlError(f"dominance must be 'n,k' with n >= 1 contributors and 0 < k <= 100 percent, got {text!r}")
    return n, k


def audit_table(db: str | Engine, published: str, hierarchy: Mapping[str, str] | str | None = None) -> AuditReport:
    """Re-run the attacker's LP on a table published by `safe_table`, from its rows alone (and the
    stored taxonomies of its `hierarchy` 'dim=taxonomy,...', as when it was published): `ok`
    says no primary cell (by <published>_private_audit when it exists, else every suppressed
    cell) can be recomputed exactly."""
    from .tables import job as _tables_job
    from .tables import parse_assignment

    trees = parse_assignment(hierarchy, "--hierarchy") if isinstance(hierarchy, str) else hierarchy
    with _open(db) as engine:
        return _tables_job.audit(engine, get_table(engine, published), trees)


def _release_db(spec: Any, db: str | Engine | None) -> str | Engine:
    """The database of a release: `db` if given, else the spec's [source] db (a file path is
    relative to the spec's folder)."""
    if db is not None:
        return db
    given = spec.source.db
    if not given:
        raise AnonsqlError(f"{spec.path}: no database: give [source] db = \"...\" in the spec or --db")
    return given if "://" in given or given == ":memory:" else str(spec.path.parent / given)


def release_plan(spec: str | Path, db: str | Engine | None = None) -> PlanReport:
    """What the release declared in the TOML file `spec` will run, on which tables; changes nothing."""
    from . import release as _release
    from .release import plan as _release_plan

    parsed = _release.load(spec)
    with _open(_release_db(parsed, db)) as engine:
        return _release_plan.make_plan(engine, parsed)


def release_run(spec: str | Path, db: str | Engine | None = None, *, replace: bool = False,
                progress: Callable[[str], None] | None = None) -> ReleaseReport:
    """Run every step and prove every gate of the release `spec` in one transaction (all or
    nothing), then write its manifest, SQL script and HTML report (see docs/release.md)."""
    from . import release as _release
    from .release import job as _release_job

    parsed = _release.load(spec)
    with _open(_release_db(parsed, db)) as engine:
        return _release_job.run(engine, parsed, replace=replace, progress=progress)


def release_verify(spec: str | Path, db: str | Engine | None = None, *,
                   progress: Callable[[str], None] | None = None) -> ReleaseVerifyReport:
    """Re-prove every guarantee of a run release on its published tables, and compare the input's
    and outputs' fingerprints with the manifest. `ok` says."""
    from . import release as _release
    from .release import job as _release_job

    parsed = _release.load(spec)
    with _open(_release_db(parsed, db)) as engine:
        return _release_job.verify(engine, parsed, progress=progress)
