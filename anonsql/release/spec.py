"""The release spec (TOML): source, ordered steps, gates and outputs, validated once.

Unknown keys and wrong types are one error naming the file and line (tomllib reports lines for
syntax errors only, so the line of a key is found in the text: the first `key =` inside its
section's header, or the n-th `[[steps]]` header's entry; a message with no key of its own points
at its section's header, else at line 1). The spec keeps its text, so errors found later against
the database (an unknown column in [source], a step that fails) name their line too
(`Spec.at`). Pure: no database here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AnonsqlError

#: Step kinds in the order a release usually runs them; `drop` and `bin` write copies of rows,
#: `kanon` and `protect` suppress cells (kanon also drops or pseudonymizes identifiers), `nbc`
#: and `tables` publish aggregates.
KINDS = ("drop", "bin", "kanon", "protect", "nbc", "tables")
#: Kinds whose output is a row-level table that later steps read by default.
ROW_KINDS = ("drop", "bin", "kanon", "protect")
#: The private table a kind writes beside its output (`<out><suffix>`): original values, never published.
PRIVATE_TABLES = {"protect": "_changes", "tables": "_private_audit"}


def _is_names(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))


def _is_map(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, dict) and all(check(x) for x in v.values())


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float)


_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (_is_int, "a whole number"),
    "number": (_is_number, "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "names": (_is_names, "a list of column names (or one comma-separated string)"),
    "keys": (lambda v: isinstance(v, str) or (isinstance(v, list) and all(
        isinstance(x, (str, int)) and not isinstance(x, bool) for x in v)),
        "the key values of the rows to protect (the key column's values, not column names), e.g. rows = [2, 7] "
        "or rows = \"2,7\""),
    "str_map": (_is_map(lambda v: isinstance(v, str)), "a table of strings, e.g. {age = \"width:10\"}"),
    "int_map": (_is_map(_is_int), "a table of whole numbers, e.g. {income = 2}"),
    "number_map": (_is_map(_is_number), "a table of numbers, e.g. {income = 0.3}"),
    "number_or_str": (lambda v: _is_number(v) or isinstance(v, str), "a number or a string"),
    "prior": (lambda v: isinstance(v, str) or _is_map(_is_number)(v), "a string or a table of numbers"),
    "cells": (lambda v: isinstance(v, str) or (isinstance(v, list) and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in v)),
        "a CSV file name or a list of [key, column] pairs"),
}

_SECTIONS: dict[str, dict[str, str]] = {
    "release": {"name": "str", "seed": "int", "previous": "names"},
    "source": {"db": "str", "table": "str", "key": "str", "qi": "names", "class": "str", "sensitive": "names"},
    "gates": {"table": "str", "baseline": "str", "qi": "names", "k": "int", "l_diversity": "int_map",
              "t_closeness": "number_map", "max_risk": "number", "max_suppressed": "number",
              "max_nb_error_loss": "number", "folds": "int", "max_journalist_risk": "number",
              "max_linkage_success": "number", "population": "str", "population_weights": "str",
              "min_candidates": "int"},
    "outputs": {"dir": "str", "manifest": "str", "script": "str", "report": "str"},
}
_STEP_COMMON = {"kind": "str", "out": "str", "input": "str", "publish": "bool"}
_STEP_KEYS: dict[str, dict[str, str]] = {
    "drop": {"columns": "names"},
    "bin": {"columns": "str_map"},
    "kanon": {"qi": "names", "class": "str", "k": "int", "cost": "str", "alpha": "number", "seed": "int",
              "drop": "names", "pseudonymize": "names", "key_file": "str", "l_diversity": "int_map",
              "entropy_l": "number_map", "recursive_cl": "str_map", "t_closeness": "number_map",
              "hierarchies": "str_map", "max_suppressed_records": "number", "hierarchy_bounds": "bool",
              "search_utility": "str", "restore": "bool"},
    "protect": {"key": "str", "method": "str", "target": "str", "rows": "keys", "cells": "cells", "attrs": "names",
                "top_k": "int", "seed": "int", "taxonomies": "str_map", "qi": "names", "k": "int"},
    "nbc": {"class": "str", "attrs": "names", "rho": "number_or_str", "prior": "prior", "r": "number_or_str",
            "root": "str", "synthetic": "bool", "precedence": "names"},
    "tables": {"dims": "names", "tables": "str", "margins": "str", "sum": "str", "contributor": "str",
               "min_count": "int", "zero_unsafe": "bool", "dominance": "str", "p_percent": "number",
               "protection": "number", "previous": "str", "method": "str", "record_key": "str",
               "record_key_column": "str",
               "key_file": "str", "ckm_d": "int", "ckm_v": "number", "ckm_js": "int", "ckm_pstay": "number",
               "ckm_top_k": "int", "ckm_scale": "str", "ckm_m": "number", "hierarchy": "str_map"},
}
_REQUIRED = {"drop": ("columns",), "bin": ("columns",), "kanon": ("k",)}


def names(value: Any) -> list[str]:
    """A names option as a list: ["a", "b"] or "a,b"."""
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    return list(value or [])


#: The one subfolder of a release's folder that is not public, and the artefacts that go there.
PRIVATE_DIR = "private"
PRIVATE_FILES = ("script", "changes", "utility")


def artefact_path(what: str, name: str) -> str:
    """An artefact's path inside the release folder: private ones under PRIVATE_DIR/."""
    return f"{PRIVATE_DIR}/{name}" if what in PRIVATE_FILES else name


@dataclass(frozen=True)
class Source:
    db: str | None
    table: str
    key: str | None
    qi: list[str]
    class_column: str | None
    sensitive: list[str]


@dataclass(frozen=True)
class Step:
    number: int  # 1-based, as people count
    kind: str
    out: str
    input: str | None  # None: the latest row-level table (the source before any)
    options: dict[str, Any]
    publish: bool | None = None  # its output is released (resolved by _published: None means False)

    @property
    def label(self) -> str:
        return f"step {self.number} ({self.kind})"


@dataclass(frozen=True)
class Gates:
    table: str | None
    baseline: str | None
    qi: list[str] | None
    k: int | None = None
    l_diversity: dict[str, int] = field(default_factory=dict)
    t_closeness: dict[str, float] = field(default_factory=dict)
    max_risk: float | None = None
    max_suppressed: float | None = None
    max_nb_error_loss: float | None = None
    folds: int = 5
    max_journalist_risk: float | None = None  # the attack gates (anonsql.attack): max 1/F_k against
    max_linkage_success: float | None = None  # `population` or `population_weights`; linkage's success
    population: str | None = None
    population_weights: str | None = None
    min_candidates: int | None = None  # the refinement attack over the release's artefacts (anonsql attack refine)


@dataclass(frozen=True)
class Spec:
    path: Path
    sha256: str  # of the spec file's bytes
    name: str
    seed: int
    source: Source
    steps: list[Step]
    gates: Gates
    out_dir: Path
    files: dict[str, str]  # manifest / script / report / changes -> file name (artefact_path places it)
    previous: list[str] = field(default_factory=list)  # safe tables published before: attacked with this release's
    text: str = field(default="", repr=False, compare=False)  # the file's text, to find lines in (at)

    def artefact(self, what: str) -> Path:
        return self.out_dir / artefact_path(what, self.files[what])

    def at(self, section: str | None, index: int | None, key: str | None) -> str:
        """'file:line' of a key (section, [[steps]] index, key) for an error found after parsing."""
        return _Where(self.text, self.path).place(section, index, key)


def load(path: str | Path) -> Spec:
    """Read and validate a spec file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise AnonsqlError(f"cannot read the release spec {p}: {exc.strerror}") from None
    return parse(raw.decode("utf-8", errors="replace"), p, hashlib.sha256(raw).hexdigest())


def parse(text: str, path: Path, sha256: str = "") -> Spec:
    """Validate the TOML text of a spec (see docs/release.md for every key)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # tomllib says "... (at line N, column C)"
        at = re.search(r"\s*\(at line (\d+), column \d+\)", str(exc))
        line, what = (at.group(1), str(exc)[:at.start()]) if at else ("1", str(exc))
        raise AnonsqlError(f"{path}:{line}: not valid TOML: {what}") from None
    where = _Where(text, path)
    for key, value in data.items():
        if key == "steps":
            if not isinstance(value, list):
                raise where.error("steps", None, None, "'steps' must be an array of tables: [[steps]]")
            continue
        if key not in _SECTIONS:
            raise where.error(None, None, key, f"unknown section [{key}]; known: {', '.join([*_SECTIONS, 'steps'])}")
        if not isinstance(value, dict):
            raise where.error(None, None, key, f"'{key}' must be a table: [{key}]")
        where.check_keys(key, None, value, _SECTIONS[key])
    release, src, gates, outputs = (data.get(s, {}) for s in ("release", "source", "gates", "outputs"))
    if "table" not in src:
        raise where.error("source", None, None, "[source] needs table = \"...\" (the table to release)")
    source = Source(src.get("db"), src["table"], src.get("key"), names(src.get("qi")), src.get("class"),
                    names(src.get("sensitive")))
    steps = [_step(where, i, s, path.parent) for i, s in enumerate(data.get("steps", []))]
    if not steps:
        raise where.error(None, None, None, "no [[steps]]: a release runs at least one step")
    steps = _published(where, steps)
    outs = [s.out for s in steps]
    for s in steps:
        if outs.count(s.out) > 1:
            raise where.error("steps", s.number - 1, "out", f"{s.label}: output '{s.out}' is written by two steps")
        if s.input and s.input not in ("source", *outs[: s.number - 1]):
            raise where.error("steps", s.number - 1, "input", f"{s.label}: input '{s.input}' is neither 'source' nor "
                              "the output of an earlier step")
    for key, bound in (("max_risk", 1), ("max_suppressed", 1), ("max_nb_error_loss", 1), ("max_journalist_risk", 1),
                       ("max_linkage_success", 1)):
        if key in gates and not 0 <= gates[key] <= bound:
            raise where.error("gates", None, key, f"[gates] {key} must be a number from 0 to 1")
    if "min_candidates" in gates and gates["min_candidates"] < 1:
        raise where.error("gates", None, "min_candidates", "[gates] min_candidates must be a whole number >= 1 (the "
                          "fewest values a suppressed cell may keep)")
    g = Gates(gates.get("table"), gates.get("baseline"), names(gates["qi"]) if "qi" in gates else None,
              gates.get("k"), dict(gates.get("l_diversity", {})), {c: float(t) for c, t in
                                                                   gates.get("t_closeness", {}).items()},
              gates.get("max_risk"), gates.get("max_suppressed"), gates.get("max_nb_error_loss"), gates.get("folds", 5),
              gates.get("max_journalist_risk"), gates.get("max_linkage_success"), gates.get("population"),
              gates.get("population_weights"), gates.get("min_candidates"))
    out_dir = path.parent / outputs.get("dir", f"{path.stem}.release")
    files = {"manifest": outputs.get("manifest", "manifest.json"), "script": outputs.get("script", "release.sql"),
             "report": outputs.get("report", "report.html"), "changes": "changes.json", "utility": "utility.html"}
    paths = [artefact_path(what, name) for what, name in files.items()]
    for what, name in files.items():
        if what in outputs and (Path(name).name != name or name in ("", ".", "..", PRIVATE_DIR)
                                or paths.count(artefact_path(what, name)) > 1):
            raise where.error("outputs", None, what, f"[outputs] {what} must be a plain file name of its own, got "
                              f"{name!r} (the script goes to {PRIVATE_DIR}/ by itself)")
    return Spec(path, sha256, release.get("name", path.stem), release.get("seed", 0), source, steps, g, out_dir,
                files, names(release.get("previous")), text)


def _published(where: _Where, steps: list[Step]) -> list[Step]:
    """Steps with `publish` resolved: the steps saying publish = true, else the last step alone;
    every other step's output is a working table."""
    if any(s.publish for s in steps):
        return [dataclasses.replace(s, publish=bool(s.publish)) for s in steps]
    if steps[-1].publish is False:
        raise where.error("steps", len(steps) - 1, "publish", "no step is published: say publish = true on the "
                          "steps whose output is the release (default: the last step)")
    return [dataclasses.replace(s, publish=s is steps[-1]) for s in steps]


def _step(where: _Where, index: int, raw: Any, folder: Path) -> Step:
    if not isinstance(raw, dict):
        raise where.error("steps", index, None, "each [[steps]] entry must be a table")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise where.error("steps", index, "kind" if "kind" in raw else None,
                          f"step {index + 1}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    where.check_keys("steps", index, raw, {**_STEP_COMMON, **_STEP_KEYS[kind]})
    for key in ("out", *_REQUIRED.get(kind, ())):
        if key not in raw:
            raise where.error("steps", index, None, f"step {index + 1} ({kind}) needs {key} = ...")
    options = {k: v for k, v in raw.items() if k not in _STEP_COMMON}
    if isinstance(options.get("rows"), list):  # rows = [2, 7]: key values, compared as text
        options["rows"] = [str(v) for v in options["rows"]]
    if "key_file" in options:  # files are named relative to the spec
        options["key_file"] = str(folder / options["key_file"])
    return Step(index + 1, kind, raw["out"], raw.get("input"), options, raw.get("publish"))


class _Where:
    """Finds the line of a section or key in the spec's text, for error messages."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"]+)\s*\]\]?")

    def __init__(self, text: str, path: Path):
        self.lines, self.path = text.splitlines(), path

    def line(self, section: str | None, index: int | None, key: str | None) -> int:
        current: str | None = None
        counts: dict[str, int] = {}
        at = -1
        for no, line in enumerate(self.lines, 1):
            m = self._HEADER.match(line)
            if m:
                current = m.group(2).strip('"')
                if m.group(1) == "[[":  # the n-th [[steps]] header starts entry n
                    counts[current] = counts.get(current, -1) + 1
                at = counts.get(current, 0)
                if key is None and current == section and (index is None or at == index):
                    return no
                continue
            if key is not None and current == section and (index is None or at == index) and \
                    re.match(rf'^\s*"?{re.escape(key)}"?\s*=', line):
                return no
        return 0

    def place(self, section: str | None, index: int | None, key: str | None) -> str:
        """'file:line': the key's line, else its section's header, else 1 (the file as a whole)."""
        no = (self.line(section, index, key) if (section or key) else 0) or \
            (self.line(section, index, None) if section else 0)
        return f"{self.path}:{no or 1}"

    def error(self, section: str | None, index: int | None, key: str | None, message: str) -> AnonsqlError:
        return AnonsqlError(f"{self.place(section, index, key)}: {message}")

    def check_keys(self, section: str, index: int | None, table: dict[str, Any], schema: dict[str, str]) -> None:
        what = f"[{section}]" if index is None else f"step {index + 1} ({table.get('kind')})"
        for key, value in table.items():
            if key not in schema:
                raise self.error(section, index, key, f"unknown key '{key}' in {what}; known: {', '.join(schema)}")
            check, expected = _TYPES[schema[key]]
            if not check(value):  # rows name confidential rows: their values are not repeated
                got = f"a {type(value).__name__}" if schema[key] == "keys" else repr(value)
                raise self.error(section, index, key, f"{what} {key} must be {expected}, got {got}")
