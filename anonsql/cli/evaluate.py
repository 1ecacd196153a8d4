"""`anonsql evaluate`: classifier utility of an anonymized table (Kameya & Hayashi 2016, Sec. 4)."""

from __future__ import annotations

from typing import Any

import click

from .. import api
from ..evaluate import CLASSIFIERS
from . import options
from .app import Command


class ChoiceList(click.ParamType):
    """A comma-separated list of names from `choices`, checked at parse time."""

    name = "LIST"

    def __init__(self, choices: tuple[str, ...]):
        self.choices = choices

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        chosen = [n.strip().lower() for n in str(value).split(",")]
        bad = [n for n in chosen if n not in self.choices]
        if bad:
            self.fail(f"'{bad[0]}' is not one of {', '.join(self.choices)}", param, ctx)
        return ",".join(chosen)


@click.command("evaluate", cls=Command,
               epilog="example: anonsql evaluate --db demo.duckdb --original adult --anonymized adult_k10 "
               "--qi age,workclass,education,marital_status,occupation,race,sex,native_country "
               "--class income --folds 10 --seed 0")
@options.common(with_table=False)
@click.option("--original", required=True, metavar="TABLE", help="the original table (tested on)")
@click.option("--anonymized", required=True, metavar="TABLE", help="the anonymized table (trained on)")
@options.qi()
@options.class_column()
@click.option("--key", metavar="COLUMN", help="column matching the rows of the two tables (default: the one "
              "column besides --qi and --class that is in both tables and unique in the original)")
@click.option("--folds", type=click.IntRange(min=2), default=10, show_default=True, metavar="F",
              help="number of folds, >= 2")
@options.seed
@click.option("--classifiers", type=ChoiceList(CLASSIFIERS), default=",".join(CLASSIFIERS), show_default=True,
              help=f"comma-separated, from {', '.join(CLASSIFIERS)}")
def evaluate(db: str, as_json: bool, original: str, anonymized: str, qi: str, class_column: str, key: str | None,
             folds: int, seed: int, classifiers: str, report_file: str | None, quiet: bool) -> int:
    """Classifier error when trained on the anonymized table.

    Utility of an anonymized table for classification (Kameya & Hayashi 2016, Sec. 4):
    stratified cross validation in which each fold's classifier is trained on the ANONYMIZED
    rows of the other folds and tested on the ORIGINAL rows of the fold, next to the baseline
    trained on the original; the quasi-identifiers are the classifiers' attributes. Rows of
    the two tables are matched by --key. nb: naive Bayes with Laplace smoothing, NULL cells
    ignored; tree: scikit-learn entropy tree, a stand-in for C4.5/J48 (needs
    pip install 'anonsql[eval]'). Reads only. Progress lines (per stage, per tree fold) go to
    stderr unless --quiet.
    """
    result = api.evaluate_classifiers(db, original, anonymized, qi, class_column, key=key, folds=folds, seed=seed,
                                      classifiers=classifiers, progress=options.progress(quiet))
    return options.finish(result, as_json, report_file)


COMMANDS: list[click.Command] = [evaluate]
