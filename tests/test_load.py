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
    ("a,b\n1,2,3,4\n", "line 2: the row does not have the header's 2 fields"),
    ("a,b\n1,2\n3\n", "line 3: the row does not have the header's 2 fields"),
    ("a,b\n1,x\x00y\n", "column 'b' holds a NUL byte"),
    (b"a,b\n1,\xff\xfe\n", "the bytes are not utf-8 text"),
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


def test_values_are_kept_as_written(tmp_path, db, engine):
    """Issue 14 finding 1: leading zeros, 20-digit codes, a BOM, a semicolon file, dates."""
    path = tmp_path / "awkward.csv"
    path.write_bytes("\ufeffid;zip;code;born;score\n1;01548;12345678901234567890;2020-01-02;1.5\n"
                     "2; 02139 ;00000000000000000001;2021-03-04;-inf\n".encode())
    result = anonsql.load_csv(db, str(path), "t")
    assert result.columns == {"id": "integer", "zip": "text", "code": "text", "born": "date", "score": "float"}
    rows = table_rows(engine, "t")
    assert [r[:3] for r in rows] == [(1, "01548", "12345678901234567890"), (2, "02139", "00000000000000000001")]
    assert str(rows[0][3]) == "2020-01-02" and rows[1][4] == float("-inf")
    assert catalog.get_table(engine, "t").column_names == ["id", "zip", "code", "born", "score"]


def test_types_delimiter_and_encoding(tmp_path, db, engine):
    path = tmp_path / "latin.csv"
    path.write_bytes("id|name|zip\n1|Zoë|1548\n2|Renée|2139\n".encode("cp1252"))
    result = anonsql.load_csv(db, str(path), "t", delimiter="|", encoding="cp1252", types="zip=text,ID=float")
    assert result.columns == {"id": "float", "name": "text", "zip": "text"}
    assert table_rows(engine, "t") == [(1.0, "Zoë", "1548"), (2.0, "Renée", "2139")]
    with pytest.raises(AnonsqlError, match="the bytes are not utf-8 text"):
        anonsql.load_csv(db, str(path), "u", delimiter="|")
    with pytest.raises(AnonsqlError, match="Could not convert string 'Zoë'.*column 'name'"):
        anonsql.load_csv(db, str(path), "u", delimiter="|", encoding="cp1252", types="name=integer")
    assert catalog.find_table(engine, "u") is None


@pytest.mark.parametrize("kwargs, match", [
    (dict(types="zip=money"), "bad type for 'zip'"),
    (dict(types="nope=text"), "--types names a column the CSV lacks: nope"),
    (dict(types="a=text,a=integer"), "two --types entries"),
    (dict(delimiter=";;"), "bad delimiter"),
    (dict(encoding="klingon"), "unknown encoding"),
])
def test_bad_format_options(tmp_path, db, engine, kwargs, match):
    with pytest.raises(AnonsqlError, match=match):
        anonsql.load_csv(db, write(tmp_path, "a.csv", "a,zip\n1,2\n"), "t", **kwargs)
    assert catalog.find_table(engine, "t") is None


def test_open_connections_are_accepted_and_left_open(tmp_path, db):
    """The API takes an open duckdb / psycopg connection and never closes it."""
    import duckdb

    path = write(tmp_path, "a.csv", "a,b\n1,x\n2,y\n")
    if db.startswith("postgresql"):
        import psycopg

        con = psycopg.connect(db, autocommit=True)
        fetch = lambda q: con.execute(q).fetchall()  # noqa: E731
    else:
        con = duckdb.connect(db)
        fetch = lambda q: con.execute(q).fetchall()  # noqa: E731
    anonsql.load_csv(con, path, "t")
    assert not anonsql.check(con, "t", "b", 2)
    assert anonsql.profile(con, "t", qi="b").k == 1
    assert fetch('SELECT COUNT(*) FROM "t"') == [(2,)]  # still open
    con.close()
    with pytest.raises(AnonsqlError, match="db must be a DuckDB path"):
        anonsql.profile(42, "t")


def test_zoned_timestamps_load_as_timestamptz(tmp_path, db, engine):
    """ISO timestamps ending in Z or an offset keep their instant (issue 36: they loaded as text)."""
    path = write(tmp_path, "z.csv", "z,plus,mixed\n2024-03-01T10:00:00Z,2024-03-01 12:00:00+02:00,2024-03-01\n"
                                    "2024-03-02T00:30:00.5Z,2024-03-02T00:30:00.5+00:00,2024-03-01T10:00:00Z\n")
    result = anonsql.load_csv(db, path, "z")
    assert result.columns == {"z": "timestamptz", "plus": "timestamptz", "mixed": "text"}
    rows = table_rows(engine, "z")
    assert [r[0] for r in rows] == [r[1] for r in rows]  # the same instants, spelled two ways
    assert rows[0][0].utcoffset() is not None and rows[0][0].timestamp() == 1709287200.0
    assert "with time zone" in catalog.get_table(engine, "z").column("z").data_type.lower() or \
        "timestamptz" in catalog.get_table(engine, "z").column("z").data_type.lower()


def test_a_date_type_on_times_of_day_refuses_unless_told_to_truncate(tmp_path, db, engine):
    """--types x=date silently dropped a time of day (issue 36): now one error line, nothing
    created; x=date:truncate drops it as asked; midnight is no time of day."""
    path = write(tmp_path, "t.csv", "at,day\n2024-03-01 10:30,2024-03-01 00:00:00\n2024-03-02,2024-03-02\n")
    with pytest.raises(AnonsqlError, match=r"^--types at=date: 1 value\(s\) of column 'at' hold a time of day.*"
                                           r"at=timestamp to keep it, or at=date:truncate to drop it$"):
        anonsql.load_csv(db, path, "t", types="at=date")
    assert catalog.find_table(engine, "t") is None
    result = anonsql.load_csv(db, path, "t", types="at=date:truncate,day=date")
    assert result.columns == {"at": "date", "day": "date"}
    assert [(str(a), str(d)) for a, d in table_rows(engine, "t")] == [("2024-03-01", "2024-03-01"),
                                                                      ("2024-03-02", "2024-03-02")]
    with pytest.raises(AnonsqlError, match="bad type for 'at': 'integer:truncate'"):
        anonsql.load_csv(db, path, "u", types="at=integer:truncate")
