"""The typed Python API behind the CLI: validate input, run the SQL, return result objects."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from . import datasets, inputs
from .catalog import get_table
from .engine import Engine, connect
from .errors import AnonsqlError
from .loading import LoadResult, read_csv, write_frame
from .profile import Profile, profile_table
from .verify import KAnonymityCheck, k_anonymity


@contextmanager
def _open(db: str | Engine, *, create: bool = False) -> Iterator[Engine]:
    """Connect for one call; an Engine passed in stays open for the caller."""
    engine = connect(db, create=create)
    try:
        yield engine
    finally:
        if engine is not db:
            engine.close()


def load_csv(db: str | Engine, path: str, table: str, *, na: Sequence[str] = (), replace: bool = False) -> LoadResult:
    """Load a CSV file (header row; `na` markers and empty fields become NULL) into a new table."""
    frame = read_csv(path, na)
    if frame.empty:
        raise AnonsqlError(f"CSV {path} has a header but no rows")
    with _open(db, create=True) as engine:
        return write_frame(engine, frame, table, replace=replace)


def load_dataset(db: str | Engine, name: str, table: str | None = None, *, replace: bool = False) -> LoadResult:
    """Load a bundled data set (see anonsql.datasets.DATASETS) into `table` (default: its name)."""
    if name not in datasets.DATASETS:
        raise AnonsqlError(f"unknown data set '{name}'; bundled: {', '.join(datasets.DATASETS)}")
    with _open(db, create=True) as engine:
        return datasets.load_dataset(engine, name, table or name.replace("-", "_"), replace=replace)


def profile(db: str | Engine, table: str, *, qi: Sequence[str] | str | None = None,
            class_column: str | None = None) -> Profile:
    """Row count, per-column type/distinct/NULLs, the current k over `qi`, the class balance."""
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = tab.resolve(inputs.split_names(qi))
        cls = inputs.require_class_column(engine, tab, class_column, qi_cols) if class_column else None
        rows = inputs.require_rows(engine, tab)
        return profile_table(engine, tab, rows, qi_cols, cls)


def check(db: str | Engine, table: str, qi: Sequence[str] | str, k: int, *, show: int = 20) -> KAnonymityCheck:
    """Is `table` k-anonymous over `qi` (NULL counting as its own value)? Lists the worst groups."""
    k = inputs.require_k(k)
    with _open(db) as engine:
        tab = get_table(engine, table)
        qi_cols = tab.resolve(inputs.split_names(qi))
        if not qi_cols:
            raise AnonsqlError("no quasi-identifier columns given (--qi a,b,c)")
        inputs.require_rows(engine, tab)
        return k_anonymity(engine, tab, qi_cols, k, show=show)
