"""Taxonomies: parsing, validation with clear errors, `taxonomy load` on both engines."""

from __future__ import annotations

import json

import pytest

from anonsql.errors import AnonsqlError
from anonsql.protect.request import parse_assignment
from anonsql.taxonomy.model import Taxonomy
from anonsql.taxonomy.stats import read_taxonomies, read_taxonomy
from anonsql.taxonomy.store import load_taxonomy

from .conftest import table_rows

SEVERITY_TOML = """
[Any]
Low = [1, 2]

[Any.Mid-High]
3 = []
High = [4, 5]
"""
NESTED = {"Any": {"Low": [1, 2], "Mid-High": [3, {"High": [4, 5]}]}}


def test_nested_forms_agree_and_navigate(tmp_path):
    (tmp_path / "s.toml").write_text(SEVERITY_TOML)
    (tmp_path / "s.json").write_text(json.dumps(NESTED))
    t = Taxonomy.from_file("severity", tmp_path / "s.toml")
    assert t == Taxonomy.from_file("severity", tmp_path / "s.json") == Taxonomy.from_nested("severity", NESTED)
    assert t.labels == ("Any", "Low", "1", "2", "Mid-High", "3", "High", "4", "5")
    assert t.height == 3 and t.depth(t.index(4)) == 3 and t.depth(t.index("3")) == 2
    up = [t.labels[t.generalize(t.index(4), lam)] for lam in range(5)]
    assert up == ["4", "High", "Mid-High", "Any", "Any"]
    assert t.is_descendant(t.index(4), t.index("Mid-High")) and not t.is_descendant(t.index("High"), t.index("High"))
    assert [t.labels[n] for n in t.leaves_under(t.index("Mid-High"))] == ["3", "4", "5"]
    assert Taxonomy.from_rows("severity", t.rows()) == t


@pytest.mark.parametrize("rows, message", [
    ([("a", None), ("b", None)], r"exactly one root \(a value without parent\), found 2"),
    ([("a", "b"), ("b", "a")], r"exactly one root .*found 0"),
    ([("r", None), ("a", "b"), ("b", "a")], "cycle through 'a'"),
    ([("r", None), ("a", "r"), ("a", "r")], "'a' is listed twice"),
    ([("r", None), ("a", "x")], "parent 'x' of 'a' is not a value"),
    ([("r", None), (" ", "r")], "empty label"),
    ([("r", None), (1.5, "r")], "must be a string or an integer"),
    ([], "is empty"),
])
def test_invalid_rows(rows, message):
    with pytest.raises(AnonsqlError, match=message):
        Taxonomy.from_rows("t", rows)


@pytest.mark.parametrize("name, text, message", [
    ("a.toml", "x = [1]\ny = [2]", "exactly one key, the root"),
    ("a.toml", "x = [", "not valid TOML"),
    ("a.json", '{"r": 5}', "must be a list or a mapping"),
    ("a.json", '{"r": {"a": [1], "b": [1]}}', "'1' is listed twice"),
    ("a.yaml", "r: []", "must end in .toml or .json"),
])
def test_invalid_files(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(AnonsqlError, match=message):
        Taxonomy.from_file("t", tmp_path / name)


def test_missing_file_and_values():
    with pytest.raises(AnonsqlError, match="cannot read taxonomy file"):
        Taxonomy.from_file("t", "/nonexistent/t.toml")
    t = Taxonomy.from_nested("severity", NESTED)
    t.check_values("nausea", [1, "Mid-High", 5])
    with pytest.raises(AnonsqlError,
                       match=r"column 'nausea' has 2 value\(s\) missing from taxonomy 'severity': '7', '0'"):
        t.check_values("nausea", [1, 7, 0])


def test_assignment():
    assert parse_assignment("a=s, b = t,") == {"a": "s", "b": "t"}
    assert parse_assignment(None) == {}
    for bad, message in (("a", "attr=name pairs"), ("a=s,a=t", "twice"), ("=s", "attr=name")):
        with pytest.raises(AnonsqlError, match=message):
            parse_assignment(bad)


def test_load_file_and_table(engine, make_table, tmp_path):
    (tmp_path / "s.toml").write_text(SEVERITY_TOML)
    r = load_taxonomy(engine, "severity", file=tmp_path / "s.toml")
    assert (r.nodes, r.leaves, r.height, r.root, r.replaced) == (9, 5, 3, "Any", False)
    assert read_taxonomy(engine, "severity") == Taxonomy.from_nested("severity", NESTED)
    make_table("dx", {"value": ["Gastric Disease", "Dyspepsia", "Gastritis", "Disease", "S.I. Ulcer"],
                      "parent": ["Disease", "Gastric Disease", "Gastric Disease", None, "Disease"]})
    load_taxonomy(engine, "diagnoses", table="dx")
    both = read_taxonomies(engine, {"nausea": "severity", "diagnosis": "diagnoses", "burning": "severity"})
    assert both["nausea"] is both["burning"]
    assert both["diagnosis"].labels == ("Disease", "Gastric Disease", "Dyspepsia", "Gastritis", "S.I. Ulcer")
    with pytest.raises(AnonsqlError, match="already stored"):
        load_taxonomy(engine, "severity", file=tmp_path / "s.toml")
    (tmp_path / "flat.json").write_text('{"Any": [1, 2, 3, 4, 5]}')
    assert load_taxonomy(engine, "severity", file=tmp_path / "flat.json", replace=True).replaced
    assert read_taxonomy(engine, "severity").height == 1
    assert len(table_rows(engine, "anonsql_taxonomies")) == 6 + 5


def test_load_bad_input_changes_nothing(engine, make_table, tmp_path):
    (tmp_path / "s.toml").write_text(SEVERITY_TOML)
    load_taxonomy(engine, "severity", file=tmp_path / "s.toml")
    before = table_rows(engine, "anonsql_taxonomies")
    make_table("bad", {"value": ["a", "b"], "parent": [None, None]})
    make_table("cols", {"v": ["a"], "p": [None]})
    (tmp_path / "cyc.json").write_text('{"r": {"a": [1], "b": ["a"]}}')
    for kwargs, message in (({"table": "bad"}, "exactly one root"), ({"table": "cols"}, "value"),
                            ({"file": tmp_path / "cyc.json", "replace": True}, "listed twice"),
                            ({}, "--file"), ({"file": tmp_path / "s.toml", "table": "bad"}, "--file")):
        with pytest.raises(AnonsqlError, match=message):
            load_taxonomy(engine, "severity", **kwargs)
    with pytest.raises(AnonsqlError, match="non-empty --name"):
        load_taxonomy(engine, " ", file=tmp_path / "s.toml")
    with pytest.raises(AnonsqlError, match="no stored taxonomy named 'other'"):
        read_taxonomy(engine, "other")
    assert table_rows(engine, "anonsql_taxonomies") == before


def test_read_before_any_load(engine):
    with pytest.raises(AnonsqlError, match="no taxonomy is stored yet"):
        read_taxonomy(engine, "severity")
