"""anonsql's sqlglot dialects: where an engine computes something other than DuckDB for the same text.

Every template in sql/ is a DuckDB statement; anonsql.sql generates it for an engine through the
dialect `get(engine.dialect)` returns. Where sqlglot's own dialect writes a statement that runs
but computes something else (or does not run), the difference is fixed once, as an AST rewrite
registered on a dialect of anonsql's (`AnonsqlSpark.REWRITES`, spark_dialect.py), the way
sqlglot's own dialects and ibis's (`ibis/backends/sql/dialects.py`) do: a method never asks
which engine it runs on. DuckDB and PostgreSQL need none: sqlglot's dialects are anonsql's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from sqlglot.dialects.dialect import Dialect


def _spark() -> type[Dialect]:
    from .spark_dialect import AnonsqlSpark  # with sqlglot's Spark and Hive: only a Spark run pays for them

    return AnonsqlSpark


#: The dialect anonsql generates for each engine's `dialect` name, imported when first asked for;
#: other names are sqlglot's.
DIALECTS: dict[str, Callable[[], type[Dialect]]] = {"spark": _spark}


@cache
def get(name: str) -> Dialect:
    """The sqlglot dialect anonsql writes for an engine whose `dialect` is `name`."""
    return DIALECTS[name]()() if name in DIALECTS else Dialect.get_or_raise(name)
