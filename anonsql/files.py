"""Reading the user's input files (specs, taxonomies): UTF-8 text, or one clear error line.

>>> read_text("/nonexistent/spec.toml", "spec file")
Traceback (most recent call last):
...
anonsql.errors.AnonsqlError: cannot read spec file /nonexistent/spec.toml: No such file or directory
"""

from __future__ import annotations

import os

from .errors import AnonsqlError


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of an input file; unreadable, undecodable or binary input is an AnonsqlError."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise AnonsqlError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise AnonsqlError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise AnonsqlError(f"{what} {path} holds a NUL byte: not a text file")
    return text
