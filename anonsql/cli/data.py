"""Commands that bring data in and look at it: load, dataset, profile, check, bin."""

from __future__ import annotations

import click

from .. import api
from ..data.datasets import DATASETS
from . import options
from .app import Command


@click.command(cls=Command,
               epilog="example: anonsql load fixtures/adult.csv.gz --db demo.duckdb --table adult --na '?'")
@click.argument("csv", type=click.Path(dir_okay=False))
@options.common(with_table=False)
@options.table(help="name of the table to create (name or schema.name)")
@click.option("--na", multiple=True, metavar="MARKER", help="a value meaning missing, e.g. '?' (repeatable)")
@click.option("--replace", is_flag=True, help="replace the table if it exists")
def load(csv: str, db: str, as_json: bool, table: str, na: tuple[str, ...], replace: bool) -> int:
    """Load a CSV file (header row; gzip OK) into a new table.

    Fields are trimmed; empty fields and --na markers become NULL; all-integer columns become
    BIGINT, numeric ones DOUBLE, the rest text. Ragged rows are an error.
    """
    return options.finish(api.load_csv(db, csv, table, na=na, replace=replace), as_json)


_DATASET_HELP = "Load a bundled real data set (UCI Adult, Car, Breast Cancer).\n\n\b\n" + "\n".join(
    f"{n}: {d.description}" for n, d in DATASETS.items())


@click.command(cls=Command, help=_DATASET_HELP,
               epilog="example: anonsql dataset adult-kh --db demo.duckdb --table adult")
@click.argument("name", type=click.Choice(list(DATASETS)), metavar="NAME")
@options.common(with_table=False)
@options.table(help="table to create (default: the data set's name)", required=False)
@click.option("--replace", is_flag=True, help="replace the table if it exists")
def dataset(name: str, db: str, as_json: bool, table: str | None, replace: bool) -> int:
    return options.finish(api.load_dataset(db, name, table, replace=replace), as_json)


@click.command(cls=Command, epilog="example: anonsql profile --db demo.duckdb --table adult "
               "--qi age,workclass,education --class income")
@options.common()
@options.qi(required=False)
@options.class_column(required=False)
def profile(db: str, table: str, as_json: bool, qi: str | None, class_column: str | None) -> int:
    """Row count, column facts, the current k and the class balance.

    Per column: type, distinct and NULL counts; with --qi the current k (the smallest
    equivalence class), the number of equivalence classes and the rows in classes smaller than
    2/5/10/20/50/100; with --class the class distribution.
    """
    return options.finish(api.profile(db, table, qi=qi, class_column=class_column), as_json)


@click.command(cls=Command, epilog="example: anonsql check --db demo.duckdb --table adult "
               "--qi age,workclass,education --k 10")
@options.common()
@options.qi()
@options.k
@click.option("--show", type=click.IntRange(min=0), default=20, show_default=True, metavar="N",
              help="list at most N violating groups, smallest first")
def check(db: str, table: str, as_json: bool, qi: str, k: int, show: int) -> int:
    """Is the table k-anonymous over the quasi-identifiers? (exit 0 yes, 1 no)

    Every combination of the quasi-identifier values (NULL counting as its own value) must
    occur at least k times. Lists the smallest violating groups when it does not hold.
    """
    return options.finish(api.check(db, table, qi, k, show=show), as_json, check=True)


@click.command("bin", cls=Command, epilog="example: anonsql bin --db demo.duckdb --table adult_raw "
               "--bin age=width:5 --bin fnlwgt=quantiles:10 --out adult_binned")
@options.common()
@click.option("--bin", "specs", multiple=True, required=True, metavar="COLUMN=width:W|quantiles:Q",
              help="a column and its binning (repeatable)")
@click.option("--out", required=True, help="the new table")
@click.option("--replace", is_flag=True, help="replace the output table if it exists")
def bin_(db: str, table: str, as_json: bool, specs: tuple[str, ...], out: str, replace: bool) -> int:
    """Bin numeric columns into ranges (by width or quantiles) in a new table.

    A near-unique column (exact age, income) can then serve as a quasi-identifier. width:W gives
    '[lo,hi)' ranges of whole-number width W; quantiles:Q gives about Q ranges of equal row
    counts, cut at the column's own values. NULL stays NULL; other columns are copied unchanged.
    """
    return options.finish(api.bin_columns(db, table, list(specs), out, replace=replace), as_json)


COMMANDS: list[click.Command] = [load, dataset, profile, check, bin_]
