"""Commands that bring data in and look at it: load, dataset, profile, check, bin."""

from __future__ import annotations

import click

from .. import api
from ..data.bundled import DATASETS
from . import options
from .app import Command


@click.command(cls=Command,
               epilog="example: anonsql load fixtures/adult.csv.gz --db demo.duckdb --table adult_raw --na '?'")
@click.argument("csv", type=click.Path(dir_okay=False))
@options.common(with_table=False)
@options.table(help="name of the table to create (name or schema.name)")
@click.option("--na", multiple=True, metavar="MARKER", help="a value meaning missing, e.g. '?' (repeatable)")
@click.option("--types", metavar="COL=TYPE,...",
              help="set column types (integer, float, date, timestamp, timestamptz, boolean, text; "
                   "date:truncate: a date, dropping a time of day, which date refuses), e.g. zip=text")
@click.option("--delimiter", metavar="CHAR", help="the field separator (default: the one of , ; TAB | "
              "found most often in the header line; \\t for a tab)")
@click.option("--encoding", metavar="NAME", default="utf-8", show_default=True,
              help="the file's text encoding, e.g. latin-1, cp1252, utf-16")
@options.replace("the table")
def load(csv: str, db: str, as_json: bool, quiet: bool, report_file: str | None, table: str, na: tuple[str, ...],
         types: str | None, delimiter: str | None, encoding: str, replace: bool) -> int:
    """Load a CSV file (header row; gzip OK) into a new table, read by DuckDB's CSV reader.

    Fields are trimmed; empty fields and --na markers become NULL. Types come from the values:
    whole numbers that fit BIGINT without a leading zero become integer (ZIP 01548 and long codes
    stay text), numbers float, ISO dates date, ISO timestamps timestamp, ISO timestamps ending in a
    time zone (Z, +00:00) timestamptz, the rest text; --types overrides (x=date refuses values with
    a time of day; x=date:truncate drops it). Ragged rows, undecodable bytes and NUL bytes are an
    error; nothing is created.
    """
    return options.finish(api.load_csv(db, csv, table, na=na, types=types, delimiter=delimiter,
                                       encoding=encoding, replace=replace), as_json, report_file)


_RISK_THRESHOLD = click.option(
    "--risk-threshold", type=click.FloatRange(min=0, max=1), default=0.2, show_default=True, metavar="R",
    help="count the records whose re-identification risk 1/|E| exceeds R")

_DATASET_HELP = "Load a bundled real data set (UCI Adult, Car, Breast Cancer).\n\n\b\n" + "\n".join(
    f"{n}: {d.description}" for n, d in DATASETS.items())


@click.command(cls=Command, help=_DATASET_HELP,
               epilog="example: anonsql dataset adult-kh --db demo.duckdb --table adult")
@click.argument("name", type=click.Choice(list(DATASETS)), metavar="NAME")
@options.common(with_table=False)
@options.table(help="table to create (default: the data set's name)", required=False)
@options.replace("the table")
def dataset(name: str, db: str, as_json: bool, quiet: bool, report_file: str | None, table: str | None,
            replace: bool) -> int:
    return options.finish(api.load_dataset(db, name, table, replace=replace), as_json, report_file)


@click.command(cls=Command, epilog="example: anonsql profile --db demo.duckdb --table adult "
               "--qi age,workclass,education --class income")
@options.common()
@options.qi(required=False)
@options.class_column(required=False)
@click.option("--sensitive", metavar="COLS", help="sensitive columns: their l-diversity and t-closeness (with --qi)")
@_RISK_THRESHOLD
def profile(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, qi: str | None,
            class_column: str | None, sensitive: str | None, risk_threshold: float) -> int:
    """Row count, column facts, the current k, disclosure risk and the class balance.

    Per column: type, distinct and NULL counts; with --qi the current k (the smallest
    equivalence class), the number of equivalence classes, the rows in classes smaller than
    2/5/10/20/50/100 and the re-identification risk; with --sensitive the l-diversity and
    t-closeness of those columns; with --class the class distribution. docs/concepts.md
    defines each figure.
    """
    if sensitive and not qi:
        raise click.UsageError("--sensitive needs --qi (the classes it is measured in)")
    return options.finish(api.profile(db, table, qi=qi, class_column=class_column, sensitive=sensitive,
                                      risk_threshold=risk_threshold), as_json, report_file)


@click.command(cls=Command, epilog="example: anonsql check --db demo.duckdb --table adult "
               "--qi age,workclass,education --k 10 --l-diversity income=2")
@options.common()
@options.qi()
@options.k
@click.option("--show", type=click.IntRange(min=0), default=20, show_default=True, metavar="N",
              help="list at most N violating groups, smallest first")
@click.option("--l-diversity", "l_diversity", metavar="COL=L,...",
              help="also require at least L distinct values of sensitive column COL in every class")
@click.option("--t-closeness", "t_closeness", metavar="COL=T,...",
              help="also require every class's COL distribution within T of the table's")
@_RISK_THRESHOLD
def check(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, qi: str, k: int, show: int,
          l_diversity: str | None, t_closeness: str | None, risk_threshold: float) -> int:
    """Is the table k-anonymous over the quasi-identifiers? (exit 0 yes, 1 no)

    Every combination of the quasi-identifier values (NULL counting as its own value) must
    occur at least k times. Lists the smallest violating groups when it does not hold, and the
    re-identification risk. --l-diversity and --t-closeness add checks on sensitive columns
    (NULL a value of its own); docs/concepts.md defines each figure.
    """
    return options.finish(api.check(db, table, qi, k, show=show, l_diversity=l_diversity, t_closeness=t_closeness,
                                    risk_threshold=risk_threshold), as_json, report_file, check=True)


@click.command("bin", cls=Command, epilog="example: anonsql bin --db demo.duckdb --table adult_raw "
               "--bin age=width:5 --bin fnlwgt=quantiles:10 --out adult_binned")
@options.common()
@click.option("--bin", "specs", multiple=True, required=True,
              metavar="COLUMN=width:W|quantiles:Q|week|month|quarter|year",
              help="a column and its binning (repeatable); week, month, quarter, year: a date's or timestamp's "
                   "calendar period")
@click.option("--out", required=True, help="the new table")
@options.replace("the output table")
@options.emit_sql
def bin_(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, specs: tuple[str, ...], out: str,
         replace: bool, emit_sql: str | None, dry_run: bool) -> int:
    """Bin numeric, date or timestamp columns into ranges (width, quantiles, calendar) in a new table.

    A near-unique column (exact age, income, admission date) can then serve as a quasi-identifier.
    width:W gives '[lo,hi)' ranges of whole-number width W (days for a date); quantiles:Q gives
    about Q ranges of equal row counts, cut at the column's own values; week (from Monday), month,
    quarter and year give a date's or timestamp's period as '[first day,next first day)'. NULL
    stays NULL; other columns are copied unchanged.
    """
    result = api.bin_columns(db, table, list(specs), out, replace=replace, emit_sql=emit_sql,
                             execute=options.execute(dry_run, emit_sql))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


COMMANDS: list[click.Command] = [load, dataset, profile, check, bin_]
