"""The one result type: every job's result is a Report (what ran on which table, what it wrote,
which independent checks proved its guarantees, seconds per stage, notes), as JSON or as text.

`ok` is the one success flag. For a job that promises something (a writing job, a check) it is
True only when every guarantee was proved by its check, so a dry run that proved nothing is not
ok. Jobs raise `VerificationError` (after rolling back) when a check fails, so a returned report
of a writing job is ok; `ok` is still computed from the checks, never set by hand.

>>> r = Report(table="adult", checks=[Check("k-anonymity", True, "common/violations_summary")])
>>> r.ok, bool(r)
(True, True)
>>> Report(table="adult").ok  # nothing proved
False
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

#: The prefix of a privacy warning on the progress channel: `--quiet` silences progress, never these.
WARNING = "WARNING: "

#: Where jobs send progress lines (the CLI prints them on stderr; the API default is silence).
Progress = Callable[[str], None]


def silent(_message: str) -> None:
    """The progress sink of API calls that did not ask for progress."""


@dataclass
class Check:
    """One guarantee and the independent SQL query (file under sql/) that proved or refuted it."""

    name: str
    passed: bool
    query: str  # the sql/ file, without .sql; "" for a check of files (an artefact's sha256)
    detail: str = ""


@dataclass(kw_only=True)
class Report:
    """The base of every job's result: subclasses add their figures and `lines()` for people."""

    #: False for reports that promise nothing (profile, views, evaluate): `ok` then only
    #: requires that no check failed.
    PROVES: ClassVar[bool] = True
    #: Fields that hold row-level facts (a changed row's key, a cell's original value): kept out
    #: of every public artefact by `public_dict()`.
    PRIVATE: ClassVar[tuple[str, ...]] = ()
    #: A method's report: what it protects against, in plain words, the summary's first line.
    PROTECTS: ClassVar[str] = ""

    table: str
    out: str | None = None
    checks: list[Check] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Privacy warnings (identifiers left in clear, attribute disclosure, ...): shown in the summary,
    #: the JSON, the release's manifest and HTML report; `--quiet` silences progress, never these.
    warnings: list[str] = field(default_factory=list)
    #: The run's reviewable SQL script (`--emit-sql`, anonsql.rewrite.Script), when the job built one:
    #: it spells out values, so it is in no JSON (`to_dict`) and no public artefact.
    script: str | None = field(default=None, repr=False, metadata={"json": False})

    @property
    def ok(self) -> bool:
        """Every check passed (and, for a job that promises something, at least one ran)."""
        passed = all(c.passed for c in self.checks)
        return passed and bool(self.checks) if self.PROVES else passed

    def __bool__(self) -> bool:
        return self.ok

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Record the wall time of a stage in `seconds[stage]` (and honour the fault hook)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = time.perf_counter() - start
        fault_hook(stage)

    def warn(self, message: str, say: Progress = silent) -> None:
        """Record a privacy warning (`warnings`) and say it on the progress channel as `WARNING: ...`."""
        self.warnings.append(message)
        say(WARNING + message)

    def check(self, name: str, passed: bool, query: str, detail: str = "") -> Check:
        """Record the outcome of one independent check."""
        result = Check(name, bool(passed), query, detail)
        self.checks.append(result)
        return result

    @property
    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: every field (but `script`), plus `ok`."""
        data = {f.name: _plain(getattr(self, f.name))
                for f in dataclasses.fields(self) if f.metadata.get("json", True)}
        data["ok"] = self.ok
        return data

    def public_dict(self) -> dict[str, Any]:
        """`to_dict()` without the PRIVATE fields; `private` names the fields left out."""
        data = {k: v for k, v in self.to_dict().items() if k not in self.PRIVATE}
        return {**data, "private": list(self.PRIVATE)} if self.PRIVATE else data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)

    def lines(self) -> list[str]:
        """The job-specific part of the summary; subclasses override."""
        return [f"{self.table}" + (f" -> {self.out}" if self.out else "")]

    def summary(self) -> str:
        """Text for people: the job's lines, then what proved it, the notes and the timings."""
        lines = ([f"protects against: {self.PROTECTS}"] if self.PROTECTS else []) + self.lines()
        lines += [f"  check: {c.name} {'holds' if c.passed else 'FAILS'}" + (f", {c.detail}" if c.detail else "")
                  + (f" (sql/{c.query}.sql)" if c.query else "") for c in self.checks]
        lines += [f"  WARNING: {w}" for w in self.warnings]
        lines += [f"  note: {n}" for n in self.notes]
        if self.seconds:
            lines.append("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in self.seconds.items()))
        return "\n".join(lines)


#: Fault injection for the crash tests: with ANONSQL_KILL_AFTER=<stage> in the environment the
#: process kills itself (SIGKILL: no cleanup, no rollback by Python) right after that stage of a
#: job (or at a moment of a staged output's commit: anonsql.catalog._commit), so a test can prove
#: the database keeps the source intact, and every output under its name, at every moment of a run.
KILL_AFTER = "ANONSQL_KILL_AFTER"


def fault_hook(stage: str) -> None:
    if os.environ.get(KILL_AFTER) == stage:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _plain(value: Any) -> Any:
    """JSON-ready values: dataclasses, numpy scalars and arrays, Fractions, tuples."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, Report):
            return value.to_dict()
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    fractions = sys.modules.get("fractions")  # a Fraction exists only once its module is imported
    if fractions is not None and isinstance(value, fractions.Fraction):
        return str(value)
    return value


def save(path: str, text: str) -> None:
    """Write an output file of a job (report, script); `-` means standard output."""
    if path == "-":
        print(text, end="" if text.endswith("\n") else "\n")
        return
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
