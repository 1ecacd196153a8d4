"""`anonsql nbc views|check|publish|verify|breach`: safe naive Bayes views (Mozafari & Zaniolo 2009)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .. import api
from ..nbc import SYNTHETIC_ROW_LIMIT
from . import options
from .app import Group

F = TypeVar("F", bound=Callable[..., Any])

_EXAMPLE = "--db demo.duckdb --table adult_raw --class income --attrs age,education_num,hours_per_week"


def _views_options(f: F) -> F:
    """--db, --table, --json, --class, --attrs and --precedence: every nbc command reads the views."""
    f = click.option("--precedence", metavar="C1,C2,...",
                     help="class precedence, lowest first: ties go to the later class "
                     "(default: the classes' sort order, last wins)")(f)
    f = click.option("--attrs", required=True, metavar="A,B,C", help="comma-separated attributes A_1..A_n")(f)
    f = options.class_column(help="the class (sensitive) column C")(f)
    return options.common()(f)


@click.group(cls=Group)
def nbc() -> None:
    """Publish naive Bayes counts that sharpen no guess of anyone's class beyond a bound rho
    (rho-safe views; Mozafari & Zaniolo 2009).

    The NBC-enabling views (P_c, N^i_{t,c}): check Corollary 4, publish a rho-safe
    NBC-equivalent version (SafetyTransform, or EST for a prior), verify it, or run the
    possible-worlds attacker on a tiny table. NULL attribute values are ignored (counted in P_c
    only), as the paper's NBC counts complete (value, class) pairs.
    """


@nbc.command(epilog=f"example: anonsql nbc views {_EXAMPLE}")
@_views_options
@click.option("--counts", is_flag=True, help="also list every N^i_{t,c}")
def views(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, class_column: str, attrs: str,
          precedence: str | None, counts: bool) -> int:
    """Compute (P, N) in one SQL scan and Corollary 4's smallest rho."""
    return options.finish(api.nbc_views(db, table, class_column, attrs, precedence=precedence, counts=counts),
                          as_json, report_file)


@nbc.command(epilog=f"example: anonsql nbc check {_EXAMPLE} --rho 2")
@_views_options
@click.option("--rho", required=True, metavar="RHO", help="amplification ratio rho > 1 (Corollary 4)")
def check(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, class_column: str, attrs: str,
          precedence: str | None, rho: str) -> int:
    """Are the raw views already rho-safe? (exit 0 yes, 1 no)"""
    return options.finish(api.nbc_check(db, table, class_column, attrs, rho, precedence=precedence), as_json,
                          report_file, check=True)


@nbc.command(short_help="Write rho-safe, NBC-equivalent counts (SafetyTransform or EST)",
             epilog=f"example: anonsql nbc publish {_EXAMPLE} --rho 2 --out adult_nbc\n\n"
             "EST: anonsql nbc publish --db demo.duckdb --table adult_raw --class income --attrs sex,race "
             "--prior '<=50K=3,>50K=1' --r 3 --out adult_est")
@_views_options
@click.option("--rho", metavar="RHO", help="amplification ratio rho > 1 (Corollary 4): SafetyTransform")
@click.option("--prior", metavar="C=W,...",
              help="EST (Figure 7): the attacker's prior as class=weight pairs, e.g. '<=50K=3,>50K=1'")
@click.option("--r", metavar="R", help="with --prior: r-closeness level r > 1")
@click.option("--out", required=True, metavar="OUT", help="prefix of the tables <out>_class and <out>_attr")
@options.replace("the output tables")
@click.option("--least-distortion", is_flag=True,
              help="use the least root exponent k whose output still meets rho (default: Figure 4's bound)")
@click.option("--synthetic", is_flag=True,
              help="also write <out>_rows, rows whose NBC views equal the published counts "
              f"(refused above {SYNTHETIC_ROW_LIMIT:,} rows)")
@options.emit_sql
def publish(db: str, table: str, as_json: bool, class_column: str, attrs: str, precedence: str | None,
            rho: str | None, prior: str | None, r: str | None, out: str, replace: bool, least_distortion: bool,
            synthetic: bool, emit_sql: str | None, dry_run: bool, report_file: str | None, quiet: bool) -> int:
    """Write <out>_class and <out>_attr: rho-safe, NBC-equivalent counts.

    SafetyTransform (Figure 2) with --rho, or EST (Figure 7) with --prior and --r. The tables
    are written and checked by SQL (condition (10), the sums, NBC-equivalence) in one
    transaction; a failed check leaves nothing behind. Counts are exact integers of any
    length (NUMERIC on PostgreSQL, decimal text on DuckDB) with a DOUBLE log_count to
    classify in SQL; EST reports the achieved r and, when r cannot be reached by any
    NBC-equivalent publication, the least achievable r.
    """
    result = api.nbc_publish(db, table, class_column, attrs, rho, out, precedence=precedence, replace=replace,
                             prior=prior, r=r, synthetic=synthetic, root="least" if least_distortion else "paper",
                             emit_sql=emit_sql, execute=options.execute(dry_run, emit_sql),
                             progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


@nbc.command(short_help="Do the published counts classify like the table? (exit 0/1)",
             epilog=f"example: anonsql nbc verify {_EXAMPLE} --published adult_nbc")
@_views_options
@click.option("--published", required=True, metavar="OUT", help="the --out prefix of a publish run")
def verify(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, class_column: str, attrs: str,
           precedence: str | None, published: str) -> int:
    """Does the NBC of the published tables rank classes exactly like the source's? (exit 0/1)"""
    return options.finish(api.nbc_verify(db, table, class_column, attrs, published, precedence=precedence),
                          as_json, report_file, check=True)


@nbc.command(short_help="Tiny tables: the attacker's prior and posterior (Section 4)",
             epilog="\b\nexample (eight rows: the tool enumerates every possible world):\n"
             "  anonsql load docs/examples/toy_salaries.csv --db demo.duckdb --table toy\n"
             "  anonsql nbc breach --db demo.duckdb --table toy --class sal --attrs adr,age --known adr=W,age=40")
@_views_options
@click.option("--known", required=True, metavar="A=V,...", help="Bob's quasi-identifier value I_0")
@click.option("--published", metavar="OUT", help="use these published views instead of the table's")
def breach(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, class_column: str, attrs: str,
           precedence: str | None, known: str, published: str | None) -> int:
    """Tiny tables: attacker's prior and posterior over all consistent worlds (Section 4)."""
    return options.finish(api.nbc_breach(db, table, class_column, attrs, known, published=published,
                                         precedence=precedence), as_json, report_file)


COMMANDS: list[click.Command] = [nbc]
