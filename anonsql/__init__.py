"""anonsql: a database-native anonymizer. Statistics in SQL, decisions in Python, rewrite in SQL.

The public API: every CLI command is a thin shell over one of these functions. Each takes
`db`, a DuckDB file path, a postgresql:// URL or an open Engine.
"""

from .api import (
    bin_columns, binarize, check, containment, evaluate, k_anonymize, load_csv, load_dataset, nbc_breach,
    nbc_check, nbc_publish, nbc_verify, nbc_views, profile, protect, select_features,
)
from .engine import Engine, connect
from .errors import AnonsqlError

__all__ = [
    "AnonsqlError", "Engine", "bin_columns", "binarize", "check", "containment", "connect", "evaluate",
    "k_anonymize", "load_csv", "load_dataset", "nbc_breach", "nbc_check", "nbc_publish", "nbc_verify", "nbc_views", "profile",
    "protect", "select_features",
]
