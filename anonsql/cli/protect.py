"""The `protect` command (Hintoglu 2011)."""

from __future__ import annotations

import click

from .. import api
from ..protect.suppress import METHODS
from . import options
from .app import Command

_EPILOG = (
    "\b\nmethods: decp, incp, dropp, e-decp, e-dropp (naive Bayes); hid3 (ID3); hid3+decp, hid3+incp,\n"
    "  hid3+dropp (both); nrd (delete the tuple, the thesis's baseline); generalizing, with\n"
    "  --taxonomy: decp-g, incp-g, dropp-g, hid3-g, e-decp-g, e-dropp-g.\n\n"
    "\b\ndirect identifiers: every run warns about a column other than --key that is (nearly) unique\n"
    "  in the output; --drop removes such columns, --pseudonymize replaces their values by keyed\n"
    "  HMAC-SHA256 pseudonyms (key from --key-file or $ANONSQL_PSEUDONYM_KEY, never stored or printed).\n"
    "  The key itself identifies every row by design (the changes table names cells by it): publish\n"
    "  a surrogate key if it is a direct identifier. Neither the key nor a target can be dropped.\n\n"
    "\b\nk-anonymity: hiding a quasi-identifier cell moves its row to another equivalence class; with\n"
    "  --qi and --k the output stays k-anonymous (further QI cells hidden, chosen by kanon's MAR cost,\n"
    "  then checked); with --qi alone a run warns when its output lost the k its input had; without\n"
    "  --qi, over the columns holding NULLs if the input is k-anonymous over them (a kanon output).\n\n"
    "\b\nthe summary never prints a confidential value; --show-values prints the hidden cells'\n"
    "  original values (the JSON report and <out>_changes hold them always: keep them private).\n\n"
    "\b\nexample: anonsql protect --db demo.duckdb --table adult --key id --target income "
    "--rows 2,7 --method dropp --out adult_protected"
)


@click.command(cls=Command, epilog=_EPILOG)
@options.common()
@click.option("--key", required=True, metavar="COLUMN", help="column identifying the rows (unique, no NULL)")
@click.option("--target", metavar="COLUMN", help="column holding the confidential values (with --rows)")
@click.option("--rows", metavar="KEYS", help="comma-separated key values of the rows whose --target value is "
              "confidential")
@click.option("--cells", metavar="CSV", help="file of key,column pairs, one confidential cell per line "
              "(instead of --target/--rows)")
@click.option("--method", type=click.Choice(METHODS), default="dropp", show_default=True, metavar="METHOD",
              help="the algorithm (see the methods below)")
@click.option("--attrs", metavar="COLS", help="comma-separated columns the classifiers read (default: all but "
              "the key and the target)")
@click.option("--top-k", type=click.IntRange(min=2), default=None,
              help="draw the random next best guess among the k most probable values only, k >= 2 "
              "(default: among every admissible value, as the thesis does: a bounded k lets an "
              "adversary guess the hidden value back)")
@options.qi(required=False)
@click.option("--k", type=click.IntRange(min=1), metavar="K", help="with --qi: keep the output k-anonymous over "
              "them, hiding further quasi-identifier cells where needed (the input must be k-anonymous)")
@options.seed
@options.output("<table>_protected")
@click.option("--delete-rows", is_flag=True, help="remove the tuples an algorithm had to delete "
              "(default: keep them with every cell but the key NULL)")
@click.option("--taxonomy", metavar="ATTR=NAME,...", help="generalization methods: the stored taxonomy of "
              "each column to generalize along, the target's at least (see 'anonsql taxonomy load')")
@click.option("--drop", metavar="COLUMNS", help="comma-separated direct identifiers to remove from the output")
@click.option("--pseudonymize", metavar="COLUMNS",
              help="comma-separated direct identifiers to replace by keyed HMAC-SHA256 pseudonyms (hex)")
@click.option("--key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="file holding the pseudonymization key (default: $ANONSQL_PSEUDONYM_KEY)")
@click.option("--show-values", is_flag=True, help="print the hidden cells' original values in the summary "
              "(confidential: off by default)")
@options.emit_sql
def protect(db: str, table: str, as_json: bool, key: str, target: str | None, rows: str | None,
            cells: str | None, method: str, attrs: str | None, top_k: int | None, qi: str | None, k: int | None,
            seed: int, out: str | None,
            in_place: bool, replace: bool, delete_rows: bool, taxonomy: str | None, drop: str | None,
            pseudonymize: str | None, key_file: str | None, show_values: bool, emit_sql: str | None,
            dry_run: bool, report_file: str | None, quiet: bool) -> int:
    """Hide confidential cells so the rest of the table cannot predict them (inference; Hintoglu 2011).

    Hide confidential cells (NULL) and a few more, so that naive Bayes or an ID3 tree trained on
    the rest of the table no longer predict them; the -g methods generalize cells along stored
    taxonomies instead. A tuple an algorithm must delete keeps its key with every other cell NULL
    (--delete-rows removes it). Writes a copy (default <table>_protected) or, with --in-place, the
    source, plus <out>_changes(key, column_name, old_value, new_value) - which holds the ORIGINAL
    values: keep it private - in one transaction, re-checked by SQL before success is reported.
    """
    result = api.protect_table(db, table, key, method=method, target=target, rows=rows, cells=cells,
                               attrs=attrs, top_k=top_k, seed=seed, out=out, in_place=in_place, replace=replace,
                               delete_rows=delete_rows, taxonomies=taxonomy, emit_sql=emit_sql,
                               execute=options.execute(dry_run, emit_sql), progress=options.progress(quiet),
                               drop=drop, pseudonymize=pseudonymize, key_file=key_file, show_values=show_values,
                               qi=qi, k=k)
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


COMMANDS: list[click.Command] = [protect]
