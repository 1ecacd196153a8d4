"""Commands that measure what an attacker can do with what is published: `risk` (re-identification
risk models) and the `attack` group (`attack linkage`, `attack difference`, `attack refine`)."""

from __future__ import annotations

import click

from .. import api
from . import options
from .app import Command, Group

_SHARE = click.FloatRange(min=0, max=1)


@click.command(cls=Command, epilog="examples:\n\n\b\n"
               "  anonsql risk --db demo.duckdb --table adult_k10 --qi age,sex,race --sampling-fraction 0.1\n"
               "  anonsql risk --db demo.duckdb --table adult --qi education,race,sex --population adult_raw "
               "--max-journalist-risk 0.2")
@options.common()
@options.qi()
@click.option("--population", metavar="TABLE", help="the population the table is a sample of (same quasi-identifier "
              "columns): journalist and marketer risk against it")
@click.option("--population-weights", metavar="COLUMN", help="sampling weights (each row stands for w people): "
              "journalist, marketer and individual (Benedetti-Franconi) risk against the population they estimate")
@click.option("--sampling-fraction", type=click.FloatRange(min=0, max=1, min_open=True), metavar="PI",
              help="the share of the population sampled: population uniqueness by Pitman, Zayatz, SNB and Dankar's "
              "rule (default with a population: rows / population size)")
@click.option("--risk-threshold", type=click.FloatRange(min=0, max=1), default=0.2, show_default=True, metavar="R",
              help="count the records whose risk (1/|E|, 1/F_k) exceeds R")
@click.option("--max-journalist-risk", type=_SHARE, metavar="R",
              help="gate: exit 1 unless the journalist risk max 1/F_k is at most R (no population: the table is "
              "taken as the population)")
def risk(db: str, table: str, as_json: bool, quiet: bool, report_file: str | None, qi: str, population: str | None,
         population_weights: str | None,
         sampling_fraction: float | None, risk_threshold: float, max_journalist_risk: float | None) -> int:
    """Re-identification risk: prosecutor, journalist, marketer, population uniqueness.

    Prosecutor risk 1/|E| over the equivalence classes E of the quasi-identifiers (NULL a value of
    its own); with --population or --population-weights the journalist risk max 1/F_k (F_k: the
    class's size in the population), the marketer risk (the expected share of records
    re-identified) and, with weights, the individual risk of Benedetti and Franconi; with a
    sampling fraction the share of population uniques by Pitman, Zayatz and SNB, and the one
    Dankar's rule picks. docs/concepts.md defines each figure. Exit 1 when a gate fails.
    """
    return options.finish(api.reidentification_risk(db, table, qi, population=population,
                                                     population_weights=population_weights,
                                                     sampling_fraction=sampling_fraction,
                                                     risk_threshold=risk_threshold,
                                                     max_journalist_risk=max_journalist_risk), as_json, report_file,
                          check=True)


@click.group(cls=Group)
def attack() -> None:
    """Attack a published table the way an adversary would, from what is published only."""


@attack.command(epilog="example: anonsql attack linkage --db demo.duckdb --published adult_k10 --source adult "
                "--qi age,workclass,education,sex --key id --max-linkage-success 0.05")
@options.db
@click.option("--published", required=True, metavar="TABLE", help="the published table attacked")
@click.option("--source", required=True, metavar="TABLE", help="whose people the attacker knows: their original "
              "quasi-identifiers (e.g. the table the published one was made from)")
@options.qi()
@click.option("--key", metavar="COLUMN", help="a row key in both tables (the private mapping): measures the "
              "realized success, not only the expected")
@click.option("--max-linkage-success", type=_SHARE, metavar="S", help="gate: exit 1 unless the share of attackers "
              "who single out their own row is at most S (realized with --key, else expected)")
@options.shared
def linkage(db: str, published: str, source: str, qi: str, key: str | None, max_linkage_success: float | None,
            as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Match every source row's quasi-identifiers to the published rows.

    A published NULL (a suppressed cell, ⊥) matches any value; the attacker's own NULL matches only
    NULL. For each attacker, the candidates are the published rows that match: one candidate is a
    unique match, a re-identification when it is the attacker's own row. Reports, per number of
    candidates, the attackers, and the expected and (with --key) realized share of correct unique
    matches. Exit 1 when the gate fails.
    """
    return options.finish(api.linkage_attack(db, published, source, qi, key=key,
                                             max_linkage_success=max_linkage_success), as_json, report_file, check=True)


@attack.command(epilog="example: adult-kh's rows, then all of Adult's (the rows with a missing value "
                "added):\n\n\b\n"
                "  anonsql tables --db demo.duckdb --table adult --dims education,race --min-count 4 "
                "--out edu_race_kh\n"
                "  anonsql tables --db demo.duckdb --table adult_raw --dims education,race --min-count 4 "
                "--out edu_race_all\n"
                "  anonsql attack difference --db demo.duckdb --earlier edu_race_kh --later edu_race_all --min-count 4")
@options.db
@click.option("--earlier", required=True, metavar="TABLE", help="a safe table published by 'anonsql tables'")
@click.option("--later", required=True, metavar="TABLE", help="a safe table of the same cells counting the earlier "
              "one's rows and rows added since (e.g. this month's cumulative table)")
@click.option("--min-count", type=click.IntRange(min=1), default=3, show_default=True, metavar="N",
              help="a cell of the added rows recomputed exactly with a count from 1 to N-1 is exposed")
@options.shared
def difference(db: str, earlier: str, later: str, min_count: int, as_json: bool, quiet: bool,
               report_file: str | None) -> int:
    """Attack two published safe tables together (differencing).

    The attacker's LP of 'tables audit' over both tables at once: the earlier table's cells, and
    the later one's as the earlier rows plus the added rows. Exit 1 when the pair recomputes a
    primary cell of either table exactly, or a cell of the added rows to a count from 1 to
    --min-count - 1. Reports the exposed cells' labels, never their values.
    """
    return options.finish(api.difference_attack(db, earlier, later, min_count=min_count), as_json, report_file,
                          check=True)


@attack.command(epilog="example: adult_k10 (kanon's) with the counts of education by race of the same rows "
                "(edu_race_kh, from 'attack difference'):\n\n\b\n"
                "  anonsql attack refine --db demo.duckdb --published adult_k10 --tables edu_race_kh --method kanon "
                "--qi age,workclass,education,marital_status,occupation,race,sex,native_country --class income")
@options.db
@click.option("--published", required=True, metavar="TABLE", help="the published row-level table (suppressed cells "
              "NULL)")
@click.option("--tables", metavar="TABLE,...", help="safe count tables published by 'anonsql tables' from the original "
              "values of the same rows")
@click.option("--method", type=click.Choice(["any", "kanon"]), default="any", show_default=True,
              help="what the attacker knows of how the cells were suppressed: 'kanon', anonsql kanon's bottom-up "
              "suppression (needs --qi and --class as kanon ran), excludes values that would make a row equal to a "
              "visible tuple of its class")
@options.qi(required=False)
@options.class_column("the class column kanon ran with (--method kanon)", required=False)
@click.option("--sensitive", metavar="COLUMN,...", help="columns whose suppressed value must never become certain")
@click.option("--min-candidates", type=click.IntRange(min=1), default=2, show_default=True, metavar="N",
              help="a suppressed cell left with fewer than N possible values is exposed")
@options.shared
def refine(db: str, published: str, tables: str | None, method: str, qi: str | None, class_column: str | None,
           sensitive: str | None, min_candidates: int, as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Attack a release's artefacts together (refinement).

    The counts each safe table implies for the rows of the published table, solved together
    (an LP, settled over the whole numbers by a MILP: HiGHS): for each suppressed cell of a column
    the tables count, and each value of that column, can the attacker exclude it? With --method
    kanon, also what kanon's bottom-up suppression implies for every quasi-identifier. Exit 1 when
    a cell keeps fewer than --min-candidates values, or a --sensitive one a single value. Reports
    counts of cells per column, never a value.
    """
    return options.finish(api.refine_attack(db, published, tables, qi=qi, class_column=class_column, method=method,
                                            sensitive=sensitive, min_candidates=min_candidates), as_json, report_file,
                          check=True)


COMMANDS: list[click.Command] = [risk, attack]
