"""The installed anonsql's version (`anonsql.__version__`, the release's manifest and report)."""

from __future__ import annotations


def version() -> str:
    """Looked up on first use: the search of the installed distributions costs a start."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("anonsql")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
