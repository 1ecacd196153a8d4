"""One home for input validation: every check of a user's input raises one clear AnonsqlError.

One rule: an argument's value is checked where the API receives it, by the constraints each
public function declares with `@validate_params({...})` (the scikit-learn way:
`Interval`, `StrOptions`, `Names`, `OutputFile`, `Ratio`, `Parsed`, `bool`, `None`), before any
connection is opened, so a refused call changes nothing. What needs the table (does the column
exist, is it numeric, is k within the row count) stays in the job, with the helpers below.
The CLI validates choices and ranges at parse time with the same constants. Algorithm
modules may still refuse impossible arrays, but never re-validate user input.

>>> k(10)
10
>>> choice("cost", "mar", ("ham", "info", "mar", "hybrid"))
'mar'
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from . import sql
from .catalog import Table
from .engine import Engine
from .errors import AnonsqlError


def k(value: object, name: str = "k") -> int:
    """k must be an integer >= 1 (booleans and floats like 2.5 are rejected)."""
    return integer(value, name, minimum=1)


def integer(value: object, name: str, *, minimum: int | None = None) -> int:
    """A whole number (not a bool, not a float) at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise AnonsqlError(f"{name} must be an integer{bound}, got {value!r}")
    return value


def seed(value: object) -> int:
    """A random seed: an integer >= 0 (numpy refuses negative seeds)."""
    return integer(value, "seed", minimum=0)


def number(value: object, name: str, *, minimum: float | None = None, above: float | None = None) -> float:
    """A finite number, optionally >= `minimum` or > `above`."""
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    ok = math.isfinite(number) and (minimum is None or number >= minimum) and (above is None or number > above)
    if not ok:
        bound = f" >= {minimum:g}" if minimum is not None else f" > {above:g}" if above is not None else ""
        raise AnonsqlError(f"{name} must be a finite number{bound}, got {value!r}")
    return number


def choice(name: str, value: str, options: Sequence[str]) -> str:
    """`value` must be one of `options` (the CLI offers the same list as a click.Choice)."""
    if value not in options:
        raise AnonsqlError(f"unknown {name} '{value}'; choose one of {', '.join(options)}")
    return value


def names(text: str | Sequence[str] | None) -> list[str]:
    """A comma-separated CLI list (or a list already) as names; blanks around commas dropped."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    out = [n.strip() for n in items]
    if any(not n for n in out):
        raise AnonsqlError(f"empty column name in list: {text!r}")
    return out


def quasi_identifiers(table: Table, qi: str | Sequence[str] | None) -> list[str]:
    """The catalog spellings of the quasi-identifier columns; at least one is required."""
    cols = table.resolve(names(qi))
    if not cols:
        raise AnonsqlError("no quasi-identifier columns given (--qi a,b,c)")
    return cols


def rows(engine: Engine, table: Table, *, empty: bool = False) -> int:
    """The table's row count; an empty table is an error (nothing to anonymize) unless `empty`
    (a job that reports on it: check, profile). A validator changes nothing: the job that
    counted tells its engine the size (Engine.expect_rows)."""
    text, params = sql.render("common/row_count", engine.dialect, tbl=table.expr)
    n = int(engine.fetch_all(text, params)[0][0])
    if n == 0 and not empty:
        raise AnonsqlError(f"table {table} is empty")
    return n


def class_column(engine: Engine, table: Table, name: str, qi: Sequence[str] = ()) -> str:
    """Resolve the class column: it must exist, must not be a QI and must hold no NULL."""
    col = table.column(name).name
    if col in qi:
        raise AnonsqlError(f"class column '{col}' is also listed as a quasi-identifier")
    text, params = sql.render("common/null_count", engine.dialect, tbl=table.expr, col=sql.column(col))
    nulls = int(engine.fetch_all(text, params)[0][0])
    if nulls:
        raise AnonsqlError(f"class column '{col}' has {nulls} NULL value(s); every row needs a class label")
    return col


def k_within(k_value: int, n_rows: int) -> int:
    """k cannot exceed the number of rows: no grouping could reach it."""
    if k_value > n_rows:
        raise AnonsqlError(f"k = {k_value} is larger than the table ({n_rows:,} rows): no grouping can reach it")
    return k_value


def dry_run(execute: bool, emit_sql: str | None) -> None:
    """A dry run (execute=False, CLI --dry-run) only writes the script, so it needs one."""
    if not execute and not emit_sql:
        raise AnonsqlError("a dry run needs --emit-sql FILE (it only writes the script)")


def output_file(path: str | None, what: str) -> str | None:
    """A file a job will write (`-` = standard output), checked before any work: its folder must
    exist and be writable, and it must not be a folder. None passes (no file asked for)."""
    if path is None or path == "-":
        return path
    if os.path.isdir(path):
        raise AnonsqlError(f"{what} {path} is a directory, not a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise AnonsqlError(f"{what} {path}: folder {folder} does not exist")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise AnonsqlError(f"{what} {path} is not writable")
    return path


def column_pairs(spec: Mapping[str, Any] | str | None, what: str = "COLUMN=VALUE list",
                 example: str = "zip=text") -> list[tuple[str, str]]:
    """'a=1, b = x' (or a mapping) as (column, value) text pairs, blanks trimmed; an item without
    '=' is one error naming `what` and an `example` (a bare 'Diabetes' is no column and no value).

    >>> column_pairs("zip=text, born = date")
    [('zip', 'text'), ('born', 'date')]
    """
    if not spec:
        return []
    if not isinstance(spec, Mapping):
        for item in spec.split(","):
            if item.strip() and "=" not in item:
                raise AnonsqlError(f"bad {what} {item.strip()!r}: give COLUMN=VALUE (no '=' in it), e.g. {example}")
    pairs = spec.items() if isinstance(spec, Mapping) else (
        item.rpartition("=")[::2] for item in spec.split(",") if item.strip())
    return [(str(column).strip(), str(value).strip()) for column, value in pairs]


def ratio(value: object, name: str) -> Fraction:
    """rho or r as an exact rational > 1 ('2', '1.3', 2.0, Fraction(3, 2)).

    >>> ratio("1.5", "rho")
    Fraction(3, 2)
    """
    try:
        if isinstance(value, bool):
            raise ValueError
        x = value if isinstance(value, Fraction) else Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise AnonsqlError(f"{name} must be a number > 1, got {value!r}") from None
    if x <= 1:
        raise AnonsqlError(f"{name} must be > 1 (1 would forbid any change of belief), got {value}")
    return x


def dominance(text: str | Sequence[Any]) -> tuple[int, float]:
    """The (n,k)-dominance rule 'n,k' (n contributors, k percent) -> (n, k).

    >>> dominance("2, 85")
    (2, 85.0)
    """
    parts = text.split(",") if isinstance(text, str) else list(text)
    try:
        n, k = int(parts[0]), float(parts[1])
        ok = len(parts) == 2 and n >= 1 and 0 < k <= 100
    except (ValueError, IndexError, TypeError):
        ok = False
    if not ok:
        raise AnonsqlError(f"dominance must be 'n,k' with n >= 1 contributors and 0 < k <= 100 percent, got {text!r}")
    return n, k


# ---- declared constraints (scikit-learn's sklearn/utils/_param_validation.py, in small) ----

class Constraint(ABC):
    """One rule a parameter's value must follow; `check` raises AnonsqlError naming `name`."""

    @abstractmethod
    def check(self, value: object, name: str) -> None:
        """Raise AnonsqlError, naming `name`, unless `value` follows the rule."""


class Interval(Constraint):
    """A whole number (`int`) or finite number (`float`) between `left` and `right` (None: no
    bound), each bound included unless `closed` says otherwise ('both', 'left', 'right', 'neither').

    >>> Interval(int, 1, None).check(0, "k")
    Traceback (most recent call last):
    anonsql.errors.AnonsqlError: k must be an integer >= 1, got 0
    """

    def __init__(self, kind: type, left: float | None, right: float | None, *, closed: str = "both",
                 label: str | None = None) -> None:
        if kind not in (int, float) or closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"bad Interval({kind!r}, closed={closed!r})")
        self.kind, self.left, self.right, self.closed, self.label = kind, left, right, closed, label

    def __repr__(self) -> str:
        return f"Interval({self.kind.__name__}, {self.left}, {self.right}, closed={self.closed!r})"

    def _bounds(self) -> str:
        parts = []
        if self.left is not None:
            parts.append(f"{'>=' if self.closed in ('both', 'left') else '>'} {self.left:g}")
        if self.right is not None:
            parts.append(f"{'<=' if self.closed in ('both', 'right') else '<'} {self.right:g}")
        return " and ".join(parts)

    def check(self, value: object, name: str) -> None:
        whole = isinstance(value, int) and not isinstance(value, bool)
        number = float(value) if whole or (self.kind is float and isinstance(value, float)) else math.nan  # type: ignore[arg-type]
        left_in, right_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        low_ok = self.left is None or number > self.left or (number == self.left and left_in)
        high_ok = self.right is None or number < self.right or (number == self.right and right_in)
        if math.isfinite(number) and low_ok and high_ok:
            return
        what = "an integer" if self.kind is int else "a finite number"
        bounds = self._bounds()
        raise AnonsqlError(f"{self.label or name} must be {what}{' ' + bounds if bounds else ''}, got {value!r}")


class StrOptions(Constraint):
    """One of the given strings; `options` may be a function returning them (a job's list,
    imported only when a call is checked)."""

    def __init__(self, options: Sequence[str] | Callable[[], Sequence[str]], *, label: str | None = None) -> None:
        self._options, self.label = options, label

    @property
    def options(self) -> list[str]:
        return list(self._options() if callable(self._options) else self._options)

    def __repr__(self) -> str:
        return f"StrOptions({self.options})"

    def check(self, value: object, name: str) -> None:
        if not isinstance(value, str):
            raise AnonsqlError(f"{self.label or name} must be one of {', '.join(self.options)}, got {value!r}")
        choice(self.label or name, value, self.options)


class Names(Constraint):
    """Column names: a list of strings or one comma-separated string (blanks around commas dropped)."""

    def check(self, value: object, name: str) -> None:
        ok = isinstance(value, str) or (isinstance(value, Sequence) and all(isinstance(n, str) for n in value))
        if not ok:
            raise AnonsqlError(f"{name} must be column names (a list or 'a,b,c'), got {value!r}")
        try:
            names(value)  # type: ignore[arg-type]
        except AnonsqlError as exc:
            raise AnonsqlError(f"{name}: {exc}") from None


class OutputFile(Constraint):
    """A file the call will write ('-' is standard output): its folder exists, it is not a folder."""

    def __init__(self, *, label: str | None = None) -> None:
        self.label = label

    def check(self, value: object, name: str) -> None:
        if not isinstance(value, (str, os.PathLike)):
            raise AnonsqlError(f"{self.label or name} must be a file path, got {value!r}")
        output_file(os.fspath(value), self.label or name)


class Ratio(Constraint):
    """An exact number > 1 (rho, r of the nbc jobs): a number or its text."""

    def check(self, value: object, name: str) -> None:
        ratio(value, name)


class Dominance(Constraint):
    """The (n,k)-dominance rule of the tables job: 'n,k' or (n, k)."""

    def check(self, value: object, name: str) -> None:
        if not isinstance(value, (str, Sequence)):
            raise AnonsqlError(f"{name} must be 'n,k', got {value!r}")
        dominance(value)


class Parsed(Constraint):
    """Text a parser reads without the table ('col=3,zip=2', 'a*b,c*b'): the parser's refusal is
    the message. Values of other `kinds` are refused; `bad` lists values the parser refuses
    (the test of every public function tries them)."""

    def __init__(self, parse: Callable[[Any], object], *, label: str, bad: Sequence[object],
                 kinds: tuple[type, ...] = (str,)) -> None:
        self.parse, self.label, self.bad, self.kinds = parse, label, list(bad), kinds

    def __repr__(self) -> str:
        return f"Parsed({self.label})"

    def check(self, value: object, name: str) -> None:
        if not isinstance(value, self.kinds):
            raise AnonsqlError(f"{self.label} must be {' or '.join(k.__name__ for k in self.kinds)}, got {value!r}")
        self.parse(value)


class _Type(Constraint):
    """An instance of `kind` (`bool` in a declaration: True or False, not 1 or 'yes')."""

    def __init__(self, kind: type) -> None:
        self.kind = kind

    def check(self, value: object, name: str) -> None:
        if not isinstance(value, self.kind):
            wanted = "True or False" if self.kind is bool else f"a {self.kind.__name__.lower()}"
            raise AnonsqlError(f"{name} must be {wanted}, got {value!r}")


class _NoneOf(Constraint):
    """None (declared as `None` beside another constraint)."""

    def check(self, value: object, name: str) -> None:
        if value is not None:
            raise AnonsqlError(f"{name} must be None, got {value!r}")


def _constraint(rule: Constraint | type | None) -> Constraint:
    if rule is None:
        return _NoneOf()
    return rule if isinstance(rule, Constraint) else _Type(rule)


def check_param(name: str, value: object, rules: Sequence[Constraint]) -> None:
    """`value` follows one of `rules`, or the first that does not apply says why (None is
    only ever an alternative, never the reason)."""
    errors = []
    for rule in rules:
        try:
            rule.check(value, name)
            return
        except AnonsqlError as exc:
            errors.append((isinstance(rule, _NoneOf), exc))
    raise min(errors, key=lambda e: e[0])[1]


def lazy(module: str, attr: str) -> Callable[[], Any]:
    """`attr` of an anonsql module (relative, e.g. '.protect'), imported when a call is checked:
    the API declares a job's choices without importing the job at start-up."""
    def get() -> Any:
        return getattr(importlib.import_module(module, __package__), attr)
    return get


def lazy_parser(module: str, attr: str, *extra: Any) -> Callable[[Any], object]:
    """A job's parser of an option's text (`extra` after the value), imported when a call is checked."""
    def parse(value: Any) -> object:
        return lazy(module, attr)()(value, *extra)
    return parse


F = TypeVar("F", bound=Callable[..., Any])
Rule = Constraint | type | None  # one alternative of a declaration


def validate_params(declared: Mapping[str, Rule | Sequence[Rule]]) -> Callable[[F], F]:
    """Check the declared parameters of every call before the function runs.

    Each value is a constraint or a list of them (any one may hold): `Interval`, `StrOptions`,
    `Names`, `OutputFile`, `Ratio`, `Dominance`, `Parsed`, a type such as `bool` or `Mapping`,
    or `None` (None allowed). The
    declarations stay readable as `func._params` (the test of every public function uses them).
    """
    rules = {name: [_constraint(r) for r in (rule if isinstance(rule, (list, tuple)) else [rule])]  # type: ignore[arg-type]
             for name, rule in declared.items()}

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        unknown = set(rules) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{func.__name__} declares constraints for no such parameter: {', '.join(sorted(unknown))}")

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            for name, alternatives in rules.items():
                value = bound.arguments.get(name, signature.parameters[name].default)
                check_param(name, value, alternatives)
            return func(*args, **kwargs)

        checked._params = rules  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate
