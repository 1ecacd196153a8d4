"""binarize, features, ac: feature selection under k-anonymity by containment (Zhang et al. 2017)."""

from __future__ import annotations

import click

from .. import api
from ..features import METHODS, MODES, PRIVACY
from . import options
from .app import Command

_ATTRS_HELP = "comma-separated feature columns (default: all but --key and --class)"


@click.command(cls=Command, epilog="example: anonsql binarize --db demo.duckdb --table adult_raw --class income "
               "--spec benchmarks/adult_bins.toml --out adult_bin")
@options.common()
@click.option("--spec", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="TOML file of [[binary]] entries (name, column, lower/upper or equals/in)")
@click.option("--out", required=True, metavar="TABLE", help="output table")
@options.replace("the output table")
@options.class_column(help="class column, copied unchanged", required=False)
@click.option("--key", metavar="COLUMN", help="row key column, copied unchanged")
@options.emit_sql
def binarize(db: str, table: str, as_json: bool, quiet: bool, spec: str, out: str, replace: bool,
             class_column: str | None, key: str | None, emit_sql: str | None, dry_run: bool,
             report_file: str | None) -> int:
    """Derive 0/1 columns from categorical and numeric ones (TOML spec).

    Writes a new table with one 0/1 column per [[binary]] entry of the spec: an interval
    (lower, upper] of a numeric column or a set of values of any column; NULL cells give 0.
    --key and --class are copied unchanged.
    """
    result = api.binarize(db, table, spec, out, class_column=class_column, key=key, replace=replace,
                          emit_sql=emit_sql, execute=options.execute(dry_run, emit_sql))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


@click.command(cls=Command, epilog="methods: distcnt = Greedy DistCnt (Alg. 3); hamdist = Greedy HamDist "
               "(Alg. 2); maximal = best HamDist among the --top-r largest maximal k-frequent itemsets (Alg. 1); "
               "cm = CM-greedy baseline (Def. 2).\n\n--privacy kanon: plain k-anonymity of the projection (the "
               "paper's baselines). --mode stop (the paper's) ends at the first infeasible feature; skip passes "
               "over it.\n\nexample: anonsql features --db demo.duckdb --table adult_bin --class income --k 5 "
               "--method distcnt --out adult_pub")
@options.common()
@options.class_column(help="class column with exactly two values")
@options.k
@click.option("--method", type=click.Choice(METHODS), default="distcnt", show_default=True,
              help="the selection method")
@click.option("--privacy", type=click.Choice(PRIVACY), default="ac", show_default=True,
              help="ac (k-anonymity by containment) or kanon (plain k-anonymity)")
@click.option("--mode", type=click.Choice(MODES), default="stop", show_default=True,
              help="stop (the paper's) or skip")
@click.option("--top-r", type=click.IntRange(min=1), default=20, show_default=True,
              help="maximal: how many of the largest maximal sets to score")
@click.option("--key", metavar="COLUMN", help="row key column, not a feature (with --items: the key in both tables)")
@click.option("--attrs", metavar="COLUMNS", help=_ATTRS_HELP)
@click.option("--items", metavar="TABLE",
              help="long input: a (key, item) table; --table then holds key and class per row")
@click.option("--item", "item_column", metavar="COLUMN", help="with --items: the item column")
@options.output("<table>_ac<k>", in_place=False)
@click.option("--view", is_flag=True,
              help="publish a view instead of a table (warned: changing the base table later voids the guarantee)")
@options.emit_sql
def features(db: str, table: str, as_json: bool, class_column: str, k: int, method: str, privacy: str, mode: str,
             top_r: int, key: str | None, attrs: str | None, items: str | None, item_column: str | None,
             out: str | None, replace: bool, view: bool, emit_sql: str | None, dry_run: bool,
             report_file: str | None, quiet: bool) -> int:
    """Publish 0/1 features so that every row's 1s are 1s in at least k rows (k-AC; Zhang et al. 2017).

    Selects 0/1 feature columns so that every row's set of 1-columns is contained in those of
    at least k-1 other rows (k-anonymity by containment), keeping the columns that separate the
    two classes best. The selected columns plus the class are published as a table (a view with
    --view, which changing the base table later voids), re-checked by SQL to have AC >= k.
    """
    result = api.select_features(db, table, class_column, k, method=method, privacy=privacy, mode=mode, top_r=top_r,
                                 key=key, attrs=attrs, items=items, item_column=item_column, out=out,
                                 view=view, replace=replace, emit_sql=emit_sql,
                                 execute=options.execute(dry_run, emit_sql),
                                 progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


@click.command(cls=Command, epilog="example: anonsql ac --db demo.duckdb --table adult_pub --class income")
@options.common()
@options.class_column(help="class column (excluded from the features)", required=False)
@click.option("--key", metavar="COLUMN", help="row key column, not a feature")
@click.option("--attrs", metavar="COLUMNS", help=_ATTRS_HELP)
def ac(db: str, table: str, as_json: bool, quiet: bool, class_column: str | None, key: str | None, attrs: str | None,
       report_file: str | None) -> int:
    """How well 0/1 rows hide: the fewest rows holding some row's 1s (AC(D), k-anonymity by containment).

    Computes, in SQL, each row's containment support AC(e) (the rows whose 1-columns include its
    own) and AC(D), their minimum; with --class also DistCnt and HamDist. Reads only.
    """
    result = api.containment(db, table, class_column=class_column, key=key, attrs=attrs)
    return options.finish(result, as_json, report_file)


COMMANDS: list[click.Command] = [binarize, features, ac]
