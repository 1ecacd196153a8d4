"""Rendered SQL kept on disk between runs (issue 11: a fast start).

`sql.render` generates a template's text once per (template, dialect, shape of the names bound)
in a process, `sql.composed` a statement built in code once per (builder, dialect, shape of its
parts); this file keeps those texts for the next process, which then neither parses nor
generates them, and, where it binds only light names (sql.Name), never imports sqlglot. An
entry is named by a hash of the template's own text (or the builder's name), the dialect and
the shape, and a composed entry holds the hashes of the templates it was built from; the file
as a whole is named (`salt`) by sqlglot's version file and anonsql's modules (sql._disk). So an
edited template, a changed binder or composer, or another sqlglot never reads a stale text: it
misses and renders afresh.

The file is `rendered-sql.json` in $ANONSQL_CACHE_DIR, else $XDG_CACHE_HOME/anonsql, else
~/.cache/anonsql; ANONSQL_CACHE_DIR set to the empty string turns the cache off. It is only a
cache, so it fails quietly by design: a file that cannot be read or does not parse counts as
empty, and one that cannot be written is left as it was; no result depends on it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

#: Entries kept at the most (the newest); a run of every command renders a few hundred.
MAX_ENTRIES = 4096

FILE_NAME = "rendered-sql.json"


def cache_dir() -> Path | None:
    """Where the file lives (see the module docstring); None when the cache is off."""
    configured = os.environ.get("ANONSQL_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home directory (a service account): no cache
            return None
    return Path(base) / "anonsql"


class RenderedCache:
    """Rendered texts with their parameter names (and, for a statement composed in code, the
    hashes of the templates it was built from) by entry key; loaded on first use, saved at exit."""

    def __init__(self, directory: Path | None, salt: str):
        self.path = directory / FILE_NAME if directory is not None else None
        self.salt = salt
        self._entries: dict[str, list] | None = None
        self._added: dict[str, list] = {}

    @staticmethod
    def key(template_text: str, shape: str) -> str:
        """The entry of one template (its text) rendered for one dialect and names (`shape`)."""
        return hashlib.sha256(f"{template_text}\0{shape}".encode()).hexdigest()[:32]

    def get(self, key: str) -> tuple[str, tuple[str, ...], dict[str, str]] | None:
        """(text, parameter names, template hashes) of an entry, or None."""
        hit = self._load().get(key)
        if not (isinstance(hit, list) and len(hit) == 3 and isinstance(hit[0], str) and isinstance(hit[1], list)
                and isinstance(hit[2], dict)):
            return None
        return hit[0], tuple(hit[1]), hit[2]

    def put(self, key: str, text: str, params: tuple[str, ...], sources: dict[str, str] | None = None) -> None:
        """Add an entry; the file is written once, when the process exits."""
        if self.path is None:
            return
        if not self._added:
            atexit.register(self.save)
        self._added[key] = self._load()[key] = [text, list(params), dict(sources or {})]

    def save(self) -> None:
        """Write the entries added here over what the file holds now (another process may have
        added its own since), keeping the newest MAX_ENTRIES; atomically, by rename."""
        if self.path is None or not self._added:
            return
        entries = {**self._read(), **self._added}
        kept = dict(list(entries.items())[-MAX_ENTRIES:])
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".rendered-sql.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"salt": self.salt, "entries": kept}, out)
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        self._added = {}

    def _load(self) -> dict[str, list]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict[str, list]:
        """The file's entries if it is this salt's, else none."""
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("salt") != self.salt or not isinstance(data.get("entries"), dict):
            return {}
        return data["entries"]
