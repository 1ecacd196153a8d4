"""The exception types users see (bad input, an unmet guarantee), and the one redaction of secrets."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import Check


class AnonsqlError(Exception):
    """A problem the user can fix (bad input, missing table, unreachable database).

    The CLI prints it as one line and exits with code 2; the database is left unchanged.
    """


class DatabaseError(AnonsqlError):
    """A statement failed inside the database; keeps the SQL for diagnostics."""

    def __init__(self, message: str, sql: str):
        super().__init__(message)
        self.sql = sql


class VerificationError(AnonsqlError):
    """An independent check refuted a guarantee; the job rolled back, nothing was changed."""

    def __init__(self, checks: list[Check]):
        failed = [c for c in checks if not c.passed]
        super().__init__("verification failed, nothing was changed: " + "; ".join(
            f"{c.name}: {c.detail}" if c.detail else c.name for c in failed))
        self.checks = checks


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message: drivers' messages run to many lines."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_SECRETS = [
    (re.compile(r"(://[^/@:\s]*:)[^@/\s]*@"), r"\1***@"),  # scheme://user:PASSWORD@host
    (re.compile(r"(?i)\b(password|passwd|pgpassword|sslpassword)=[^&\s'\"]*"), r"\1=***"),  # ?password=...
]


def redact(text: str) -> str:
    """Text with connection secrets masked: a URL's password, `password=` parameters.

    >>> redact("postgresql://u:pw@h/db?password=x&sslmode=require")
    'postgresql://u:***@h/db?password=***&sslmode=require'
    """
    for pattern, repl in _SECRETS:
        text = pattern.sub(repl, text)
    return text
