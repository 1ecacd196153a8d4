"""anonsql: a database-native anonymizer. Statistics in SQL, decisions in Python, rewrite in SQL.

The public API: every CLI command is a thin shell over one of these functions. Each takes
`db`, a DuckDB file path, a postgresql:// URL or an open Engine, and returns a Report.
The API functions are named for the task (`k_anonymize`, `protect_table`,
`evaluate_classifiers`) so none hides the method package of the same name.
"""

from importlib.metadata import PackageNotFoundError, version

from .api import (
    bin_columns,
    binarize,
    check,
    containment,
    evaluate_classifiers,
    k_anonymize,
    load_csv,
    load_dataset,
    nbc_breach,
    nbc_check,
    nbc_publish,
    nbc_verify,
    nbc_views,
    profile,
    protect_table,
    select_features,
    taxonomy_load,
    taxonomy_show,
)
from .engine import Engine, connect
from .errors import AnonsqlError, VerificationError
from .report import Check, Report

try:
    __version__ = version("anonsql")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AnonsqlError", "Check", "Engine", "Report", "VerificationError", "__version__", "bin_columns", "binarize",
    "check", "connect", "containment", "evaluate_classifiers", "k_anonymize", "load_csv", "load_dataset",
    "nbc_breach", "nbc_check", "nbc_publish", "nbc_verify", "nbc_views", "profile", "protect_table",
    "select_features", "taxonomy_load", "taxonomy_show",
]
