"""One rule for validation: every public API function declares its parameters' constraints
(`@validate_params`, anonsql/validate.py), and an invalid value of each is refused with one
AnonsqlError naming the parameter, before any connection: the database is left unchanged.

The invalid values are generated from the declared constraints (as scikit-learn's
test_common does), so a new constrained parameter is tested the day it is declared.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest

from anonsql import api, validate
from anonsql.data.loading import write_frame
from anonsql.engine import connect
from anonsql.errors import AnonsqlError
from anonsql.release import entry as release_entry
from anonsql.validate import Dominance, Interval, Names, OutputFile, Parsed, Ratio, StrOptions

PUBLIC = {name: f for module in (api, release_entry) for name, f in inspect.getmembers(module, inspect.isfunction)
          if f.__module__ == module.__name__ and not name.startswith("_")}  # the release's own face too
DECLARED = {name: f for name, f in PUBLIC.items() if hasattr(f, "_params")}


def _valid(db: str, folder: Path) -> dict[str, tuple[tuple, dict]]:
    """Arguments every declared function accepts on the tiny table `t` (id, a, b, cls, x, v)."""
    files = {"csv": folder / "t.csv", "spec": folder / "spec.toml", "tax": folder / "tax.toml"}
    return {
        "load_csv": ((db, str(files["csv"]), "t2"), {}),
        "load_dataset": ((db, "car"), {}),
        "profile": ((db, "t"), dict(qi="a,b")),
        "check": ((db, "t", "a,b", 2), {}),
        "k_anonymize": ((db, "t", "a,b", "cls", 2), {}),
        "bin_columns": ((db, "t", ["v=width:10"], "binned"), {}),
        "evaluate_classifiers": ((db, "t", "t", "a,b", "cls"), dict(key="id", folds=2)),
        "nbc_views": ((db, "t", "cls", "a,b"), {}),
        "nbc_check": ((db, "t", "cls", "a,b", 2), {}),
        "nbc_publish": ((db, "t", "cls", "a,b", 2, "pub"), {}),
        "nbc_verify": ((db, "t", "cls", "a,b", "pub"), {}),
        "nbc_breach": ((db, "t", "cls", "a,b", "a=x"), {}),
        "protect_table": ((db, "t", "id"), dict(target="cls", rows=["1"])),
        "binarize": ((db, "t", str(files["spec"]), "bin"), {}),
        "select_features": ((db, "t", "cls", 2), {}),
        "containment": ((db, "t"), {}),
        "taxonomy_load": ((db, "tx"), dict(file=str(files["tax"]))),
        "safe_table": ((db, "t", "a,b"), {}),
        "audit_table": ((db, "pub"), {}),
        "ckm_table": ((db, "t", "a,b"), dict(record_key_column="v")),
        "ckm_ptable": ((), dict(D=3, V=1.5)),
        "release_run": ((str(files["spec"]), db), {}),
        "reidentification_risk": ((db, "t", "a,b"), {}),
        "linkage_attack": ((db, "t", "t", "a,b"), {}),
        "difference_attack": ((db, "t", "t"), {}),
        "refine_attack": ((db, "t"), {}),
        "show_table": ((db, "t"), {}),
        "read_query": ((db, "SELECT * FROM t"), {}),
    }


def _invalid(rule: validate.Constraint, folder: Path) -> list[object]:
    """Values that break `rule`: just outside an Interval, a string not offered, a wrong type."""
    if isinstance(rule, Interval):
        edge = [rule.left - (1 if rule.closed in ("both", "left") else 0)] if rule.left is not None else []
        edge += [rule.right + (1 if rule.closed in ("both", "right") else 0)] if rule.right is not None else []
        wrong = [1.5, True] if rule.kind is int else [math.nan, "1"]
        return [*edge, *wrong]
    if isinstance(rule, StrOptions):
        return ["no-such-option", 3]
    if isinstance(rule, Names):
        return [5, "a,,b"]
    if isinstance(rule, OutputFile):
        return [str(folder / "no-folder" / "out.sql"), str(folder), 7]
    if isinstance(rule, Ratio):
        return ["1", "many", 0.5]
    if isinstance(rule, Dominance):
        return ["0,50", "2,150", "2", 3]
    if isinstance(rule, Parsed):
        return [*rule.bad, 5]
    if isinstance(rule, validate._Type):
        return {bool: ["yes", 1], Mapping: [5], list: [5], tuple: [5]}[rule.kind]
    if isinstance(rule, validate._NoneOf):
        return []
    raise AssertionError(f"test_params cannot make an invalid value for {rule!r}: teach _invalid")


def _spellings(name: str, rules: list[validate.Constraint]) -> list[str]:
    """How a message may name the parameter: its Python name, in words, as a CLI flag, its label."""
    labels = [r.label for r in rules if getattr(r, "label", None)]
    return [name, name.replace("_", " "), "--" + name.replace("_", "-"), *labels]


@pytest.fixture
def tiny(db, tmp_path):
    """The tiny table `t` on the test's engine, and the files the valid arguments name."""
    (tmp_path / "t.csv").write_text("id,a\n1,x\n")
    (tmp_path / "spec.toml").write_text("")
    (tmp_path / "tax.toml").write_text("")
    engine = connect(db)
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "a": ["x", "x", "y", "y"], "b": ["p", "q", "p", "q"],
                          "cls": ["n", "y", "n", "y"], "x": [0, 1, 1, 0], "v": [10.0, 20.0, 30.0, 40.0]})
    write_frame(engine, frame.convert_dtypes(), "t")
    engine.close()
    return db, tmp_path


def _state(db: str) -> object:
    """What a refused call must leave as it was: the DuckDB file's bytes; PostgreSQL's tables and `t`."""
    if not db.startswith("postgresql"):
        return hashlib.sha256(Path(db).read_bytes()).hexdigest()
    engine = connect(db)
    try:
        tables = engine.fetch_all("SELECT table_name FROM information_schema.tables "
                                  "WHERE table_schema = current_schema() ORDER BY 1")
        return tables, engine.fetch_all("SELECT * FROM t ORDER BY id")
    finally:
        engine.close()


@pytest.mark.parametrize("function", sorted(DECLARED))
def test_every_constrained_parameter_refuses_an_invalid_value(tiny, function):
    db, folder = tiny
    func = DECLARED[function]
    valid = _valid(db, folder)
    assert set(valid) == set(DECLARED), "give every declared function valid arguments in _valid"
    args, kwargs = valid[function]
    bound = inspect.signature(func).bind(*args, **kwargs)
    before = _state(db)
    tried = 0
    for name, rules in func._params.items():
        # the other arguments are valid, so a refusal can only be this parameter's
        for other, other_rules in func._params.items():
            value = bound.arguments.get(other, inspect.signature(func).parameters[other].default)
            validate.check_param(other, value, other_rules)
        for bad in [v for rule in rules for v in _invalid(rule, folder)]:
            call = inspect.signature(func).bind(*args, **kwargs)
            call.arguments[name] = bad
            with pytest.raises(AnonsqlError) as refused:
                func(*call.args, **call.kwargs)
            message = str(refused.value)
            assert "\n" not in message, message
            assert any(re.search(re.escape(s), message) for s in _spellings(name, rules)), \
                f"{function}({name}={bad!r}): the message does not name the parameter: {message}"
            tried += 1
    assert tried, f"{function} declares no constraint with an invalid value"
    assert _state(db) == before, f"a refused call of {function} changed the database"


def test_every_public_function_declares_its_constrained_parameters():
    """A public function taking a number or a flag declares it; declarations name real parameters."""
    scalar = re.compile(r"\b(int|float|bool)\b")
    missing = [f"{name}({p.name})" for name, f in PUBLIC.items() for p in inspect.signature(f).parameters.values()
               if scalar.search(str(p.annotation)) and p.name not in getattr(f, "_params", {})]
    assert not missing, f"declare these with @validate_params: {', '.join(missing)}"


def test_a_declaration_for_no_such_parameter_is_refused_at_import():
    with pytest.raises(TypeError, match="no such parameter: kk"):
        validate.validate_params({"kk": Interval(int, 1, None)})(lambda k: k)


@pytest.mark.parametrize(("rule", "value", "message"), [
    (Interval(int, 1, None), 0, "k must be an integer >= 1, got 0"),
    (Interval(float, 0, 100, closed="right"), 0, "k must be a finite number > 0 and <= 100, got 0"),
    (Interval(float, 0, None, label="risk threshold"), -1, "risk threshold must be a finite number >= 0, got -1"),
    (StrOptions(("ham", "mar"), label="cost"), "x", "unknown cost 'x'; choose one of ham, mar"),
    (Ratio(), "1", "k must be > 1"),
])
def test_messages_say_what_is_expected(rule, value, message):
    with pytest.raises(AnonsqlError) as refused:
        rule.check(value, "k")
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("good", [1, 10**12])
def test_a_value_inside_the_interval_passes(good):
    Interval(int, 1, None).check(good, "k")
    Interval(float, 0, None).check(float(good), "x")
