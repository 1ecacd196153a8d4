"""The shared direct-identifier module: near-unique columns, the key, HMAC-SHA256 in SQL on both engines."""

import hashlib
import hmac

import pytest

from anonsql import catalog, identifiers
from anonsql.errors import AnonsqlError

from .conftest import table_rows

KEY = "0123456789abcdef-key"


def test_near_unique_columns_are_named(engine, make_table):
    n = 40
    make_table("t", {"pid": list(range(n)), "almost": list(range(n - 2)) + [0, 1], "half": [i % 20 for i in range(n)],
                     "sparse": [i if i % 2 else None for i in range(n)]})
    notes = identifiers.near_unique(engine, catalog.get_table(engine, "t"), ["pid", "almost", "half", "sparse"])
    assert len(notes) == 2  # 40 of 40, 38 of 40 (95%); 20 of 40 and 20 of 40 are not
    assert notes[0].startswith("column 'pid' is unique in t (40 distinct values in 40 rows)")
    assert notes[1].startswith("column 'almost' is nearly unique in t (38 distinct values")
    assert identifiers.near_unique(engine, catalog.get_table(engine, "t"), []) == []


def test_near_unique_is_exact_when_a_sample_clears_the_far_from_unique(engine, make_table, monkeypatch):
    """A tenth of the rows clears a column with more repeats there than a near-unique column can
    have in the whole table (no full count of it); a column exactly at the 95% line, its 50
    repeats all early in the table, is still counted and named."""
    n = 1000
    make_table("t", {"pid": list(range(n)), "edge": [0] * 51 + list(range(1, 950)), "low": [i % 7 for i in range(n)]})
    counted = []
    real = engine.fetch_all

    def spy(text, params=None):
        if "distinct non-NULL values of one column" in text:
            counted.extend(c for c in ("pid", "edge", "low") if f'"{c}"' in text)
        return real(text, params)
    monkeypatch.setattr(engine, "fetch_all", spy)
    notes = identifiers.near_unique(engine, catalog.get_table(engine, "t"), ["pid", "edge", "low"])
    assert [note.split("'")[1] for note in notes] == ["pid", "edge"]
    assert "950 distinct values in 1,000 rows" in notes[1]
    assert counted == ["pid", "edge"]  # "low" repeats 94 times in any 101 rows: cleared without a count


def test_key_from_file_or_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(identifiers.KEY_ENV, raising=False)
    with pytest.raises(AnonsqlError, match="needs a secret key"):
        identifiers.read_key(None)
    monkeypatch.setenv(identifiers.KEY_ENV, "short")
    with pytest.raises(AnonsqlError, match="too short") as err:
        identifiers.read_key(None)
    assert "short'" not in str(err.value)  # the key itself is never printed
    monkeypatch.setenv(identifiers.KEY_ENV, KEY)
    path = tmp_path / "k"
    path.write_text(KEY + "\n")
    assert identifiers.read_key(str(path)) == identifiers.read_key(None)
    assert KEY not in repr(identifiers.read_key(None))
    with pytest.raises(AnonsqlError, match="cannot read pseudonymization key file"):
        identifiers.read_key(str(tmp_path / "missing"))


@pytest.mark.parametrize("key", [KEY, "k" * 100])  # a key longer than the block is hashed first (RFC 2104)
def test_pseudonyms_are_hmac_sha256_on_both_engines(engine, make_table, tmp_path, key):
    values = ["01548", "Zoë", "a'b", None, "x" * 200]
    make_table("t", {"v": values, "n": [1, 2, 3, 4, 5]})
    path = tmp_path / "k"
    path.write_text(key)
    with engine.transaction():
        identifiers.apply(engine, catalog.get_table(engine, "t").expr, drop=[], pseudonymize=["v", "n"],
                          key=identifiers.read_key(str(path)))
    def mac(v):
        return None if v is None else hmac.new(key.encode(), str(v).encode(), hashlib.sha256).hexdigest()

    expect = [(mac(v), mac(n)) for v, n in zip(values, range(1, 6))]
    assert sorted(table_rows(engine, "t"), key=str) == sorted(expect, key=str)


def test_check_columns(engine, make_table):
    make_table("t", {"a": [1], "b": [2], "c": [3]})
    tab = catalog.get_table(engine, "t")
    assert identifiers.check_columns(tab, ["a"], ["B"], ["c"]) == (["b"], ["c"])
    with pytest.raises(AnonsqlError, match="every column"):
        identifiers.check_columns(tab, [], ["a", "b", "c"], [])
