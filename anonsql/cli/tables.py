"""The `tables` group: publish safe aggregate tables (cell suppression) and audit published ones."""

from __future__ import annotations

import click

from .. import api
from ..tables import MARGINS
from . import options
from .app import Command, Group

_EPILOG = (
    "\b\nexamples:\n"
    "  anonsql tables --db demo.duckdb --table adult --dims education,occupation,race --cube "
    "--min-count 4 --out adult_edu_occ_race\n"
    "  anonsql tables --db demo.duckdb --table adult --tables 'education*race,occupation*race' --out linked\n"
    "  anonsql taxonomy load --db demo.duckdb --name races --file docs/examples/race.toml\n"
    "  anonsql tables --db demo.duckdb --table adult --dims race,sex --hierarchy race=races --publish 'race=White' "
    "--out race_sex\n"
    "  anonsql tables --db demo.duckdb --table adult_raw --dims education,race --sum hours_per_week "
    "--contributor occupation --dominance 1,80 --p-percent 15 --out hours_edu_race\n"
    "  anonsql tables audit --db demo.duckdb --published adult_edu_occ_race"
)


class _CommandGroup(Command, Group):
    """A command that also has subcommands (`tables` and `tables audit`), with the one error rule."""


@click.group(cls=_CommandGroup, invoke_without_command=True, epilog=_EPILOG)
@click.pass_context
@click.option("--db", metavar="DB", help=options.DB_HELP + " (required)")
@options.table(required=False, help="table name (name or schema.name) (required)")
@options.shared
@click.option("--dims", metavar="COLS", help="comma-separated dimensions of one table")
@click.option("--tables", "linked", metavar="SPEC", help="linked tables protected together, e.g. 'a*b,c*b'")
@click.option("--margins", type=click.Choice(MARGINS), default="cube", show_default=True,
              help="totals: every subset of the dimensions (cube), every prefix (rollup), or none")
@click.option("--cube", is_flag=True, help="the same as --margins cube")
@click.option("--sum", "measure", metavar="COLUMN", help="a magnitude table: the sum of COLUMN per cell")
@click.option("--contributor", metavar="COLUMN", help="who contributes to a magnitude cell (for the rules)")
@click.option("--min-count", type=click.IntRange(min=0), default=3, show_default=True,
              help="a cell of fewer rows (contributors with --contributor) is a primary cell")
@click.option("--zero-unsafe", is_flag=True, help="empty cells are primary cells too (default: safe)")
@click.option("--dominance", metavar="N,K", help="(n,k)-dominance: unsafe if the N largest contributions "
              "exceed K% of the cell")
@click.option("--p-percent", type=click.FloatRange(min=0, min_open=True), metavar="P",
              help="p% rule: unsafe if the second largest contributor can estimate the largest within P%")
@click.option("--protection", type=click.FloatRange(min=0), default=0.0, show_default=True, metavar="PCT",
              help="each primary's attacker interval must reach PCT% of its value on both sides "
              "(0: only width > 0)")
@click.option("--hierarchy", metavar="DIM=TAXONOMY,...", help="totals along stored taxonomies ('anonsql taxonomy "
              "load'): every inner node of the taxonomy, the root included, is the total of its leaves")
@click.option("--publish", "publish", metavar="CELLS", multiple=True, help="cells that must be published (status "
              "z in the private audit, never a secondary), e.g. 'region=Europe,sector=a; sector=b' (a dimension "
              "left out: its total); repeatable")
@click.option("--structural-zeros", "zeros", metavar="CELLS", multiple=True, help="cells known to be empty (e.g. "
              "'sex=male,status=pregnant'; the --publish syntax): published as 0, never hidden; repeatable")
@click.option("--allow-empty-secondaries", is_flag=True, help="an empty cell may be a secondary (default: never; "
              "the attacker then knows every hidden cell holds a row)")
@click.option("--bounds", is_flag=True, help="also publish the attacker's bounds of the suppressed cells")
@options.output("<table>_tables", in_place=False)
@options.emit_sql
def tables(ctx: click.Context, db: str | None, table: str | None, as_json: bool, dims: str | None, linked: str | None,
           margins: str, cube: bool, measure: str | None, contributor: str | None, min_count: int,
           zero_unsafe: bool, dominance: str | None, p_percent: float | None, protection: float,
           hierarchy: str | None, publish: tuple[str, ...], zeros: tuple[str, ...], allow_empty_secondaries: bool,
           bounds: bool, out: str | None, replace: bool,
           emit_sql: str | None, dry_run: bool, report_file: str | None, quiet: bool) -> int | None:
    """Publish counts or sums by group that reveal no small group or dominant contributor (cell suppression).

    Count (or, with --sum, total) the rows of a table by its dimensions, with totals, and
    suppress every cell a primary rule flags (too few rows; with --sum and --contributor the
    (n,k)-dominance and p% rules) plus the fewest, smallest further cells so that nobody can
    recompute a suppressed cell from the published ones: exact elimination over the totals,
    then the attacker's LP (min and max of each cell) must leave every primary its protection:
    an interval, the rules' standard upper protection levels (p%, dominance), and for counts
    whole-number bounds not inside [1, min-count - 1]. An empty cell is never a secondary
    (unless --allow-empty-secondaries). With --hierarchy a dimension's totals follow a stored
    taxonomy (each node the sum of its leaves). Writes <out>(dimension labels, 'Total' in
    margins or the taxonomy node's label, grouping_id, level, value NULL when suppressed, status
    'published' or 'suppressed', alike for every hidden cell) and the PRIVATE <out>_private_audit
    (true values, statuses s safe / u primary / x secondary / z forced, reasons), re-checked in
    the same transaction by SQL recounts and an LP built from the published table alone.
    """
    if ctx.invoked_subcommand is not None:
        return None
    if db is None or table is None:
        raise click.UsageError(f"Missing option '{'--db' if db is None else '--table'}'", ctx)
    result = api.safe_table(db, table, dims, tables=linked, margins="cube" if cube else margins, measure=measure,
                            contributor=contributor, min_count=min_count, zero_unsafe=zero_unsafe,
                            dominance=dominance, p_percent=p_percent, protection=protection, hierarchy=hierarchy,
                            publish="; ".join(publish) or None, structural_zeros="; ".join(zeros) or None,
                            allow_empty_secondaries=allow_empty_secondaries, out=out, replace=replace, bounds=bounds,
                            emit_sql=emit_sql, execute=options.execute(dry_run, emit_sql),
                            progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


@tables.command(epilog="example: anonsql tables audit --db demo.duckdb --published adult_edu_occ_race")
@options.common(with_table=False)
@click.option("--published", required=True, metavar="TABLE", help="a table written by 'anonsql tables'")
@click.option("--hierarchy", metavar="DIM=TAXONOMY,...", help="the stored taxonomies it was published with")
def audit(db: str, as_json: bool, quiet: bool, published: str, hierarchy: str | None, report_file: str | None) -> int:
    """Re-run the attacker's LP on a published table; exit 1 if a primary cell is pinned.

    Rebuilds the attack from the published rows alone (labels, grouping ids, values) and the
    taxonomies of --hierarchy: unknown cells >= 0, every published total an equation; the
    primaries are read from <published>_private_audit when it exists, else every suppressed
    cell is checked; prints the smallest interval width and lists the cells it recomputes exactly.
    """
    return options.finish(api.audit_table(db, published, hierarchy), as_json, report_file, check=True)


COMMANDS: list[click.Command] = [tables]
