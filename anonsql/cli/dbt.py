"""The `dbt` group: a release spec as the schema.yml of the dbt_anonsql package (integrations/dbt_anonsql),
and dbt's build with the package's materializations run by anonsql where dbt runs no Python."""

from __future__ import annotations

import os

import click

from ..errors import AnonsqlError
from ..report import save
from . import options
from .app import EXIT_FAILED, EXIT_OK, Group

_EPILOG = (
    "\b\nexamples:\n"
    "  anonsql dbt export examples/release/adult.toml --out schema.yml\n"
    "then, in the dbt project (packages.yml: - local: <anonsql checkout>/integrations/dbt_anonsql):\n"
    "dbt build runs the release's gates as dbt_anonsql tests on the models it names."
)
_BUILD_EPILOG = (
    "\b\n"
    "In a dbt project whose models are materialized anonsql_kanon or anonsql_safe_table on dbt-postgres:\n"
    "  `anonsql dbt build --select people_k3+` builds people_k3 by anonsql, then runs its tests.\n"
    "Every argument after build is dbt's (give --quiet before them: anonsql's, passed on to dbt)."
)


@click.group(cls=Group, epilog=_EPILOG)
def dbt() -> None:
    """Keep a dbt project in step with a release: the dbt_anonsql package's tests and model configs."""


@dbt.command(epilog=_EPILOG)
@click.argument("spec", type=click.Path(dir_okay=False), metavar="SPEC.toml")
@click.option("--out", "out_file", type=options.OutputFile(), default="-", show_default=True,
              help="the schema.yml to write (- for standard output)")
@options.replace("the --out file")
@options.shared
def export(spec: str, out_file: str, replace: bool, as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Write the schema.yml whose dbt_anonsql tests are the release's gates (k and max_risk as
    k_anonymity, l_diversity, t_closeness, no_direct_identifiers on each gated table) and whose
    model configs are its kanon and tables steps (materialized anonsql_kanon, anonsql_safe_table).
    Changes no table."""
    import anonsql  # the package face: the release sits on top of the jobs, reached only through it

    if out_file != "-" and os.path.exists(out_file) and not replace:
        raise AnonsqlError(f"{out_file} exists: give --replace to overwrite it")
    result = anonsql.dbt_export(spec)
    save(out_file, result.yaml)
    result.out = None if out_file == "-" else out_file
    return options.finish(result, as_json, report_file, emit_sql=out_file)  # the file on stdout: the summary on stderr


@dbt.command(epilog=_BUILD_EPILOG, context_settings={"ignore_unknown_options": True,
                                                   "allow_interspersed_args": False})
@options.shared
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED, metavar="[DBT ARGS]...")
def build(dbt_args: tuple[str, ...], as_json: bool, quiet: bool, report_file: str | None) -> int:
    """Run `dbt build` in this process, and the dbt_anonsql materializations (anonsql_kanon,
    anonsql_safe_table) on adapters where dbt runs no Python (dbt-postgres): anonsql runs each job on
    the model's database, with the credentials of the profile dbt loaded, and writes the model
    before dbt tests it. Exit 1 when dbt's build fails."""
    import anonsql  # the package face: the release package is reached only through it

    quiet_dbt = ["--log-level", "none"] if as_json or report_file == "-" else ["--quiet"] if quiet else []
    result = anonsql.dbt_build([*dbt_args, *quiet_dbt])  # with the JSON on stdout, dbt says nothing there
    options.finish(result, as_json, report_file)
    return EXIT_OK if result.success else EXIT_FAILED


COMMANDS = [dbt]
