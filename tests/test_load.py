"""CSV → table: header, NA markers, trimming, types; bad CSVs change nothing."""

import gzip

import pytest

import anonsql
from anonsql import catalog
from anonsql.errors import AnonsqlError

from .conftest import table_rows


def write(tmp_path, name, text, gz=False):
    path = tmp_path / name
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return str(path)


def test_load_trims_marks_missing_and_types_columns(tmp_path, db, engine):
    path = write(tmp_path, "p.csv.gz", "age, name ,score\n 39, Alice , 1.5\n?, Bob,\n 7,?, 2\n", gz=True)
    result = anonsql.load_csv(db, path, "people", na=["?"])
    assert result.rows == 3
    assert result.columns == {"age": "integer", "name": "text", "score": "float"}
    assert table_rows(engine, "people") == [(39, "Alice", 1.5), (7, None, 2.0), (None, "Bob", None)]
    kinds = {c.name: c.kind for c in catalog.get_table(engine, "people").columns}
    assert kinds == {"age": "integer", "name": "text", "score": "float"}


def test_awkward_header_names_load(tmp_path, db, engine):
    path = write(tmp_path, "a.csv", 'select,"a b","a""b"\n1,x,y\n')
    anonsql.load_csv(db, path, "t")
    assert catalog.get_table(engine, "t").column_names == ["select", "a b", 'a"b']


def test_existing_table_needs_replace(tmp_path, db, engine):
    anonsql.load_csv(db, write(tmp_path, "a.csv", "a\n1\n"), "t")
    with pytest.raises(AnonsqlError, match="already exists"):
        anonsql.load_csv(db, write(tmp_path, "b.csv", "b\n2\n3\n"), "t")
    assert table_rows(engine, "t") == [(1,)]
    anonsql.load_csv(db, write(tmp_path, "b.csv", "b\n2\n3\n"), "t", replace=True)
    assert table_rows(engine, "t") == [(2,), (3,)]


@pytest.mark.parametrize("content, match", [
    (None, "not found"),
    (b"\x1f\x8b\x08garbage-not-gzip", "cannot read CSV"),
    ("a,b\n1,2,3,4\n", "data row 1 has 4 fields"),
    ("a,b\n1,2\n3\n", "data row 2 has 1 fields"),
    ("", "the file is empty"),
    ("a,,c\n1,2,3\n", "empty column name"),
    ("a,A\n1,2\n", "repeats a column name"),
    ("a,b\n", "no rows"),
])
def test_unreadable_csv_is_one_error_and_creates_nothing(tmp_path, db, engine, content, match):
    path = tmp_path / "bad.csv.gz"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path = tmp_path / "bad.csv"
        path.write_text(content)
    with pytest.raises(AnonsqlError, match=match):
        anonsql.load_csv(db, str(path), "t")
    assert catalog.find_table(engine, "t") is None
