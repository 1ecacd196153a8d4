"""The SQL layer: names become quoted identifiers through sqlglot, values become parameters."""

import pytest
from sqlglot import exp

from anonsql import sql
from anonsql.errors import AnonsqlError

AWKWARD = ["select", "Marital Status", 'a"b', "x\"; DROP TABLE t; --"]


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_awkward_names_are_quoted_identifiers(dialect):
    text, params = sql.render(
        "common/violating_groups", dialect, tbl=sql.TableName("my table", "my schema").expr,
        qi=sql.columns(AWKWARD), shown=sql.columns(AWKWARD, table="t"), k=3, max_groups=5,
    )
    assert '"select"' in text and '"Marital Status"' in text and '"a""b"' in text
    assert '"x""; DROP TABLE t; --"' in text  # the whole attack stays inside one identifier
    assert 'FROM "my schema"."my table"' in text
    assert params == {"k": 3, "max_groups": 5}
    assert "3" not in text.replace('"', "")  # values are never pasted into the text


def test_value_placeholders_follow_the_dialect():
    text, params = sql.render("common/violations_summary", "postgres", tbl=sql.TableName("t").expr,
                              qi=sql.columns(["a"]), k=2)
    assert "%(k)s" in text and params == {"k": 2}
    text, _ = sql.render("common/violations_summary", "duckdb", tbl=sql.TableName("t").expr, qi=sql.columns(["a"]), k=2)
    assert "$k" in text


def test_list_binding_repeats_the_clause_item():
    text, _ = sql.render("common/attr_class_counts", "duckdb", tbl=sql.TableName("t").expr,
                         attr=sql.columns(["a", "b"]), cls=sql.column("c"))
    assert 'GROUPING("a") AS g_0, GROUPING("b") AS g_1, CASE WHEN "a" IS NULL' in text
    assert 'CAST("a" AS TEXT) AS label_0, CAST("b" AS TEXT) AS label_1' in text
    assert 'GROUPING SETS (("a", "c"), ("b", "c"))' in text
    text, _ = sql.render("common/column_profile", "duckdb", tbl=sql.TableName("t").expr, col=sql.columns(["a", "b"]))
    assert 'COUNT(DISTINCT "a") AS n_distinct_0, COUNT(DISTINCT "b") AS n_distinct_1' in text


def test_unbound_placeholder_and_empty_list_are_errors():
    with pytest.raises(KeyError):
        sql.render("common/row_count", "duckdb")
    with pytest.raises(ValueError):
        sql.render("data/class_size_histogram", "duckdb", tbl=sql.TableName("t").expr, qi=[])


@pytest.mark.parametrize("text, expected", [
    ("adult", sql.TableName("adult")),
    ("s.adult", sql.TableName("adult", "s")),
    ('"my.schema"."a ""b"""', sql.TableName('a "b"', "my.schema")),
    ("Marital Status", sql.TableName("Marital Status")),
])
def test_table_names_parse(text, expected):
    assert sql.TableName.parse(text) == expected


@pytest.mark.parametrize("text", ["", "a.b.c", '"open', "a."])
def test_bad_table_names_are_user_errors(text):
    with pytest.raises(AnonsqlError):
        sql.TableName.parse(text)


def test_group_key_of_more_columns_than_concat_takes(engine):
    """PostgreSQL's CONCAT takes at most 100 arguments: a key over 250 columns is the same text
    as the per-column pieces joined (issue 18: tables and release fingerprints of wide tables)."""
    values = [None if i % 7 == 0 else f"v{i}" for i in range(250)]
    select = exp.select(*[exp.alias_(exp.Literal.string(v) if v else exp.null(), f"c{i}")
                          for i, v in enumerate(values)])
    key = exp.select(sql.group_key(sql.columns([f"c{i}" for i in range(250)]))).from_(select.subquery("t"))
    expected = "".join("N" if v is None else f"{len(v)}:{v}" for v in values)
    assert engine.fetch_all(key.sql(engine.dialect)) == [(expected,)]


# ---------------------------------------------------------------- the rendered-SQL cache on disk

RENDER_TWICE = """
import json, sys
from anonsql import sql
def boom(*args, **kwargs):
    raise RuntimeError("rendered afresh")
if sys.argv[1] == "warm":
    sql.bind = boom  # a cache hit neither parses nor generates
out = []
for name in sys.argv[2:]:
    try:
        out.append(sql.render("common/violations_summary", "postgres", tbl=sql.TableName(name).expr,
                              qi=sql.columns(["a"]), k=2))
    except RuntimeError as exc:
        out.append(str(exc))
print(json.dumps(out))
"""


def test_a_later_process_reuses_rendered_text_and_renders_new_names_afresh(tmp_path):
    """A fast start (issue 11): the text one process rendered is read back by the next one,
    same text, same parameters, without sqlglot's parse and generate; other names miss."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "ANONSQL_CACHE_DIR": str(tmp_path)}

    def run(mode, *names):
        done = subprocess.run([sys.executable, "-c", RENDER_TWICE, mode, *names], env=env, capture_output=True,
                              text=True, check=True)
        return json.loads(done.stdout)

    cold = run("cold", "my table")
    assert (tmp_path / "rendered-sql.json").exists()
    warm = run("warm", "my table", "other")
    assert warm[0] == cold[0] and '"my table"' in warm[0][0] and warm[0][1] == {"k": 2}
    assert warm[1] == "rendered afresh"


def test_the_cache_ignores_another_template_text_binder_or_a_damaged_file(tmp_path):
    """An entry is named by its template's text and the file by the binder and sqlglot (`salt`),
    so an edited template or an upgrade misses; a damaged file counts as empty and is replaced."""
    from anonsql.rendered_cache import RenderedCache

    first = RenderedCache(tmp_path, salt="one")
    key = RenderedCache.key("SELECT 1", "('duckdb', ())")
    first.put(key, "SELECT 1", ("k",))
    first.save()
    assert RenderedCache(tmp_path, salt="one").get(key) == ("SELECT 1", ("k",))
    assert RenderedCache(tmp_path, salt="one").get(RenderedCache.key("SELECT 2", "('duckdb', ())")) is None
    assert RenderedCache(tmp_path, salt="two").get(key) is None
    (tmp_path / "rendered-sql.json").write_text("{not json")
    damaged = RenderedCache(tmp_path, salt="one")
    assert damaged.get(key) is None
    damaged.put(key, "SELECT 1", ())
    damaged.save()
    assert RenderedCache(tmp_path, salt="one").get(key) == ("SELECT 1", ())


def test_an_empty_cache_dir_turns_the_cache_off(tmp_path, monkeypatch):
    from anonsql.rendered_cache import RenderedCache, cache_dir

    monkeypatch.setenv("ANONSQL_CACHE_DIR", "")
    assert cache_dir() is None
    off = RenderedCache(cache_dir(), salt="one")
    off.put("k", "SELECT 1", ())
    off.save()
    assert off.get("k") is None and list(tmp_path.iterdir()) == []
    monkeypatch.setenv("ANONSQL_CACHE_DIR", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("ANONSQL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "anonsql"
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home() -> None:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr("pathlib.Path.home", no_home)
    assert cache_dir() is None  # no home directory: no cache, and no failure
