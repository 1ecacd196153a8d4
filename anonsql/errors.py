"""The one exception type users see: bad input or an unmet guarantee, stated in one line."""


class AnonsqlError(Exception):
    """A problem the user can fix (bad input, missing table, unreachable database).

    The CLI prints it as one line and exits with code 2; the database is left unchanged.
    """


class DatabaseError(AnonsqlError):
    """A statement failed inside the database; keeps the SQL for diagnostics."""

    def __init__(self, message: str, sql: str):
        super().__init__(message)
        self.sql = sql


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message: drivers' messages run to many lines."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
