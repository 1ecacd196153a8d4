"""The shared direct-identifier module: near-unique columns, the key, HMAC-SHA256 in SQL on both engines."""

import hashlib
import hmac
import json
import unicodedata

import pytest

import anonsql
from anonsql import catalog, identifiers, sql
from anonsql.cli import main
from anonsql.errors import AnonsqlError

from .conftest import table_rows

KEY = "0123456789abcdef-key"


def as_float(engine, table, column):
    """make_table stores whole numbers as integers: the column as DOUBLE PRECISION, as a CSV of
    2.98e+13-style ids loads."""
    engine.execute(f'ALTER TABLE {table} ALTER COLUMN "{column}" TYPE DOUBLE PRECISION')
    assert catalog.get_table(engine, table).column(column).kind == "float"


def test_unique_and_nearly_unique_columns_are_named(engine, make_table):
    """Unique: every row its own value; nearly unique: >= 50% distinct values and >= 50% of the
    rows sharing their value with at most 4 others. A column of pairs is (a household), one
    with a few big groups is not, however many singletons sit beside them."""
    n = 40
    make_table("t", {"pid": list(range(n)), "pairs": [i // 2 for i in range(n)],
                     "lumpy": [0] * 12 + [1] * 10 + list(range(2, 20)), "low": [i % 7 for i in range(n)]})
    notes = identifiers.scan(engine, catalog.get_table(engine, "t"), ["pid", "pairs", "lumpy", "low"])
    assert [note.split("'")[1] for note in notes] == ["pid", "pairs"]
    assert notes[0].startswith("column 'pid' is unique in t (40 distinct values in 40 rows) and is not a quasi")
    assert notes[1].startswith("column 'pairs' is nearly unique in t (20 distinct values in 40 rows, 100% of the rows "
                               "sharing their value with at most 4 others)")
    # lumpy: 20 distinct of 40 (50%), but only its 18 singletons (45% of the rows) lie within a handful
    assert identifiers.scan(engine, catalog.get_table(engine, "t"), []) == []


def test_a_patient_id_with_repeat_visits_is_flagged_in_kanons_report(db, engine, make_table):
    """Issue 29: PatientId, 93% distinct (patients with several appointments), stored as floats
    such as 2.98e+13, stayed in clear under the 95% rule. Now kanon's report names it (name,
    near-uniqueness and format), in `warnings` (summary and JSON); the QI age is not named."""
    n = 300
    ids = [29872499824296.0 + 1000 * i for i in range(280)] + [29872499824296.0 + 1000 * i for i in range(20)]
    make_table("visits", {"PatientId": ids, "age": [20 + i % 40 for i in range(n)],
                          "sex": ["F", "M"] * (n // 2), "show": ["yes", "no", "yes"] * (n // 3)})
    as_float(engine, "visits", "PatientId")
    r = anonsql.k_anonymize(db, "visits", "age,sex", "show", 5, out="v5")
    assert r.ok and len(r.warnings) == 1 and r.warnings[0].startswith(
        "column 'PatientId' is nearly unique in v5 (280 distinct values in 300 rows, 100% of the rows sharing")
    assert "its name says so" in r.warnings[0] and "whole numbers of 9 or more digits stored as floats" in r.warnings[0]
    assert "WARNING: column 'PatientId'" in r.summary() and json.loads(r.to_json())["warnings"] == r.warnings
    assert not [n for n in r.notes if "PatientId" in n]  # a privacy warning, not a note


def test_formats_of_identifiers_are_flagged(engine, make_table):
    """E-mail addresses, UUIDs, phone numbers, long digit strings and 2.98e+13-style ids, each in
    a column whose name and spread say nothing (few distinct values); ordinary columns (age, a
    date, a decimal measure, a small code) are not flagged."""
    n = 40
    make_table("t", {
        "a": [f"user{i % 4}@example.org" for i in range(n)],
        "b": [f"123e4567-e89b-12d3-a456-42661417400{i % 4}" for i in range(n)],
        "c": [f"+33 6 12 34 56 0{i % 4}" for i in range(n)],
        "d": [f"00012345678{i % 4}" for i in range(n)],
        "e": [f"2.98725{i % 4}e+13" for i in range(n)],
        "f": [29872499824296.0 + i % 4 for i in range(n)],
        "age": [20 + i % 4 for i in range(n)], "day": [f"2016-04-2{i % 4}" for i in range(n)],
        "weight": [f"{60 + i % 4}.5" for i in range(n)], "code": [i % 4 for i in range(n)]})
    as_float(engine, "t", "f")
    notes = identifiers.scan(engine, catalog.get_table(engine, "t"), catalog.get_table(engine, "t").column_names)
    flagged = {note.split("'")[1]: note for note in notes}
    assert sorted(flagged) == ["a", "b", "c", "d", "e", "f"]
    for col, what in [("a", "e-mail addresses"), ("b", "UUIDs"), ("c", "phone numbers"),
                      ("d", "digit strings of 9 or more digits"), ("e", "whole numbers in scientific notation"),
                      ("f", "whole numbers of 9 or more digits stored as floats")]:
        assert f"column '{col}' reads as a direct identifier in t (100% of its values are {what}" in flagged[col]


@pytest.mark.parametrize("name, words, flagged", [
    ("PatientId", ["patient", "id"], True), ("AppointmentID", ["appointment", "id"], True),
    ("patient_id", ["patient", "id"], True), ("E-Mail", ["e", "mail"], True),
    ("phone number", ["phone", "number"], True), ("ssn", ["ssn"], True), ("last_name", ["last", "name"], True),
    ("paid", ["paid"], False), ("valid", ["valid"], False), ("Age", ["age"], False), ("zipcode", ["zipcode"], False),
    ("marital_status", ["marital", "status"], False), ("No-show", ["no", "show"], False)])
def test_names_a_reviewer_reads_as_identifiers(name, words, flagged):
    assert identifiers.name_words(name) == words
    assert bool(identifiers.NAME_WORDS & set(words)) == flagged


def test_quiet_silences_progress_never_a_privacy_warning(db, make_table, capsys):
    make_table("t", {"email": [f"p{i}@example.org" for i in range(12)], "zip": ["1", "2"] * 6,
                     "sex": ["F", "M", "M"] * 4, "cls": ["a", "b", "b", "a"] * 3})
    base = ["kanon", "--db", db, "--table", "t", "--qi", "zip,sex", "--class", "cls", "--k", "2", "--out", "t2"]
    assert main([*base, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "statistics:" not in err and "loop:" not in err  # --quiet silenced the progress...
    assert out.count("WARNING: column 'email' is unique in t2") == 1  # ...not the warning, in the summary
    assert "WARNING" not in err  # once: the summary says it, stderr does not repeat it (issue 36)
    assert main([*base, "--replace", "--quiet", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["warnings"][0].startswith("column 'email' is unique in t2") and "WARNING: column" in err


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


def nfc_mac(key, v):
    """HMAC-SHA256(K, v) over v's text in NFC, in Python: the pseudonym both spellings must get."""
    if v is None:
        return None
    return hmac.new(key.encode(), unicodedata.normalize("NFC", v).encode(), hashlib.sha256).hexdigest()


def test_two_spellings_of_one_value_get_one_pseudonym(engine, make_table, tmp_path):
    """Issue 36: é typed as U+00E9 (NFC) and as e + U+0301 (NFD, macOS) got two pseudonyms. Now
    the HMAC reads the text in NFC, by the UPDATE (identifiers.apply) and by the expression a copy
    selects (identifiers.pseudonym: kanon's CREATE TABLE AS, ckm's record keys) alike; ASCII and
    NFC text hash their own bytes, so their pseudonyms are those of earlier versions."""
    nfc, nfd = "Jos\u00e9", "Jose\u0301"
    values = [nfc, nfd, "Zo\u00eb", "Zoe\u0308", "01548", None]
    make_table("t", {"v": values})
    assert sorted(table_rows(engine, "t"), key=str)[:2] != [(nfc,), (nfc,)]  # the table holds both spellings
    path = tmp_path / "k"
    path.write_text(KEY)
    key = identifiers.read_key(str(path))
    selected = sql.exp.select(sql.exp.alias_(identifiers.pseudonym(engine.dialect, sql.column("v")), "p")).from_("t")
    text, _ = sql.bind(selected, engine.dialect, {"ipad": key.ipad, "opad": key.opad})
    copied = [row[0] for row in engine.fetch_all(text, {"ipad": key.ipad, "opad": key.opad})]
    with engine.transaction():
        identifiers.apply(engine, catalog.get_table(engine, "t").expr, pseudonymize=["v"], key=key)
    updated = [row[0] for row in table_rows(engine, "t")]
    expect = [nfc_mac(KEY, v) for v in values]
    assert sorted(copied, key=str) == sorted(updated, key=str) == sorted(expect, key=str)
    assert nfc_mac(KEY, nfc) == nfc_mac(KEY, nfd) and len({p for p in updated if p}) == 3  # José, Zoë, 01548
    plain = hmac.new(KEY.encode(), b"01548", hashlib.sha256).hexdigest()  # ASCII: the bytes as typed, as before
    assert plain in updated and plain in copied


def test_pseudonyms_of_a_copy_read_nfc_in_kanon(db, engine, make_table, tmp_path):
    """kanon's copy writes pseudonyms in its CREATE TABLE AS SELECT: one pseudonym for both spellings there too."""
    names = ["Jos\u00e9", "Jose\u0301"] * 3
    make_table("t", {"name": names, "zip": ["100", "100", "200", "200", "100", "200"], "cls": ["a", "b"] * 3})
    path = tmp_path / "k"
    path.write_text(KEY)
    r = anonsql.k_anonymize(db, "t", "zip", "cls", 2, out="t2", pseudonymize="name", key_file=str(path))
    assert r.ok and {row[0] for row in table_rows(engine, "t2")} == {nfc_mac(KEY, names[0])}
    assert [n for n in r.notes if "NFC" in n] == [  # not silent: their pseudonyms are not those of earlier versions
        "3 value(s) of column 'name' are not in Unicode NFC (e.g. an accent typed as its own character): their "
        "pseudonyms are those of their NFC spelling, one per value however it is typed (earlier versions of anonsql "
        "hashed them as typed)"]
    make_table("a", {"name": ["Ann", "Bob"] * 3, "zip": ["100", "100", "200", "200", "100", "200"],
                     "cls": ["a", "b"] * 3})
    r = anonsql.k_anonymize(db, "a", "zip", "cls", 2, out="a2", pseudonymize="name", key_file=str(path))
    assert r.ok and not [n for n in r.notes if "NFC" in n]  # ASCII: nothing changed, nothing to say


def test_check_columns(engine, make_table):
    make_table("t", {"a": [1], "b": [2], "c": [3]})
    tab = catalog.get_table(engine, "t")
    assert identifiers.check_columns(tab, ["a"], ["B"], ["c"]) == (["b"], ["c"])
    with pytest.raises(AnonsqlError, match="every column"):
        identifiers.check_columns(tab, [], ["a", "b", "c"], [])
