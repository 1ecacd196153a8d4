"""A long loop's progress: a count that a terminal shows as a bar, a line anywhere else.

A loop reports `tick(say, what, done, total, line)` each time it advances. The CLI's progress
sink (anonsql.cli.options) has a `count` method: on a terminal, without --quiet, it draws
click's progress bar on stderr (count, rate, time left), redrawn at most every ~0.2 s, and
says so by returning True; anywhere else (not a TTY, --quiet, the API's own callables) the
loop's `line` is said instead, as before: the throttled `  ...` lines, or nothing.
"""

from __future__ import annotations

from .report import Progress


def tick(say: Progress, what: str, done: int, total: int, line: str) -> None:
    """`done` of `total` steps of the loop `what` are done; `line` is the text without a bar."""
    count = getattr(say, "count", None)
    if count is not None and count(what, done, total):
        return
    say(line)
