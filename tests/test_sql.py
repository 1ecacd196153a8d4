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
    assert RenderedCache(tmp_path, salt="one").get(key) == ("SELECT 1", ("k",), {})
    assert RenderedCache(tmp_path, salt="one").get(RenderedCache.key("SELECT 2", "('duckdb', ())")) is None
    assert RenderedCache(tmp_path, salt="two").get(key) is None
    (tmp_path / "rendered-sql.json").write_text("{not json")
    damaged = RenderedCache(tmp_path, salt="one")
    assert damaged.get(key) is None
    damaged.put(key, "SELECT 1", (), sources={"common/row_count": "abc"})
    damaged.save()
    assert RenderedCache(tmp_path, salt="one").get(key) == ("SELECT 1", (), {"common/row_count": "abc"})


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


# ---------------------------------------------------------------- light names and composed statements

@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "spark"])
def test_light_names_render_as_the_nodes_they_stand_for(dialect):
    """A Name binds exactly as the sqlglot node it names (ident, column, TableName.expr): the same
    quoted text, awkward names included, alone and in lists; it only keys the cache differently."""
    for name in AWKWARD:
        light = sql.render("common/qi_class_groups", dialect, groups=sql.TableName(name, "s").ref,
                           tbl=sql.TableName(name).ref, qi=sql.ref_columns([name, "b"]), cls=sql.ref_column(name))
        heavy = sql.render("common/qi_class_groups", dialect, groups=sql.TableName(name, "s").expr,
                           tbl=sql.TableName(name).expr, qi=sql.columns([name, "b"]), cls=sql.column(name))
        assert light == heavy
        assert sql.ref_ident(name).node() == sql.ident(name)
        assert sql.ref_column(name, "t").node() == sql.column(name, "t")
    assert sql.name_text([sql.ref_ident('a"b'), sql.ref_ident("c")], "duckdb") == '"a""b", "c"'
    assert sql.name_text(sql.TableName("x y", "s").ref, "postgres") == '"s"."x y"'


def _count_of(tbl, names):
    """A statement composed in code, for the tests: common/row_count with a WHERE built here."""
    tree = sql.template("common/row_count")
    tree.set("where", exp.Where(this=exp.and_(*(exp.EQ(this=c, expression=exp.Placeholder(this="v"))
                                               for c in sql.columns(names)))))
    return tree, dict(tbl=tbl)


def test_a_composed_statement_binds_its_values_and_refuses_what_cannot_key_it():
    text, params = sql.composed(_count_of, "postgres", values=dict(v=3), tbl=sql.TableName("t").ref, names=["a", "b"])
    assert '"a" = %(v)s AND "b" = %(v)s' in text and params == {"v": 3}
    again = sql.composed(_count_of, "postgres", values=dict(v=4), tbl=sql.TableName("t").ref, names=["a", "b"])
    assert again == (text, {"v": 4})  # the same shape: the same text, this call's value
    assert sql.composed(_count_of, "postgres", values=dict(v=3), tbl=sql.TableName("t").ref, names=["a"])[0] != text
    with pytest.raises(KeyError, match=r"\$v is not bound"):
        sql.composed(_count_of, "duckdb", tbl=sql.TableName("t").ref, names=["a"])

    def binds_a_value_itself(tbl, names):
        tree, binds = _count_of(tbl, names)
        return tree, dict(binds, v=5)  # a value the key would not cover: refused

    with pytest.raises(ValueError, match=r"bound values to \$v; pass them in values="):
        sql.composed(binds_a_value_itself, "duckdb", tbl=sql.TableName("t").ref, names=["a"])
    with pytest.raises(TypeError, match="part 'names'"):
        import numpy as np

        sql.composed(_count_of, "duckdb", values=dict(v=1), tbl=sql.TableName("t").ref, names=np.array(["a"]))


COMPOSE_TWICE = """
import json, sys
from anonsql import sql
from anonsql.sql import exp  # sqlglot.expressions, imported by the first attribute read
def count_of(tbl, names):
    tree = sql.template("common/row_count")
    tree.set("where", exp.Where(this=exp.and_(*(exp.EQ(this=c, expression=exp.Placeholder(this="v"))
                                               for c in sql.columns(names)))))
    return tree, dict(tbl=tbl)
real_text = sql._text
if sys.argv[1] == "edited":  # the template's text changed since the entry was written
    sql._text = lambda name: real_text(name) + " -- edited" if name == "common/row_count" else real_text(name)
if sys.argv[1] != "cold":
    def boom(*args, **kwargs):
        raise RuntimeError("composed afresh")
    sql.bind = boom
try:
    out = sql.composed(count_of, "duckdb", values=dict(v=1), tbl=sql.TableName("t").ref, names=["a"])
except RuntimeError as exc:
    out = str(exc)
print(json.dumps([out, "sqlglot" in sys.modules]))
"""


def test_a_later_process_reuses_a_composed_statement_without_sqlglot_unless_a_template_changed(tmp_path):
    """The composed text is read back by the next process, which then never imports sqlglot; an
    entry built from a template whose text has changed since misses (and is built afresh)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "ANONSQL_CACHE_DIR": str(tmp_path)}

    def run(mode):
        done = subprocess.run([sys.executable, "-c", COMPOSE_TWICE, mode], env=env, capture_output=True, text=True,
                              check=True)
        return json.loads(done.stdout)

    cold, _ = run("cold")
    warm, imported = run("warm")
    assert warm == cold and '"a" = $v' in cold[0] and cold[1] == {"v": 1}
    assert imported is False
    assert run("edited")[0] == "composed afresh"


def test_the_salt_follows_every_module_of_the_package(tmp_path):
    """An edited module (size or modification time) changes the stamps that salt the cache file."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "__pycache__" / "c.py").write_text("")
    first = sql._module_stamps(str(tmp_path))
    assert [s.split(":")[0] for s in first] == ["/a.py", "/sub/b.py"]
    (tmp_path / "sub" / "b.py").write_text("y = 22\n")
    assert sql._module_stamps(str(tmp_path)) != first


def test_a_composed_entry_records_only_the_templates_its_own_build_read(tmp_path, monkeypatch):
    """The templates read while a builder runs are recorded per thread (a ContextVar): another
    thread reading a template meanwhile is not taken for part of the statement."""
    import threading

    from anonsql import rendered_cache

    cache = rendered_cache.RenderedCache(tmp_path, salt="t")
    monkeypatch.setattr(sql, "_disk", lambda: cache)
    inside, other_done = threading.Event(), threading.Event()

    def slow_build(tbl):
        tree = sql.template("common/row_count")
        inside.set()
        other_done.wait(5)  # another thread reads a template while this build is under way
        return tree, dict(tbl=tbl)

    def other():
        inside.wait(5)
        sql.template("common/null_count")
        other_done.set()

    thread = threading.Thread(target=other)
    thread.start()
    sql.composed(slow_build, "duckdb", tbl=sql.TableName("recorded").ref)
    thread.join()
    sources = [entry[2] for entry in cache._added.values()]
    assert sources == [{"common/row_count": sql._template_digests(["common/row_count"])["common/row_count"]}]
