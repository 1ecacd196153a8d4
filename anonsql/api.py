"""The typed Python API behind the CLI: validate input, run the SQL, return result objects."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import validate
from .catalog import Table, get_table
from .data import risk
from .engine import Engine
from .engine import opened as _open  # connect for one call; an Engine passed in stays open
from .errors import AnonsqlError, redact
from .files import read_text
from .kanon.model import COSTS
from .validate import Interval, Names, OutputFile, Parsed, Ratio, StrOptions, lazy, lazy_parser, validate_params
from .verify import KAnonymityReport, k_anonymity

if TYPE_CHECKING:
    from .attack.job import DifferenceReport, LinkageReport, RefineReport, RiskReport
    from .ckm.job import CkmAuditReport, CkmReport, PtableReport
    from .cleanup import CleanupReport
    from .data.binning import BinReport, BinSpec
    from .data.loading import LoadReport
    from .data.look import RowsReport
    from .data.profile import ProfileReport
    from .evaluate.job import EvaluationReport
    from .features.job import AcReport, BinarizeReport, FeaturesReport
    from .hierarchy import HierarchyReport
    from .kanon.job import KanonReport
    from .nbc.job import BreachReport, CheckReport, PublishReport, VerifyReport, ViewsReport
    from .protect import ProtectReport
    from .tables.job import AuditReport, TablesReport
    from .taxonomy import TaxonomyReport, TaxonomyTree


K = Interval(int, 1, None)
SEED = Interval(int, 0, None)
EMIT_SQL = [OutputFile(label="--emit-sql"), None]
NAMES = [Names(), None]
RISK = Interval(float, 0, None, label="risk threshold")


L_DIVERSITY = Parsed(functools.partial(risk.parse_limits, what="--l-diversity", whole=True), label="--l-diversity",
                     bad=["diagnosis=0", "diagnosis"], kinds=(str, Mapping))
T_CLOSENESS = Parsed(functools.partial(risk.parse_limits, what="--t-closeness", whole=False), label="--t-closeness",
                     bad=["diagnosis=2", "diagnosis"], kinds=(str, Mapping))
#: kanon's attribute-disclosure models (anonsql.kanon.diversity.parse), by parameter.
KANON_MODELS = {kind: Parsed(lazy_parser(".kanon.diversity", "parse", kind), label="--" + kind.replace("_", "-"),
                             bad=[bad, "diagnosis"], kinds=(str, Mapping))
                for kind, bad in (("l_diversity", "diagnosis=0"), ("entropy_l", "diagnosis=0.5"),
                                  ("recursive_cl", "diagnosis=3"), ("t_closeness", "diagnosis=2"))}
Limits = Mapping[str, Any] | str | None
TAXONOMIES = Parsed(lazy_parser(".protect.request", "parse_assignment"), label="--taxonomy",
                    bad=["zip", "zip=a,zip=b"], kinds=(str, Mapping))
HIERARCHY: list[validate.Rule] = [
    Parsed(lazy_parser(".tables", "parse_assignment", "--hierarchy"), label="--hierarchy", bad=["region"]),
    Mapping, None]


@validate_params({"replace": bool})
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


@validate_params({"name": StrOptions(lazy(".data.datasets", "DATASETS"), label="data set"), "replace": bool})
def load_dataset(db: str | Engine, name: str, table: str | None = None, *, replace: bool = False) -> LoadReport:
    """Load a bundled data set (see anonsql.data.bundled.DATASETS) into `table` (default: its name)."""
    from .data import datasets

    with _open(db, create=True) as engine:
        return datasets.load_dataset(engine, name, table or name.replace("-", "_"), replace=replace)


def cleanup(db: str | Engine) -> CleanupReport:
    """Put right what crashed runs left on an engine without transactions (Spark), in every
    schema: each output back under its name (old or new), stale working tables dropped."""
    from . import cleanup as _cleanup

    with _open(db) as engine:
        return _cleanup.cleanup(engine, redact(engine.url))


@validate_params({"qi": NAMES, "sensitive": NAMES, "risk_threshold": RISK})
def profile(db: str | Engine | Any, table: str, *, qi: Sequence[str] | str | None = None,
            class_column: str | None = None, sensitive: Sequence[str] | str | None = None,
            risk_threshold: float = risk.RISK_THRESHOLD) -> ProfileReport:
    """Row count, per-column type/distinct/NULLs, the current k and re-identification risk over
    `qi`, l-diversity and t-closeness of each `sensitive` column, the class balance."""
    from .data import profile as _profile

    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = tab.resolve(validate.names(qi))
        cls = validate.class_column(engine, tab, class_column, qi_cols) if class_column else None
        sens = _sensitive(tab, validate.names(sensitive), qi_cols)
        rows = validate.rows(engine, tab, empty=True)
        engine.expect_rows(rows)
        return _profile.profile_table(engine, tab, rows, qi_cols, cls, sens, float(risk_threshold))


@validate_params({"qi": Names(), "k": K, "show": Interval(int, 0, None), "risk_threshold": RISK,
                  "l_diversity": [L_DIVERSITY, None], "t_closeness": [T_CLOSENESS, None]})
def check(db: str | Engine | Any, table: str, qi: Sequence[str] | str, k: int, *, show: int = 20,
          l_diversity: Mapping[str, int] | str | None = None, t_closeness: Mapping[str, float] | str | None = None,
          risk_threshold: float = risk.RISK_THRESHOLD) -> KAnonymityReport:
    """Is `table` k-anonymous over `qi` (NULL counting as its own value)? Lists the worst groups
    and the re-identification risk; `l_diversity` ('COL=L' or {col: l}) and `t_closeness`
    ('COL=T') add checks on sensitive columns. The report is truthy only when all hold."""
    ls = risk.parse_limits(l_diversity, "--l-diversity", whole=True)
    ts = risk.parse_limits(t_closeness, "--t-closeness", whole=False)
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = validate.quasi_identifiers(tab, qi)
        ls = dict(zip(_sensitive(tab, list(ls), qi_cols), ls.values()))
        ts = dict(zip(_sensitive(tab, list(ts), qi_cols), ts.values()))
        rows = validate.rows(engine, tab, empty=True)
        engine.expect_rows(rows)
        report = k_anonymity(engine, tab, qi_cols, k, show=show)
        if not rows:
            report.notes.append(f"table {tab} is empty: no row to re-identify, so every check holds")
            return report
        report.risk = risk.reidentification(engine, tab, qi_cols, float(risk_threshold))
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


@validate_params({"qi": Names(), "k": K, "cost": StrOptions(COSTS, label="cost"),
                  "alpha": Interval(float, 0, None, label="alpha (the pseudo count)"), "seed": SEED,
                  "in_place": bool, "replace": bool, "emit_sql": EMIT_SQL, "execute": bool, "drop": NAMES,
                  "pseudonymize": NAMES, "restore": bool,
                  "local_recoding": bool, **{kind: [KANON_MODELS[kind], None] for kind in KANON_MODELS},
                  "hierarchy": [Parsed(lazy_parser(".hierarchy.model", "parse_all"), label="--hierarchy",
                                       bad=["age", "age=interval:10,15"], kinds=(str, list, tuple, Mapping)), None],
                  "max_suppressed_records": Interval(float, 0, 1, label="--max-suppressed-records"),
                  "hierarchy_bounds": bool, "search_utility": StrOptions(("loss", "mar"), label="--search-utility")})
def k_anonymize(db: str | Engine, table: str, qi: Sequence[str] | str, class_column: str | None, k: int, *,
                cost: str = "mar", alpha: float = 1.0, seed: int = 0, out: str | None = None,
                in_place: bool = False, replace: bool = False, emit_sql: str | None = None,
                execute: bool = True, progress: Callable[[str], None] | None = None,
                drop: Sequence[str] | str | None = None, pseudonymize: Sequence[str] | str | None = None,
                key_file: str | None = None, changes: str | None = None, l_diversity: Limits = None,
                entropy_l: Limits = None, recursive_cl: Limits = None, t_closeness: Limits = None,
                hierarchy: Sequence[str] | str | Mapping[str, str] | None = None,
                max_suppressed_records: float = 0.05, hierarchy_bounds: bool = False,
                search_utility: str = "loss", restore: bool = False, local_recoding: bool = False) -> KanonReport:
    """k-anonymize `table` over `qi` by bottom-up cell suppression (Kameya & Hayashi 2016).

    Writes a new table (`out`, default <table>_k<k>) or, with `in_place`, rewrites the source
    in one transaction; checked by SQL before returning (VerificationError and a rollback
    otherwise). `class_column=None` treats all rows as one class (C = 1). `drop` removes direct
    identifiers, `pseudonymize` replaces them by HMAC-SHA256 pseudonyms keyed by `key_file`
    (or $ANONSQL_PSEUDONYM_KEY); `changes` names a new PRIVATE table listing every blanked
    cell's original value. `emit_sql` also writes the run as a reviewable script to that file
    (`-` for standard output); `execute=False` (a dry run) only writes the script.
    `l_diversity` ('COL=L' or {col: L}), `entropy_l` ({col: L}), `recursive_cl` ('COL=C,L') and
    `t_closeness` ({col: T}) are enforced as constraints of the same loop and checked by SQL.
    `hierarchy` ('COL=KIND:ARGS' texts or {col: spec}, anonsql.hierarchy) generalizes those QIs
    first, at the lattice node of least loss metric leaving at most `max_suppressed_records` of
    the rows in classes below k (anonsql.kanon.recoding), then suppresses; `hierarchy_bounds` adds
    <col>_lo/<col>_hi columns (the source's type, NULL where suppressed) beside interval and date QIs;
    `search_utility` 'mar' has the search minimise the papers' MAR cost (KL) instead of ARX's loss metric.
    `restore=True` then gives blanked cells back while every class keeps k and those models
    (anonsql.kanon.restore: not the paper's; fewer blanks, a different trade-off).
    `local_recoding=True` (with `hierarchy`) gives them back as the lowest label of their ladder that
    keeps every class at k (anonsql.kanon.relabel: a greedy local recoding after the global one).
    """
    from .kanon import entry as _kanon_entry

    with _open(db) as engine:
        return _kanon_entry.k_anonymize(engine, table, qi, class_column, k, cost=cost, alpha=alpha, seed=seed, out=out,
                                        in_place=in_place, replace=replace, emit_sql=emit_sql, execute=execute,
                                        progress=progress, drop=drop, pseudonymize=pseudonymize, key_file=key_file,
                                        changes=changes, l_diversity=l_diversity, entropy_l=entropy_l,
                                        recursive_cl=recursive_cl, t_closeness=t_closeness, hierarchy=hierarchy,
                                        max_suppressed_records=max_suppressed_records,
                                        hierarchy_bounds=hierarchy_bounds, search_utility=search_utility,
                                        restore=restore, local_recoding=local_recoding)


@validate_params({"replace": bool, "emit_sql": EMIT_SQL, "execute": bool})
def bin_columns(db: str | Engine, table: str, specs: Sequence[str | BinSpec], out: str, *,
                replace: bool = False, emit_sql: str | None = None, execute: bool = True) -> BinReport:
    """Copy `table` to `out` with numeric columns replaced by range labels (width or quantiles).
    `emit_sql` also writes the run as a reviewable script; `execute=False` only writes the script."""
    from .data import binning

    validate.dry_run(execute, emit_sql)
    with _open(db) as engine:
        return binning.bin_table(engine, table, specs, out, replace=replace, emit_sql=emit_sql, execute=execute)


@validate_params({"qi": Names(), "folds": Interval(int, 2, None), "seed": SEED, "classifiers": NAMES,
                  "alpha": Interval(float, 0, None, closed="neither", label="alpha (the Laplace pseudo count)")})
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


@validate_params({"attrs": Names(), "precedence": NAMES, "counts": bool})
def nbc_views(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, *,
              precedence: Sequence[str] | str | None = None, counts: bool = False) -> ViewsReport:
    """The NBC-enabling views (P_c, N^i_{t,c}) in one SQL scan and Corollary 4's smallest rho."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_views(engine, table, class_column, attrs, precedence=precedence, counts=counts)


@validate_params({"attrs": Names(), "rho": Ratio(), "precedence": NAMES})
def nbc_check(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: object, *,
              precedence: Sequence[str] | str | None = None) -> CheckReport:
    """Do the raw views already satisfy condition (10) for rho (Corollary 4)? `ok` says."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_check(engine, table, class_column, attrs, rho, precedence=precedence)


@validate_params({"attrs": Names(), "rho": [Ratio(), None], "r": [Ratio(), None], "precedence": NAMES,
                  "replace": bool, "synthetic": bool, "emit_sql": EMIT_SQL, "execute": bool,
                  "root": StrOptions(lazy(".nbc.transform", "ROOTS"), label="root"),
                  "prior": [Parsed(lazy_parser(".nbc.job", "prior_weights"), label="--prior",
                                   bad=["50K", "50K=0", "50K=x"], kinds=(str, dict)), None]})
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

    with _open(db) as engine:
        return _nbc_job.run_publish(engine, table, class_column, attrs, rho, out, precedence=precedence,
                                    replace=replace, prior=prior, r=r, synthetic=synthetic, emit_sql=emit_sql,
                                    execute=execute, root=root, progress=progress)


@validate_params({"attrs": Names(), "precedence": NAMES})
def nbc_verify(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, published: str, *,
               precedence: Sequence[str] | str | None = None) -> VerifyReport:
    """Definition 2: does the NBC of the published tables rank classes exactly like the table's? `ok` says."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_verify(engine, table, class_column, attrs, published, precedence=precedence)


@validate_params({"attrs": Names(), "precedence": NAMES})
def nbc_breach(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, known: str | dict, *,
               published: str | None = None, precedence: Sequence[str] | str | None = None) -> BreachReport:
    """Tiny tables: the attacker's prior and posterior over all worlds consistent with the views."""
    from .nbc import job as _nbc_job

    with _open(db) as engine:
        return _nbc_job.run_breach(engine, table, class_column, attrs, known, published=published,
                                   precedence=precedence)


@validate_params({"method": StrOptions(lazy(".protect", "METHODS"), label="method"), "rows": NAMES, "attrs": NAMES,
                  "top_k": [Interval(int, 2, None), None], "seed": SEED, "in_place": bool, "replace": bool,
                  "delete_rows": bool, "emit_sql": EMIT_SQL, "execute": bool, "drop": NAMES, "pseudonymize": NAMES,
                  "show_values": bool, "qi": NAMES, "k": [K, None], "taxonomies": [TAXONOMIES, None]})
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
    from .protect import entry as _protect_entry

    with _open(db) as engine:
        report = _protect_entry.protect_table(engine, table, key, method=method, target=target, rows=rows, cells=cells,
                                              attrs=attrs, top_k=top_k, seed=seed, out=out, in_place=in_place,
                                              replace=replace, delete_rows=delete_rows, taxonomies=taxonomies,
                                              emit_sql=emit_sql, execute=execute, progress=progress, drop=drop,
                                              pseudonymize=pseudonymize, key_file=key_file, qi=qi, k=k)
    report.show_values = show_values
    return report


@validate_params({"replace": bool, "emit_sql": EMIT_SQL, "execute": bool})
def binarize(db: str | Engine, table: str, spec: str, out: str, *, class_column: str | None = None,
             key: str | None = None, replace: bool = False, emit_sql: str | None = None,
             execute: bool = True) -> BinarizeReport:
    """Copy `table` to `out` as the 0/1 columns a TOML spec derives (plus key and class), in SQL.
    `emit_sql` also writes the run as a reviewable script; `execute=False` only writes the script."""
    from .features import job as _features_job
    from .features import spec as _features_spec

    validate.dry_run(execute, emit_sql)
    rules = _features_spec.parse_spec(read_text(spec, "spec file"), spec)
    with _open(db) as engine:
        return _features_job.binarize(engine, table, rules, out, keep=[c for c in (key, class_column) if c],
                                      replace=replace, emit_sql=emit_sql, execute=execute)


@validate_params({"k": K, "method": StrOptions(lazy(".features", "METHODS"), label="method"),
                  "privacy": StrOptions(lazy(".features", "PRIVACY"), label="privacy model"),
                  "mode": StrOptions(lazy(".features", "MODES"), label="mode"), "top_r": Interval(int, 1, None),
                  "attrs": NAMES, "view": bool, "replace": bool, "emit_sql": EMIT_SQL, "execute": bool})
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
    from .features import job as _features_job

    if method == "maximal" and privacy != "ac":
        raise AnonsqlError("--method maximal mines k-AC feature sets (Lemma 3); --privacy kanon does not apply")
    validate.dry_run(execute, emit_sql)
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


@validate_params({"attrs": NAMES})
def containment(db: str | Engine, table: str, *, class_column: str | None = None, key: str | None = None,
                attrs: Sequence[str] | str | None = None) -> AcReport:
    """AC(D) of a 0/1 table (Zhang et al. Def. 6), its k-anonymity, and DistCnt/HamDist with a class."""
    from .features import job as _features_job

    with _open(db) as engine:
        return _features_job.ac(engine, table, class_column=class_column, key=key, attrs=validate.names(attrs))



@validate_params({"replace": bool})
def taxonomy_load(db: str | Engine, name: str, *, file: str | Path | None = None, table: str | None = None,
                  replace: bool = False) -> TaxonomyReport:
    """Validate a taxonomy (a TOML/JSON file, or a table with value and parent columns) and
    store it as `name` in anonsql_taxonomies, for the -g methods of protect."""
    from .taxonomy import store as _taxonomy_store

    with _open(db) as engine:
        return _taxonomy_store.load_taxonomy(engine, name, file=file, table=table, replace=replace)


def hierarchy_show(db: str | Engine, table: str, hierarchies: Sequence[str] | str | Mapping[str, str]
                   ) -> HierarchyReport:
    """What each level of each hierarchy ('COLUMN=KIND:ARGS', or {column: spec}) publishes on
    `table`: meaning, distinct labels and rows covered, counted by SQL (anonsql.hierarchy)."""
    from .hierarchy import show as _hierarchy_show

    with _open(db) as engine:
        return _hierarchy_show.show_hierarchies(engine, table, hierarchies)


def taxonomy_show(db: str | Engine, name: str) -> TaxonomyTree:
    """The stored taxonomy `name`: its (value, parent) rows in pre-order (the root's parent None)."""
    from .taxonomy import store as _taxonomy_store

    with _open(db) as engine:
        return _taxonomy_store.show_taxonomy(engine, name)


@validate_params({"dims": NAMES, "margins": StrOptions(lazy(".tables", "MARGINS"), label="margins"),
                  "min_count": Interval(int, 0, None), "zero_unsafe": bool, "dominance": [validate.Dominance(), None],
                  "p_percent": [Interval(float, 0, None, closed="neither"), None],
                  "protection": Interval(float, 0, None, label="protection (percent of the cell value)"),
                  "replace": bool, "bounds": bool, "emit_sql": EMIT_SQL, "execute": bool, "hierarchy": HIERARCHY,
                  "tables": [Parsed(lazy_parser(".tables", "parse_tables"), label="tables", bad=["a**b"]), list, tuple,
                             None],
                  "publish": [Parsed(lazy_parser(".tables", "parse_cells"), label="--publish", bad=["region"]), list,
                              tuple, None],
                  "structural_zeros": [Parsed(lazy_parser(".tables", "parse_cells", "--structural-zeros"),
                                              label="--structural-zeros", bad=["region"]), list, tuple, None],
                  "allow_empty_secondaries": bool})
def safe_table(db: str | Engine, table: str, dims: Sequence[str] | str | None = None, *,
               tables: str | Sequence[Sequence[str]] | None = None, margins: str = "cube",
               measure: str | None = None, contributor: str | None = None, min_count: int = 3,
               zero_unsafe: bool = False, dominance: str | tuple[int, float] | None = None,
               p_percent: float | None = None, protection: float = 0.0,
               hierarchy: Mapping[str, str] | str | None = None,
               publish: str | Sequence[Mapping[str, str]] | None = None, out: str | None = None, replace: bool = False,
               bounds: bool = False, emit_sql: str | None = None, execute: bool = True,
               progress: Callable[[str], None] | None = None, allow_empty_secondaries: bool = False,
               structural_zeros: str | Sequence[Mapping[str, str]] | None = None,
               previous: str | None = None) -> TablesReport:
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
    recounts and an LP built from the published table alone, in one transaction. With the
    dominance or p% rule, no union of a primary's suppressed companions in one additive relation
    may be dominated either (more cells are suppressed until none is). `previous` (last period's
    published table of the same shape, or its private audit) makes its suppressed cells the
    secondaries chosen first; the report counts the cells that changed. `emit_sql` also
    writes the run as a script; `execute=False` only writes it.
    """
    from .tables import entry as _tables_entry  # before connecting: without the `tables` extra, one error line first

    with _open(db) as engine:
        return _tables_entry.safe_table(engine, table, dims, tables=tables, margins=margins, measure=measure,
                                        contributor=contributor, min_count=min_count, zero_unsafe=zero_unsafe,
                                        dominance=dominance, p_percent=p_percent, protection=protection,
                                        hierarchy=hierarchy, publish=publish, out=out, replace=replace, bounds=bounds,
                                        emit_sql=emit_sql, execute=execute, progress=progress,
                                        allow_empty_secondaries=allow_empty_secondaries,
                                        structural_zeros=structural_zeros, previous=previous)


@validate_params({"dims": NAMES, "margins": StrOptions(lazy(".tables", "MARGINS"), label="margins"),
                  "D": Interval(int, 1, None, label="--ckm-d"),
                  "V": Interval(float, 0, None, closed="neither", label="--ckm-v"),
                  "js": Interval(int, 0, None, label="--ckm-js"),
                  "pstay": [Interval(float, 0, 1, closed="neither", label="--ckm-pstay"), None],
                  "compare_min_count": [Interval(int, 0, None, label="--compare-suppression"), None],
                  "top_k": Interval(int, 1, None, label="--ckm-top-k"),
                  "scale": StrOptions(lazy(".ckm.rewrite", "SCALES"), label="--ckm-scale"),
                  "m": Interval(float, 0, None, closed="neither", label="--ckm-m"), "replace": bool,
                  "tables": [Parsed(lazy_parser(".tables", "parse_tables"), label="tables", bad=["a**b"]), list, tuple,
                             None], "hierarchy": HIERARCHY, "emit_sql": EMIT_SQL, "execute": bool})
def ckm_table(db: str | Engine, table: str, dims: Sequence[str] | str | None = None, *,
              tables: str | Sequence[Sequence[str]] | None = None, margins: str = "cube",
              record_key: str | None = None, record_key_column: str | None = None, key_file: str | None = None,
              D: int = 3, V: float = 1.5, js: int = 1, pstay: float | None = None, measure: str | None = None,
              contributor: str | None = None, top_k: int = 1, scale: str = "top", m: float = 0.05,
              compare_min_count: int | None = None, hierarchy: Mapping[str, str] | str | None = None,
              out: str | None = None, replace: bool = False, emit_sql: str | None = None, execute: bool = True,
              progress: Callable[[str], None] | None = None) -> CkmReport:
    """Publish the counts of `table` by `dims` (or the linked `tables`) with their `margins`, each
    perturbed by the cell key method: record keys HMAC-SHA256(K, `record_key`) (K from `key_file` or
    $ANONSQL_PSEUDONYM_KEY, never stored) or read from `record_key_column` (keys in [0, 1)); the
    maximum-entropy ptable of `D` (largest |noise|), `V` (variance), `js` (no count in 1..js-1) and
    `pstay`; one SQL statement writes `out` (default <table>_ckm: labels, grouping_id, value; cells
    published as 0 left out) beside the public <out>_ptable and <out>_ckm_spec, re-checked by an
    independent recount in the same transaction. With `measure` a magnitude table: the sum of that
    column per cell perturbed by m * s_c * v (s_c the sum of the `top_k` largest contributions of
    `contributor`, default the record key's unit, or with scale 'mean' the mean contribution),
    the count perturbed alongside (column frequency). `compare_min_count` also reports the share
    of cells suppression with that minimum count would hide. `hierarchy` 'dim=taxonomy,...': that
    dimension's totals are every node of its stored taxonomy (as `safe_table`), each node's count
    and cell key summed over its leaves' records. `emit_sql` writes the run as a reviewable SQL
    script (the ptable's rows, the one statement, a check; never the key: the HMAC's padded keys
    stay placeholders); `execute=False` with it is a dry run that changes nothing."""
    from .ckm import entry as _ckm_entry

    with _open(db) as engine:
        return _ckm_entry.ckm_table(engine, table, dims, tables=tables, margins=margins, record_key=record_key,
                                    record_key_column=record_key_column, key_file=key_file, D=D, V=V, js=js,
                                    pstay=pstay, measure=measure, contributor=contributor, top_k=top_k, scale=scale,
                                    m=m, compare_min_count=compare_min_count, hierarchy=hierarchy, out=out,
                                    replace=replace, emit_sql=emit_sql, execute=execute, progress=progress)


@validate_params({"D": Interval(int, 1, None, label="--ckm-d"),
                  "V": Interval(float, 0, None, closed="neither", label="--ckm-v"),
                  "js": Interval(int, 0, None, label="--ckm-js"),
                  "pstay": [Interval(float, 0, 1, closed="neither", label="--ckm-pstay"), None]})
def ckm_ptable(D: int = 3, V: float = 1.5, js: int = 1, pstay: float | None = None) -> PtableReport:
    """The cell key method's ptable of `D`, `V`, `js` and `pstay` (see `ckm_table`): its rows
    p(i -> i + v), their cell key intervals, the variance each row reaches and its fingerprint."""
    from .ckm import job as _ckm_job
    from .ckm.ptable import Params

    return _ckm_job.show_ptable(Params(D, float(V), js, pstay).check())


@validate_params({"hierarchy": HIERARCHY})
def audit_table(db: str | Engine, published: str, hierarchy: Mapping[str, str] | str | None = None,
                key_file: str | None = None) -> AuditReport | CkmAuditReport:
    """Re-run the attacker's LP on a table published by `safe_table`, from its rows alone (and the
    stored taxonomies of its `hierarchy` 'dim=taxonomy,...', as when it was published): `ok`
    says no primary cell (by <published>_private_audit when it exists, else every suppressed
    cell) can be recomputed exactly. A table of `ckm_table` is re-derived instead (its spec, the
    source, the record keys with `key_file`, every cell's noise looked up again)."""
    from .ckm import job as _ckm_job
    from .tables import job as _tables_job
    from .tables import parse_assignment

    trees = parse_assignment(hierarchy, "--hierarchy") if isinstance(hierarchy, str) else hierarchy
    with _open(db) as engine:
        table = get_table(engine, published)
        if _ckm_job.is_ckm(engine, table):
            return _ckm_job.audit(engine, table, key_file)
        return _tables_job.audit(engine, table, trees)


@validate_params({"qi": Names(), "sampling_fraction": [Interval(float, 0, 1, closed="right", label="sampling fraction"),
                                                       None],
                  "risk_threshold": RISK, "max_journalist_risk": [Interval(float, 0, 1, label="max journalist risk"),
                                                                  None]})
def reidentification_risk(db: str | Engine, table: str, qi: Sequence[str] | str, *, population: str | None = None,
                          population_weights: str | None = None, sampling_fraction: float | None = None,
                          risk_threshold: float = risk.RISK_THRESHOLD,
                          max_journalist_risk: float | None = None) -> RiskReport:
    """Re-identification risk of `table` over `qi` (docs/concepts.md defines each figure): prosecutor
    risk; against a `population` table or the sampling weights in column `population_weights`, the
    journalist, marketer and (weights) Benedetti-Franconi individual risk; with a sampling fraction
    (given, or n / N of the population) population uniqueness by Pitman, Zayatz, SNB and Dankar's
    rule. `max_journalist_risk` adds a gate: the report is truthy only when max 1/F_k is within it."""
    from .attack import entry as _attack

    with _open(db) as engine:
        return _attack.reidentification_risk(engine, table, qi, population=population,
                                             population_weights=population_weights,
                                             sampling_fraction=sampling_fraction, risk_threshold=float(risk_threshold),
                                             max_journalist_risk=max_journalist_risk)


@validate_params({"qi": Names(), "max_linkage_success": [Interval(float, 0, 1, label="max linkage success"), None]})
def linkage_attack(db: str | Engine, published: str, source: str, qi: Sequence[str] | str, *, key: str | None = None,
                   max_linkage_success: float | None = None) -> LinkageReport:
    """The linkage attack on `published`: an attacker holds the quasi-identifiers `qi` of every row
    of `source` and matches them to the published rows (a published NULL, ⊥, matches any value).
    Reports the expected share of correct unique matches and, with `key` (a row key kept in both
    tables: the private mapping), the realized share, per number of candidates.
    `max_linkage_success` adds a gate (realized share with a key, else expected)."""
    from .attack import entry as _attack

    with _open(db) as engine:
        return _attack.linkage_attack(engine, published, source, qi, key=key, max_linkage_success=max_linkage_success)


@validate_params({"min_count": Interval(int, 1, None, label="min count")})
def difference_attack(db: str | Engine, earlier: str, later: str, *, min_count: int = 3) -> DifferenceReport:
    """The differencing attack on two safe tables published by `safe_table` over the same cells,
    the later one counting the earlier's rows and rows added since (this month's cumulative table
    and last month's): the tables' attacker LP over both at once. `ok` says the pair recomputes no
    primary cell of either table exactly, and no cell of the added rows to a count below
    `min_count`. Reports the exposed cells' labels, never their values."""
    from .attack import entry as _attack

    with _open(db) as engine:
        return _attack.difference_attack(engine, earlier, later, min_count=min_count)


@validate_params({"tables": NAMES, "qi": NAMES, "method": StrOptions(("any", "kanon"), label="method"),
                  "sensitive": NAMES, "min_candidates": Interval(int, 1, None, label="min candidates")})
def refine_attack(db: str | Engine, published: str, tables: Sequence[str] | str | None = None, *,
                  qi: Sequence[str] | str | None = None, class_column: str | None = None, method: str = "any",
                  sensitive: Sequence[str] | str | None = None, min_candidates: int = 2) -> RefineReport:
    """The refinement attack on a release's artefacts together: the row-level table `published`
    (suppressed cells NULL) and the safe count `tables` of the same rows (`safe_table`'s, from the
    original values); with `method="kanon"` (and its `qi`, `class_column`) also what kanon's
    bottom-up suppression implies. `ok` says no suppressed cell keeps fewer than `min_candidates`
    possible values and no `sensitive` cell a single one; the report counts cells, never values."""
    from .attack import entry as _attack

    with _open(db) as engine:
        return _attack.refine_attack(engine, published, tables or [], qi=qi, class_column=class_column, method=method,
                                     sensitive=sensitive, min_candidates=min_candidates)


@validate_params({"limit": Interval(int, 0, None, label="limit")})
def show_table(db: str | Engine | Any, table: str, *, limit: int = 20) -> RowsReport:
    """A quick look (`anonsql show`): the first `limit` rows of `table`, as stored."""
    from .data import look

    with _open(db) as engine:
        return look.show_table(engine, table, limit)


@validate_params({"limit": Interval(int, 0, None, label="limit")})
def read_query(db: str | Engine | Any, query: str, *, limit: int = 100) -> RowsReport:
    """The rows of one read-only query (`anonsql sql`), at most `limit`: a query that would write
    is refused before it runs, and the accepted one runs in a transaction rolled back after."""
    from .data import look

    with _open(db) as engine:
        return look.read_query(engine, query, limit)
