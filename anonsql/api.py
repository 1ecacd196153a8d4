"""The typed Python API behind the CLI: validate input, run the SQL, return result objects."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import features as _features
from . import protect as _protect
from . import validate
from .catalog import get_table
from .data import binning, datasets
from .data.binning import BinReport, BinSpec
from .data.loading import LoadReport, read_csv, write_frame
from .data.profile import ProfileReport, profile_table
from .engine import Engine, connect
from .errors import AnonsqlError
from .evaluate import CLASSIFIERS, EvaluationReport
from .evaluate import evaluate as _evaluate
from .features import job as _features_job
from .features.job import AcReport, BinarizeReport, FeaturesReport
from .features.spec import parse_spec as parse_binary_spec
from .files import read_text
from .kanon import COSTS, NEEDS_POSITIVE_ALPHA
from .kanon import job as _kanon_job
from .kanon.job import KanonReport
from .nbc import job as _nbc_job
from .nbc.job import BreachReport, CheckReport, PublishReport, VerifyReport, ViewsReport
from .protect import ProtectReport, TaxonomyReport, TaxonomyTree, read_cells_csv
from .verify import KAnonymityReport, k_anonymity


@contextmanager
def _open(db: str | Engine, *, create: bool = False) -> Iterator[Engine]:
    """Connect for one call; an Engine passed in stays open for the caller."""
    engine = connect(db, create=create)
    try:
        yield engine
    finally:
        if engine is not db:
            engine.close()


def load_csv(db: str | Engine, path: str, table: str, *, na: Sequence[str] = (), replace: bool = False) -> LoadReport:
    """Load a CSV file (header row; `na` markers and empty fields become NULL) into a new table."""
    frame = read_csv(path, na)
    if frame.empty:
        raise AnonsqlError(f"CSV {path} has a header but no rows")
    with _open(db, create=True) as engine:
        return write_frame(engine, frame, table, replace=replace)


def load_dataset(db: str | Engine, name: str, table: str | None = None, *, replace: bool = False) -> LoadReport:
    """Load a bundled data set (see anonsql.data.datasets.DATASETS) into `table` (default: its name)."""
    validate.choice("data set", name, list(datasets.DATASETS))
    with _open(db, create=True) as engine:
        return datasets.load_dataset(engine, name, table or name.replace("-", "_"), replace=replace)


def profile(db: str | Engine, table: str, *, qi: Sequence[str] | str | None = None,
            class_column: str | None = None) -> ProfileReport:
    """Row count, per-column type/distinct/NULLs, the current k over `qi`, the class balance."""
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = tab.resolve(validate.names(qi))
        cls = validate.class_column(engine, tab, class_column, qi_cols) if class_column else None
        rows = validate.rows(engine, tab)
        return profile_table(engine, tab, rows, qi_cols, cls)


def check(db: str | Engine, table: str, qi: Sequence[str] | str, k: int, *, show: int = 20) -> KAnonymityReport:
    """Is `table` k-anonymous over `qi` (NULL counting as its own value)? Lists the worst groups."""
    k = validate.k(k)
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = validate.quasi_identifiers(tab, qi)
        validate.rows(engine, tab)
        return k_anonymity(engine, tab, qi_cols, k, show=show)


def k_anonymize(db: str | Engine, table: str, qi: Sequence[str] | str, class_column: str, k: int, *,
                cost: str = "mar", alpha: float = 1.0, seed: int = 0, out: str | None = None,
                in_place: bool = False, replace: bool = False, emit_sql: str | None = None,
                execute: bool = True, progress: Callable[[str], None] | None = None) -> KanonReport:
    """k-anonymize `table` over `qi` by bottom-up cell suppression (Kameya & Hayashi 2016).

    Writes a new table (`out`, default <table>_k<k>) or, with `in_place`, rewrites the source
    in one transaction; checked by SQL before returning (VerificationError and a rollback
    otherwise). `emit_sql` also writes the run as a reviewable script to that file (`-` for
    standard output); `execute=False` (a dry run) only writes the script.
    """
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
        cls = validate.class_column(engine, tab, class_column, qi_cols)
        rows = validate.rows(engine, tab)
        validate.k_within(k, rows)
        return _kanon_job.run(engine, tab, rows, qi_cols, cls, k, cost=cost, alpha=alpha, seed=seed, out=out,
                              in_place=in_place, replace=replace, emit_sql=emit_sql, execute=execute,
                              progress=progress)


def bin_columns(db: str | Engine, table: str, specs: Sequence[str | BinSpec], out: str, *,
                replace: bool = False) -> BinReport:
    """Copy `table` to `out` with numeric columns replaced by range labels (width or quantiles)."""
    parsed = [s if isinstance(s, BinSpec) else BinSpec.parse(s) for s in specs]
    if not parsed:
        raise AnonsqlError("nothing to bin: give at least one COLUMN=width:W or COLUMN=quantiles:Q")
    with _open(db) as engine:
        tab = get_table(engine, table)
        validate.rows(engine, tab)
        return binning.bin_columns(engine, tab, parsed, out, replace=replace)


def evaluate_classifiers(db: str | Engine, original: str, anonymized: str, qi: Sequence[str] | str,
                         class_column: str, *, key: str | None = None, folds: int = 10, seed: int = 0,
                         classifiers: Sequence[str] | str = CLASSIFIERS, alpha: float = 1.0,
             progress: Callable[[str], None] | None = None) -> EvaluationReport:
    """Stratified CV error of classifiers trained on `anonymized` and tested on `original`
    (Kameya & Hayashi 2016, Sec. 4), next to the baseline trained on `original`. Reads only."""
    with _open(db) as engine:
        return _evaluate(engine, get_table(engine, original), get_table(engine, anonymized), qi, class_column, key,
                         folds=folds, seed=seed, classifiers=classifiers, alpha=alpha, progress=progress)


def nbc_views(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, *,
              precedence: Sequence[str] | str | None = None, counts: bool = False) -> ViewsReport:
    """The NBC-enabling views (P_c, N^i_{t,c}) in one SQL scan and Corollary 4's smallest rho."""
    with _open(db) as engine:
        return _nbc_job.run_views(engine, table, class_column, attrs, precedence=precedence, counts=counts)


def nbc_check(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: object, *,
              precedence: Sequence[str] | str | None = None) -> CheckReport:
    """Do the raw views already satisfy condition (10) for rho (Corollary 4)? `ok` says."""
    with _open(db) as engine:
        return _nbc_job.run_check(engine, table, class_column, attrs, rho, precedence=precedence)


def nbc_publish(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, rho: object = None,
                out: str = "", *, precedence: Sequence[str] | str | None = None, replace: bool = False,
                prior: str | dict | None = None, r: object = None, synthetic: bool = False,
                emit_sql: str | None = None, execute: bool = True,
                progress: Callable[[str], None] | None = None) -> PublishReport:
    """Write <out>_class and <out>_attr: rho-safe (SafetyTransform) or r-close to `prior` (EST)
    counts, NBC-equivalent to the table's, checked by SQL in the same transaction; with
    `synthetic` also <out>_rows, a table whose NBC views equal the published counts.
    `emit_sql` also writes the run as a script; `execute=False` only writes the script."""
    validate.output_file(emit_sql, "--emit-sql")
    with _open(db) as engine:
        return _nbc_job.run_publish(engine, table, class_column, attrs, rho, out, precedence=precedence,
                                    replace=replace, prior=prior, r=r, synthetic=synthetic, emit_sql=emit_sql,
                                    execute=execute, progress=progress)


def nbc_verify(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, published: str, *,
               precedence: Sequence[str] | str | None = None) -> VerifyReport:
    """Definition 2: does the NBC of the published tables rank classes exactly like the table's? `ok` says."""
    with _open(db) as engine:
        return _nbc_job.run_verify(engine, table, class_column, attrs, published, precedence=precedence)


def nbc_breach(db: str | Engine, table: str, class_column: str, attrs: Sequence[str] | str, known: str | dict, *,
               published: str | None = None, precedence: Sequence[str] | str | None = None) -> BreachReport:
    """Tiny tables: the attacker's prior and posterior over all worlds consistent with the views."""
    with _open(db) as engine:
        return _nbc_job.run_breach(engine, table, class_column, attrs, known, published=published,
                                   precedence=precedence)


def protect_table(db: str | Engine, table: str, key: str, *, method: str = "dropp", target: str | None = None,
            rows: Sequence[str] | str | None = None, cells: Sequence[tuple[str, str]] | str | None = None,
            attrs: Sequence[str] | str | None = None, top_k: int = 2, seed: int = 0,
            out: str | None = None, in_place: bool = False, replace: bool = False,
            delete_rows: bool = False, taxonomies: dict[str, str] | str | None = None,
            emit_sql: str | None = None, execute: bool = True,
            progress: Callable[[str], None] | None = None) -> ProtectReport:
    """Hide confidential cells so that naive Bayes / ID3 no longer predict them (Hintoglu 2011).

    Cells are `target` in the rows whose `key` is in `rows`, or the (key, column) pairs of
    `cells` (or a CSV file of them); the classifiers read `attrs` (default: every other column).
    Writes a new table (`out`, default <table>_protected) or, with `in_place`, the source, plus
    <out>_changes (which holds the ORIGINAL values: private), in one transaction verified by SQL
    before returning. The generalization methods (decp-g, incp-g, dropp-g, hid3-g, e-decp-g,
    e-dropp-g) take `taxonomies`, column -> stored taxonomy name (or 'attr=name,...'), the
    target's at least. `emit_sql` also writes the run as a script; `execute=False` only writes it.
    """
    validate.choice("method", method, _protect.METHODS)
    top_k = validate.integer(top_k, "top_k", minimum=2)
    seed = validate.seed(seed)
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    if isinstance(cells, str):
        cells = read_cells_csv(cells)
    with _open(db) as engine:
        return _protect.protect_table(engine, table, key, method=method, target=target,
                                      rows=None if rows is None else validate.names(rows), cells=cells,
                                      attrs=validate.names(attrs) or None, top_k=top_k, seed=seed, out=out,
                                      in_place=in_place, replace=replace, delete_rows=delete_rows,
                                      taxonomies=taxonomies, emit_sql=emit_sql, execute=execute,
                                      progress=progress)


def binarize(db: str | Engine, table: str, spec: str, out: str, *, class_column: str | None = None,
             key: str | None = None, replace: bool = False, emit_sql: str | None = None,
             execute: bool = True) -> BinarizeReport:
    """Copy `table` to `out` as the 0/1 columns a TOML spec derives (plus key and class), in SQL.
    `emit_sql` also writes the run as a reviewable script; `execute=False` only writes the script."""
    validate.dry_run(execute, emit_sql)
    validate.output_file(emit_sql, "--emit-sql")
    rules = parse_binary_spec(read_text(spec, "spec file"), spec)
    with _open(db) as engine:
        return _features_job.binarize(engine, table, rules, out, keep=[c for c in (key, class_column) if c],
                                      replace=replace, emit_sql=emit_sql, execute=execute)


def select_features(db: str | Engine, table: str, class_column: str, k: int, *, method: str = "distcnt",
                    privacy: str = "ac", mode: str = "stop", top_r: int = 20, key: str | None = None,
                    attrs: Sequence[str] | str | None = None, items: str | None = None,
                    item_column: str | None = None, out: str | None = None, materialize: bool = False,
                    replace: bool = False, emit_sql: str | None = None, execute: bool = True,
                    progress: Callable[[str], None] | None = None) -> FeaturesReport:
    """Publish the columns `attrs` (default: all but key and class) of a 0/1 table that keep the
    class signal under k-anonymity by containment (Zhang et al. 2017): a view (or table)
    re-checked by SQL to have AC >= k. `items` names a long (key, item) table whose rows' class
    is in `table`. `emit_sql` also writes the run as a script; `execute=False` only writes the script."""
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
            if not key or not item_column:
                raise AnonsqlError("--items needs --key (the row key in both tables) and --item (the item column)")
            return _features_job.select_features_long(engine, table, items, class_column, key, item_column, k,
                                                      out=out, **opts)
        if item_column:
            raise AnonsqlError("--item needs --items (the long table)")
        return _features_job.select_features(engine, table, class_column, k, key=key, out=out,
                                             materialize=materialize, **opts)


def containment(db: str | Engine, table: str, *, class_column: str | None = None, key: str | None = None,
                attrs: Sequence[str] | str | None = None) -> AcReport:
    """AC(D) of a 0/1 table (Zhang et al. Def. 6), its k-anonymity, and DistCnt/HamDist with a class."""
    with _open(db) as engine:
        return _features_job.ac(engine, table, class_column=class_column, key=key, attrs=validate.names(attrs))



def taxonomy_load(db: str | Engine, name: str, *, file: str | Path | None = None, table: str | None = None,
                  replace: bool = False) -> TaxonomyReport:
    """Validate a taxonomy (a TOML/JSON file, or a table with value and parent columns) and
    store it as `name` in anonsql_taxonomies, for the -g methods of protect."""
    with _open(db) as engine:
        return _protect.load_taxonomy(engine, name, file=file, table=table, replace=replace)


def taxonomy_show(db: str | Engine, name: str) -> TaxonomyTree:
    """The stored taxonomy `name`: its (value, parent) rows in pre-order (the root's parent None)."""
    with _open(db) as engine:
        return _protect.show_taxonomy(engine, name)
