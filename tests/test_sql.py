"""The SQL layer: names become quoted identifiers through sqlglot, values become parameters."""

import pytest
from sqlglot import exp

from anonsql import sql
from anonsql.errors import AnonsqlError
from anonsql.sql import templates

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


# ---------------------------------------------------------------- the in-process memo of rendered text


def test_render_reuses_its_text_for_the_same_names_and_renders_other_names_afresh(monkeypatch):
    """The text depends on the names bound, never on the values: a second render of the same
    template, dialect and names neither parses nor generates (the values still travel as
    parameters), while a name spelled differently (case included) renders afresh."""
    tbl = sql.TableName("Memo Table").expr
    first = sql.render("common/violations_summary", "postgres", tbl=tbl, qi=sql.columns(["a"]), k=2)

    def boom(*args, **kwargs):
        raise RuntimeError("rendered afresh")

    monkeypatch.setattr(templates, "bind", boom)  # what render calls
    again = sql.render("common/violations_summary", "postgres", tbl=sql.TableName("Memo Table").expr,
                       qi=sql.columns(["a"]), k=5)
    assert again == (first[0], {"k": 5}) and '"Memo Table"' in first[0]
    with pytest.raises(RuntimeError, match="rendered afresh"):
        sql.render("common/violations_summary", "postgres", tbl=sql.TableName("memo table").expr,
                   qi=sql.columns(["a"]), k=2)
