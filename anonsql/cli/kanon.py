"""The `kanon` command: k-anonymity by cell suppression (Kameya & Hayashi 2016)."""

from __future__ import annotations

import click

from .. import api
from ..kanon import COSTS
from . import options
from .app import Command

_EPILOG = (
    "\b\ncosts: ham = cells suppressed (eq. 1); info = information loss (eq. 2);\n"
    "  mar = change of KL divergence, keeps the missing-at-random condition (eqs. 9-11);\n"
    "  hybrid = mar weighted by ham (eq. 12).\n\n"
    "\b\nwithout --class every row shares one class (the costs with C = 1).\n"
    "direct identifiers: every run warns about a column outside --qi that is (nearly) unique;\n"
    "  --drop removes such columns, --pseudonymize replaces their values by keyed HMAC-SHA256\n"
    "  pseudonyms (key from --key-file or $ANONSQL_PSEUDONYM_KEY, never stored or printed).\n\n"
    "\b\nexample: anonsql kanon --db demo.duckdb --table adult --qi age,workclass,education,"
    "marital_status,occupation,race,sex,native_country --class income --k 10 --cost mar --seed 0 --out adult_k10\n\n"
    "\b\nexample: anonsql kanon --db demo.duckdb --table adult --qi age,education,race,sex --k 5 --drop id "
    "--changes adult_k5_changes --out adult_k5\n\n"
    "\b\nattribute disclosure: --l-diversity, --entropy-l, --recursive-cl and --t-closeness are constraints of the\n"
    "  same loop (merges go on until every class meets k and each model; a NULL sensitive value counts as a\n"
    "  value of its own), re-checked by SQL on the output.\n"
    "example: anonsql kanon --db demo.duckdb --table adult --qi age,sex,race --class income --k 5 "
    "--l-diversity occupation=3 --out adult_k5_l3\n\n"
    "\b\ngeneralize, then suppress: --hierarchy COL=KIND:ARGS finds the level per QI of least loss metric\n"
    "  leaving at most --max-suppressed-records of the rows in classes below k, then suppresses those.\n"
    "example: anonsql kanon --db demo.duckdb --table adult_raw --qi age,sex,race --k 5 "
    "--hierarchy age=interval:5,10,20,40 --out adult_k5_g"
)


@click.command(cls=Command, epilog=_EPILOG)
@options.common()
@options.qi()
@options.class_column(help="class (label) column, never suppressed (default: none, one class for all rows)",
                      required=False)
@options.k
@click.option("--cost", type=click.Choice(COSTS), default="mar", show_default=True, help="suppression cost")
@click.option("--alpha", type=float, default=1.0, show_default=True,
              help="pseudo count of the estimates (1: Laplace); > 0 for mar and hybrid")
@options.seed
@options.output("<table>_k<k>")
@click.option("--drop", metavar="COLUMNS", help="comma-separated direct identifiers to remove from the output")
@click.option("--pseudonymize", metavar="COLUMNS",
              help="comma-separated direct identifiers to replace by keyed HMAC-SHA256 pseudonyms (hex)")
@click.option("--key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="file holding the pseudonymization key (default: $ANONSQL_PSEUDONYM_KEY)")
@click.option("--l-diversity", "l_diversity", metavar="COL=L,...",
              help="also make every class hold at least L distinct values of sensitive COL (NULL one of them)")
@click.option("--entropy-l", "entropy_l", metavar="COL=L,...",
              help="also make every class's entropy of sensitive COL at least ln L")
@click.option("--recursive-cl", "recursive_cl", metavar="COL=C,L",
              help="also make every class recursive (c,l)-diverse on COL: r1 < C (r_L + ... + r_m)")
@click.option("--t-closeness", "t_closeness", metavar="COL=T,...",
              help="also keep every class's COL distribution within T of the table's (equal distance for "
                   "categories, ordered for numbers and dates)")
@click.option("--hierarchy", "hierarchy", multiple=True, metavar="COL=KIND:ARGS",
              help="generalize COL first along this hierarchy (repeatable; see anonsql hierarchy show): "
                   "interval:W,..., prefix:N,..., date:P,..., taxonomy:NAME")
@click.option("--max-suppressed-records", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              metavar="SHARE", help="with --hierarchy: the share of rows the recoding may leave to suppression")
@click.option("--restore", is_flag=True,
              help="after the loop, give blanked cells back greedily while every class keeps k and every model "
                   "(not the paper's: fewer blanks, the cost's choices no longer final)")
@click.option("--local-recoding", "local_recoding", is_flag=True,
              help="with --hierarchy: after the loop, give blanked cells back as the lowest label of their ladder "
                   "that keeps every class at k (greedy local recoding after the global one; not ARX's)")
@click.option("--search-utility", "search_utility", type=click.Choice(["loss", "mar"]), default="loss",
              show_default=True, help="with --hierarchy: what the search minimises, ARX's loss metric or the papers' "
                                      "MAR cost (KL of the class-conditional distributions)")
@click.option("--hierarchy-bounds", "hierarchy_bounds", is_flag=True,
              help="with --hierarchy: also write COL_lo and COL_hi (COL's type, NULL where suppressed) beside each "
                   "interval or date QI, the range [lo, hi) its label stands for, so analysts can still filter")
@click.option("--changes", metavar="TABLE",
              help="also write a PRIVATE table of every blanked cell: group number and original values, column, "
                   "original value, rows")
@options.emit_sql
def kanon(db: str, table: str, as_json: bool, qi: str, class_column: str | None, k: int, cost: str, alpha: float,
          seed: int, out: str | None, in_place: bool, replace: bool, drop: str | None, pseudonymize: str | None,
          key_file: str | None, l_diversity: str | None, entropy_l: str | None, recursive_cl: str | None,
          t_closeness: str | None, hierarchy: tuple[str, ...], max_suppressed_records: float, hierarchy_bounds: bool,
          search_utility: str, restore: bool, local_recoding: bool,
          changes: str | None, emit_sql: str | None, dry_run: bool,
          report_file: str | None, quiet: bool) -> int:
    """Blank cells so no one can be singled out by their quasi-identifiers (k-anonymity; Kameya & Hayashi 2016).

    Make a table k-anonymous over its quasi-identifiers by blanking (NULL) as few and as
    harmless cells as possible: distinct (QI, class) tuples are merged within their class,
    cheapest first by the chosen cost, until every QI combination occurs k times (and, with
    --l-diversity / --entropy-l / --recursive-cl / --t-closeness, every class also meets those
    models on its sensitive columns). The result is
    written by one set-based UPDATE into a copy of the table (default <table>_k<k>) or, with
    --in-place, into the source inside one transaction, and re-checked by SQL before success is
    reported.
    """
    result = api.k_anonymize(db, table, qi, class_column, k, cost=cost, alpha=alpha, seed=seed, out=out,
                             in_place=in_place, replace=replace, drop=drop, pseudonymize=pseudonymize,
                             key_file=key_file, changes=changes, emit_sql=emit_sql, l_diversity=l_diversity,
                             entropy_l=entropy_l, recursive_cl=recursive_cl, t_closeness=t_closeness,
                             hierarchy=list(hierarchy) or None, max_suppressed_records=max_suppressed_records,
                             hierarchy_bounds=hierarchy_bounds, search_utility=search_utility, restore=restore,
                             local_recoding=local_recoding,
                             execute=options.execute(dry_run, emit_sql),
                             progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


COMMANDS: list[click.Command] = [kanon]
