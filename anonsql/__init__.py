"""anonsql: a database-native anonymizer. Statistics in SQL, decisions in Python, rewrite in SQL.

The public API: every CLI command is a thin shell over one of these functions. Each takes
`db`, a DuckDB file path, a postgresql:// URL, an open duckdb or psycopg connection (left
open) or an Engine, and returns a Report.
The API functions are named for the task (`k_anonymize`, `protect_table`,
`evaluate_classifiers`) so none hides the method package of the same name.
"""

from .engine import Engine, connect
from .errors import AnonsqlError, VerificationError
from .report import Check, Report

__all__ = [
    "AnonsqlError", "Check", "Engine", "Report", "VerificationError", "__version__", "audit_table", "bin_columns",
    "binarize", "check", "ckm_ptable", "ckm_table", "connect", "containment", "dbt_export", "difference_attack",
    "evaluate_classifiers", "hierarchy_show", "k_anonymize", "linkage_attack", "load_csv", "load_dataset",
    "nbc_breach", "nbc_check", "nbc_publish", "nbc_verify", "nbc_views", "profile", "protect_table", "read_query",
    "refine_attack",
    "reidentification_risk",
    "release_plan", "release_run", "release_verify", "safe_table", "select_features", "show_table", "taxonomy_load",
    "taxonomy_show",
    "dbt_build",  # anonsql/release/dbt_build.py, beside dbt_export
]

# The API functions load on first use (PEP 562): `import anonsql.kanon` or a CLI command then
# pays only for its own method, not for every package's dependencies (scipy, scikit-learn, ...).
_RELEASE = frozenset({"release_plan", "release_run", "release_verify"})
_API = frozenset(__all__) - {"AnonsqlError", "Check", "Engine", "Report", "VerificationError", "__version__",
                             "connect", "dbt_build", "dbt_export"} - _RELEASE


def __getattr__(name: str):
    if name == "__version__":
        from .version import version

        return version()
    if name == "dbt_export":  # a release spec as the dbt package's schema.yml
        from .release.dbt_schema import dbt_export

        return dbt_export
    if name == "dbt_build":  # dbt's build, the dbt package's jobs run by anonsql where dbt runs no Python
        from .release.dbt_build import build

        return build
    if name in _RELEASE:  # the release sits on top of the jobs, beside the API (anonsql.release.entry)
        from .release import entry

        return getattr(entry, name)
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'anonsql' has no attribute {name!r}")
