"""Attribute-disclosure models the kanon loop enforces beside k (issue 32).

Each model judges the sensitive-value histogram of one equivalence class E (the rows sharing a
QI pattern y, all classes c together): h_E(v) = rows of E whose sensitive value is v, NULL (⊥) a
value of its own, in the type's order with NULL last (the dictionary codes 0..V-1, then ⊥ at V).

- distinct l-diversity (Machanavajjhala et al. 2007): |{v : h_E(v) > 0}| >= L;
- entropy l-diversity: H(E) = ln n_E - Σ_v h_E(v) ln h_E(v) / n_E >= ln L;
- recursive (c, l)-diversity: r_1 < c (r_l + r_{l+1} + ... + r_m), r_1 >= r_2 >= ... the counts;
- t-closeness (Li et al. 2007): D(p_E, p) <= T, p the whole table's distribution; the equal
  distance ½ Σ_v |p_E(v) - p(v)| for categories, the ordered distance
  1/(m-1) Σ_i |Σ_{j<=i} (p_E(v_j) - p(v_j))| over the table's m values for numbers and dates.

The same formulas as sql/data/attribute_disclosure.sql (what `check` and the release gates read)
and sql/kanon/recursive_diversity.sql, which verify the published table. Floating models hold
within TOLERANCE, on both sides, so that the loop and SQL, which sum in different orders, agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AnonsqlError

#: Slack of the floating models (entropy, t): H >= ln L - TOLERANCE, D <= T + TOLERANCE.
TOLERANCE = 1e-9

#: The models by their option: what the loop enforces and `verify.diversity` re-checks.
KINDS = ("l_diversity", "entropy_l", "recursive_cl", "t_closeness")


@dataclass(frozen=True)
class Model:
    """One constraint on the classes: `kind` (KINDS) of sensitive column `name`, whose histograms
    are the loop's sensitive input number `column`; `level` is L (or T), `c` the c of recursive (c, l)."""

    name: str
    kind: str
    level: float
    column: int = 0
    c: float = 0.0
    ordered: bool = False  # t-closeness: the ordered distance (numbers, dates), else the equal one

    @property
    def option(self) -> str:
        """The model as its command-line option spells it."""
        flag = "--" + self.kind.replace("_", "-")
        level = f"{self.c:g},{self.level:g}" if self.kind == "recursive_cl" else f"{self.level:g}"
        return f"{flag} {self.name}={level}"

    @property
    def threshold(self) -> float:
        """The bound the model's figure is compared with: L, ln L - TOLERANCE, c or T + TOLERANCE."""
        if self.kind == "entropy_l":
            return float(np.log(self.level)) - TOLERANCE
        if self.kind == "t_closeness":
            return self.level + TOLERANCE
        return self.c if self.kind == "recursive_cl" else self.level

    def holds(self, hist: np.ndarray, table: np.ndarray, logs: np.ndarray | None = None) -> np.ndarray:
        """Which rows of `hist` (E, V+1) histograms meet the model; `table` (V+1,) is the whole
        table's, `logs[i]` = ln i for the counts (made here when not given). Every sum runs over the
        values in order (cumsum), as the compiled loop adds them: both decide alike, bit for bit."""
        hist = np.atleast_2d(hist)
        if self.kind == "l_diversity":
            return (hist > 0).sum(axis=1) >= self.threshold
        if self.kind == "entropy_l":
            return entropy(hist, logs) >= self.threshold
        if self.kind == "recursive_cl":
            ranked = -np.sort(-hist, axis=1)
            tail = ranked[:, int(self.level) - 1:].sum(axis=1)
            return ranked[:, 0] < self.threshold * tail
        return distance(hist, table, self.ordered) <= self.threshold


def _total(terms: np.ndarray) -> np.ndarray:
    """Σ of each row, added left to right (np.sum adds pairwise)."""
    return np.cumsum(terms, axis=1)[:, -1]


def entropy(hist: np.ndarray, logs: np.ndarray | None = None) -> np.ndarray:
    """H(E) = ln n - (Σ h ln h) / n of each row (natural logarithm, 0 ln 0 = 0)."""
    h = np.atleast_2d(np.asarray(hist, dtype=np.int64))
    n = h.sum(axis=1)
    if logs is None:
        with np.errstate(divide="ignore"):
            logs = np.log(np.arange(int(n.max(initial=0)) + 1, dtype=np.float64))
    terms = h * logs[np.maximum(h, 1)]  # 0 ln 0 = 0 x ln 1
    return logs[n] - _total(terms) / n


def distance(hist: np.ndarray, table: np.ndarray, ordered: bool) -> np.ndarray:
    """EMD of each row's distribution to the table's: equal or ordered distance (module docstring)."""
    hist = np.atleast_2d(hist)
    diff = hist / hist.sum(axis=1, keepdims=True) - share(table)
    if not ordered:
        return _total(np.abs(diff)) / 2
    return _total(np.abs(np.cumsum(diff, axis=1))) / span(table)


def share(table: np.ndarray) -> np.ndarray:
    """p(v) = N(v) / N, the whole table's distribution."""
    return table / table.sum()


def span(table: np.ndarray) -> float:
    """m - 1 of the ordered distance (at least 1), m the table's distinct values."""
    return float(max(int((table > 0).sum()) - 1, 1))


def check_whole_table(models: Sequence[Model], tables: Sequence[np.ndarray]) -> None:
    """Refuse, before any work, a model that even the whole table as one class fails: the loop's
    last resort, every cell blanked, could not meet it either (t-closeness always holds there)."""
    for model in models:
        table = tables[model.column]
        if model.holds(table, table)[0]:
            continue
        values = int((table > 0).sum())
        if model.kind == "l_diversity":
            why = f"the whole table holds only {values} distinct {model.name} value(s) (NULL counted as one)"
        elif model.kind == "entropy_l":
            why = f"the whole table's entropy l-diversity of {model.name} is {float(np.exp(entropy(table)[0])):.4g}"
        else:
            why = (f"the whole table is not recursive ({model.c:g},{int(model.level)})-diverse on {model.name} "
                   f"({values} distinct values)")
        raise AnonsqlError(f"{model.option} cannot be met: {why}")


def class_holds(models: Sequence[Model], hists: Sequence[np.ndarray], tables: Sequence[np.ndarray],
                logs: np.ndarray | None = None) -> bool:
    """Does one class, its histograms `hists` (one per sensitive column), meet every model?"""
    return all(bool(m.holds(hists[m.column], tables[m.column], logs)[0]) for m in models)


#: What each option's level must be, in words (the one error line).
_BOUNDS = {"l_diversity": "a whole number >= 1", "entropy_l": "a number >= 1",
           "recursive_cl": "C,L: a number C > 0 and a whole number L >= 1", "t_closeness": "a number from 0 to 1"}


def parse(spec: Mapping[str, Any] | str | None, kind: str) -> list[Model]:
    """'occupation=3,income=2' (or {column: level}) of option `kind` as models on named columns
    (`column` 0: the caller numbers the sensitive columns). recursive_cl takes COL=C,L
    ('occupation=3,2' or {occupation: '3,2'} or {occupation: [3, 2]}). One error line on bad text.

    >>> [(m.name, m.c, m.level) for m in parse("occupation=3,2", "recursive_cl")]
    [('occupation', 3.0, 2.0)]
    """
    if kind not in KINDS:
        raise ValueError(f"unknown model {kind!r}")
    flag = "--" + kind.replace("_", "-")
    if spec is None or spec == "" or spec == {}:
        return []
    if not isinstance(spec, (str, Mapping)):
        raise AnonsqlError(f"{flag} must be COLUMN=VALUE text or a mapping, got {spec!r}")
    items: list[tuple[str, list[str]]] = []
    if isinstance(spec, Mapping):
        for column, value in spec.items():
            parts = [str(v) for v in value] if isinstance(value, (list, tuple)) else str(value).split(",")
            items.append((str(column).strip(), [p.strip() for p in parts]))
    else:
        for part in (p.strip() for p in spec.split(",")):
            if "=" in part:
                column, _, value = part.partition("=")
                items.append((column.strip(), [value.strip()]))
            elif items and part:
                items[-1][1].append(part)
            else:
                raise AnonsqlError(f"bad {flag} {spec!r}: give COLUMN=VALUE, VALUE {_BOUNDS[kind]}")
    models: list[Model] = []
    for column, values in items:
        level = _level(kind, values)
        if not column or level is None or any(m.name == column for m in models):
            raise AnonsqlError(f"bad {flag} {column or '?'}={','.join(values)}: give COLUMN=VALUE once per column, "
                               f"VALUE {_BOUNDS[kind]}")
        models.append(Model(column, kind, level[1], c=level[0]))
    return models


def _level(kind: str, values: list[str]) -> tuple[float, float] | None:
    """(c, level) of one option value, None when out of bounds."""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return None
    if not all(np.isfinite(numbers)):
        return None
    if kind == "recursive_cl":
        if len(numbers) != 2 or numbers[0] <= 0 or numbers[1] < 1 or not numbers[1].is_integer():
            return None
        return numbers[0], numbers[1]
    if len(numbers) != 1:
        return None
    x = numbers[0]
    ok = {"l_diversity": x >= 1 and x.is_integer(), "entropy_l": x >= 1, "t_closeness": 0 <= x <= 1}[kind]
    return (0.0, x) if ok else None


@dataclass
class Layout:
    """The models as the compiled loop reads them: every sensitive column's histogram slots side
    by side (VT in all), per model its kind (_core.c MODEL_*), first slot, slots, threshold
    (Model.threshold) and span (ordered distance: span(); recursive: l), with the table's shares
    and the count logarithms the reference loop reads too. `hists` is written by the loop."""

    hists: np.ndarray  # (T, VT) int64
    kind: np.ndarray
    offset: np.ndarray
    width: np.ndarray
    threshold: np.ndarray
    span: np.ndarray
    share: np.ndarray  # (VT,)
    logs: np.ndarray


def layout(models: Sequence[Model], hists: Sequence[np.ndarray], tables: Sequence[np.ndarray],
           logs: np.ndarray) -> Layout:
    """Lay the models out for the compiled loop (see Layout)."""
    offsets = np.concatenate([[0], np.cumsum([h.shape[1] for h in hists])]).astype(np.int64)
    kinds = {"l_diversity": 0, "entropy_l": 1, "recursive_cl": 2}
    return Layout(
        hists=np.ascontiguousarray(np.concatenate(hists, axis=1) if hists else np.zeros((0, 0)), dtype=np.int64),
        kind=np.array([kinds.get(m.kind, 4 if m.ordered else 3) for m in models], dtype=np.int64),
        offset=np.array([offsets[m.column] for m in models], dtype=np.int64),
        width=np.array([hists[m.column].shape[1] for m in models], dtype=np.int64),
        threshold=np.array([m.threshold for m in models], dtype=np.float64),
        span=np.array([m.level if m.kind == "recursive_cl" else span(tables[m.column]) for m in models],
                      dtype=np.float64),
        share=np.ascontiguousarray(np.concatenate([share(t) for t in tables]) if tables else np.zeros(0),
                                   dtype=np.float64),
        logs=np.ascontiguousarray(logs, dtype=np.float64),
    )
