"""The `tables` group: publish safe aggregate tables (cell suppression) and audit published ones."""

from __future__ import annotations

import click

from .. import api
from ..errors import AnonsqlError
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
@click.option("--previous", metavar="TABLE", help="last period's published table of the same shape (or its private "
              "audit): its suppressed cells are the secondaries chosen first; the report counts the cells that changed")
@click.option("--method", type=click.Choice(["suppression", "ckm"]), default="suppression", show_default=True,
              help="cell suppression, or the cell key method (consistent noise on every cell; with --sum on totals "
              "too; --hierarchy and --emit-sql apply to both)")
@click.option("--record-key", metavar="COLUMN", help="ckm: the unit each record key is derived from, keyed by "
              "--key-file (HMAC-SHA256, as --pseudonymize; the key is never stored)")
@click.option("--record-key-column", metavar="COLUMN", help="ckm: a column already holding record keys: "
              "in [0, 1) (float), or whole numbers in [0, 2^32) (integer, units of 2^-32)")
@click.option("--key-file", metavar="FILE", help="ckm: the secret key of --record-key "
              "(default: $ANONSQL_PSEUDONYM_KEY)")
@click.option("--ckm-d", type=int, default=3, show_default=True, help="ckm: largest absolute noise D")
@click.option("--ckm-v", type=float, default=1.5, show_default=True, help="ckm: noise variance V")
@click.option("--ckm-js", type=int, default=1, show_default=True, help="ckm: no published count in 1..JS-1")
@click.option("--ckm-pstay", type=float, help="ckm: lower bound of the probability that a count stays unchanged")
@click.option("--ckm-top-k", type=int, default=1, show_default=True, help="ckm with --sum: the noise of a total scales "
              "with the sum of its K largest contributions (--contributor, else the record key's unit)")
@click.option("--ckm-scale", type=click.Choice(["top", "mean"]), default="top", show_default=True,
              help="ckm with --sum: scale by the largest contributions (top) or the mean contribution")
@click.option("--ckm-m", type=float, default=0.05, show_default=True, help="ckm with --sum: a total's noise is "
              "M x scale x v")
@click.option("--compare-suppression", is_flag=True, help="ckm: also report the share of cells suppression with "
              "--min-count would hide")
@options.output("<table>_tables", in_place=False)
@options.emit_sql
def tables(ctx: click.Context, db: str | None, table: str | None, as_json: bool, dims: str | None, linked: str | None,
           margins: str, cube: bool, measure: str | None, contributor: str | None, min_count: int,
           zero_unsafe: bool, dominance: str | None, p_percent: float | None, protection: float,
           hierarchy: str | None, publish: tuple[str, ...], zeros: tuple[str, ...], allow_empty_secondaries: bool,
           bounds: bool, previous: str | None, method: str, record_key: str | None, record_key_column: str | None,
           key_file: str | None,
           ckm_d: int, ckm_v: float, ckm_js: int, ckm_pstay: float | None, ckm_top_k: int, ckm_scale: str,
           ckm_m: float, compare_suppression: bool,
           out: str | None, replace: bool,
           emit_sql: str | None, dry_run: bool, report_file: str | None, quiet: bool) -> int | None:
    """Publish counts or sums by group that reveal no small group or dominant contributor (cell suppression).

    Count (or, with --sum, total) the rows of a table by its dimensions, with totals, and
    suppress every cell a primary rule flags (too few rows; with --sum and --contributor the
    (n,k)-dominance and p% rules) plus the fewest, smallest further cells so that nobody can
    recompute a suppressed cell from the published ones: exact elimination over the totals,
    then the attacker's LP (min and max of each cell) must leave every primary its protection:
    an interval, the rules' standard upper protection levels (p%, dominance), and for counts
    whole-number bounds not inside [1, min-count - 1]; with --dominance or --p-percent no union of
    a primary's suppressed companions in one total may be dominated either. An empty cell is never
    a secondary (unless --allow-empty-secondaries); with --previous last period's suppressed cells
    are the secondaries chosen first. With --hierarchy a dimension's totals follow a stored
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
    _only_for(ctx, method)
    if method == "ckm":
        noisy = api.ckm_table(db, table, dims, tables=linked, margins="cube" if cube else margins,
                               record_key=record_key, record_key_column=record_key_column, key_file=key_file,
                               D=ckm_d, V=ckm_v, js=ckm_js, pstay=ckm_pstay, measure=measure,
                               contributor=contributor, top_k=ckm_top_k, scale=ckm_scale, m=ckm_m,
                               compare_min_count=min_count if compare_suppression else None, hierarchy=hierarchy,
                               out=out, replace=replace, emit_sql=emit_sql, execute=options.execute(dry_run, emit_sql),
                               progress=options.progress(quiet))
        return options.finish(noisy, as_json, report_file, emit_sql=emit_sql)
    result = api.safe_table(db, table, dims, tables=linked, margins="cube" if cube else margins, measure=measure,
                            contributor=contributor, min_count=min_count, zero_unsafe=zero_unsafe,
                            dominance=dominance, p_percent=p_percent, protection=protection, hierarchy=hierarchy,
                            publish="; ".join(publish) or None, structural_zeros="; ".join(zeros) or None,
                            allow_empty_secondaries=allow_empty_secondaries, out=out, replace=replace, bounds=bounds,
                            previous=previous,
                            emit_sql=emit_sql, execute=options.execute(dry_run, emit_sql),
                            progress=options.progress(quiet))
    return options.finish(result, as_json, report_file, emit_sql=emit_sql)


#: The options of one method only, by the method's name.
_OWN = {"ckm": ("record_key", "record_key_column", "key_file", "ckm_d", "ckm_v", "ckm_js", "ckm_pstay",
                "ckm_top_k", "ckm_scale", "ckm_m", "compare_suppression"),
        "suppression": ("zero_unsafe", "dominance", "p_percent", "protection",
                        "publish", "zeros", "allow_empty_secondaries", "bounds", "previous")}


def _only_for(ctx: click.Context, method: str) -> None:
    """Refuse (one line) the options of the other method when given on the command line."""
    given = [p.opts[0] for name in _OWN if name != method for p in ctx.command.params
             if p.name in _OWN[name] and ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE]
    if given:
        raise AnonsqlError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to --method {method}")


@tables.command(epilog="example: anonsql tables audit --db demo.duckdb --published adult_edu_occ_race")
@options.common(with_table=False)
@click.option("--published", required=True, metavar="TABLE", help="a table written by 'anonsql tables'")
@click.option("--hierarchy", metavar="DIM=TAXONOMY,...", help="the stored taxonomies it was published with")
@click.option("--key-file", metavar="FILE", help="a cell key method table's record key secret (default: "
              "$ANONSQL_PSEUDONYM_KEY)")
def audit(db: str, as_json: bool, quiet: bool, published: str, hierarchy: str | None, key_file: str | None,
          report_file: str | None) -> int:
    """Re-run the attacker's LP on a published table; exit 1 if a primary cell is pinned.

    Rebuilds the attack from the published rows alone (labels, grouping ids, values) and the
    taxonomies of --hierarchy: unknown cells >= 0, every published total an equation; the
    primaries are read from <published>_private_audit when it exists, else every suppressed
    cell is checked; prints the smallest interval width and lists the cells it recomputes exactly.
    A table of --method ckm is re-derived instead: every cell recounted from the source, its noise
    looked up again, the published value required.
    """
    return options.finish(api.audit_table(db, published, hierarchy, key_file=key_file), as_json, report_file,
                          check=True)


@tables.command(epilog="example: anonsql tables ptable --ckm-d 3 --ckm-v 1.5 --ckm-js 2")
@options.shared
@click.option("--ckm-d", type=int, default=3, show_default=True, help="largest absolute noise D")
@click.option("--ckm-v", type=float, default=1.5, show_default=True, help="noise variance V")
@click.option("--ckm-js", type=int, default=1, show_default=True, help="no published count in 1..JS-1")
@click.option("--ckm-pstay", type=float, help="lower bound of the probability that a count stays unchanged")
def ptable(as_json: bool, quiet: bool, report_file: str | None, ckm_d: int, ckm_v: float, ckm_js: int,
           ckm_pstay: float | None) -> int:
    """Show the cell key method's perturbation table of D, V, js and pstay.

    For each original count i, the probability p(i -> i + v) of each noise v (maximum entropy, zero
    mean, variance V, |v| <= D, no count in 1..js-1, zero stays zero), the variance the row reaches,
    and the fingerprint a published CKM table's report and release manifest record.
    """
    return options.finish(api.ckm_ptable(ckm_d, ckm_v, ckm_js, ckm_pstay), as_json, report_file)


COMMANDS: list[click.Command] = [tables]
