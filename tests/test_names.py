"""Awkward names reach every engine as identifiers: `%`, quotes, semicolons, spaces, keywords."""

import pytest

import anonsql
from anonsql import catalog

from .conftest import table_rows

NAMES = {"zip": 'zip%code', "sex": 'se"x;', "cls": "select", "id": "row id 100%"}


@pytest.fixture
def awkward(make_table):
    make_table("t%1;", {NAMES["id"]: [1, 2, 3, 4, 5, 6], NAMES["zip"]: ["a", "a", "b", "b", "c", "c"],
                        NAMES["sex"]: ["m", "f", "m", "f", "m", "m"], NAMES["cls"]: ["y", "n", "y", "n", "y", "y"]})


def test_check_profile_and_kanon_on_awkward_names(db, engine, awkward):
    qi = [NAMES["zip"], NAMES["sex"]]
    result = anonsql.check(db, '"t%1;"', qi, k=2)
    assert not result.ok and result.violating_rows == 4
    profile = anonsql.profile(db, '"t%1;"', qi=qi, class_column=NAMES["cls"])
    assert profile.k == 1 and profile.class_distribution == {"n": 2, "y": 4}
    report = anonsql.k_anonymize(db, '"t%1;"', qi, NAMES["cls"], k=2, out='"out%;"')
    assert report.ok and anonsql.check(db, '"out%;"', qi, k=2).ok
    assert len(table_rows(engine, '"out%;"')) == 6 and catalog.find_table(engine, '"t%1;"') is not None


def test_nbc_views_and_containment_on_awkward_names(db, make_table, awkward):
    views = anonsql.nbc_views(db, '"t%1;"', NAMES["cls"], [NAMES["zip"], NAMES["sex"]])
    assert views.P == {"n": 2, "y": 4}
    make_table("b%;", {"k'ey;": [1, 2, 3, 4], 'f"1%': [1, 1, 0, 0], "f 2;": [1, 0, 1, 0],
                       "select": ["a", "b", "a", "b"]})
    ac = anonsql.containment(db, '"b%;"', class_column="select", key="k'ey;")
    assert ac.ac == 1 and ac.attrs == ['f"1%', "f 2;"]


def _aliases() -> list[str]:
    """Every internal alias of the SQL files (`... AS <alias>`), comments and type names left out."""
    import re
    from pathlib import Path

    import anonsql as pkg

    found: set[str] = set()
    for path in (Path(pkg.__file__).parent.parent / "sql").rglob("*.sql"):
        text = "\n".join(line.split("--")[0] for line in path.read_text().splitlines())
        found |= {m.lower() for m in re.findall(r"\bAS\s+([A-Za-z_][A-Za-z_0-9]*)", text, re.I)}
    types = {"varchar", "bigint", "integer", "double", "boolean", "text", "decimal", "int", "date", "timestamp",
             "real", "float", "select", "hugeint", "numeric", "bignum"}
    return sorted(found - types)


@pytest.mark.slow
def test_columns_named_like_every_internal_alias(db, make_table):
    """Issue 18, defect 4: results are read by position, so user columns named `n`, `g`,
    `group_key`, `size`, `class_value`, ... (every alias of sql/) cannot be mistaken for them."""
    aliases = sorted({*(a for a in _aliases() if a not in ("c", "k")), "group_key"})  # group_key: a former alias
    assert {"size", "class_value", "n", "g", "code", "label", "value", "y"} <= set(aliases)
    rows = 12
    cls = ["y" if r % 3 else "n" for r in range(rows)]
    make_table("t", {**{a: [f"v{(r * (i + 1)) % 3}" for r in range(rows)] for i, a in enumerate(aliases)},
                     "c": cls, "k": list(range(rows))})
    make_table("b", {**{a: [(r * (i + 2)) % 2 for r in range(rows)] for i, a in enumerate(aliases)},
                     "c": cls, "k": list(range(rows))})
    narrow = ["group_key", "size", "class_value", "n", "g", "value", "key", "label", "code", "rows"]
    make_table("p", {**{a: [f"v{(r * (i + 1)) % 3}" for r in range(rows)] for i, a in enumerate(narrow)},
                     "c": cls, "k": list(range(rows))})
    qi = ["group_key", "size", "class_value", "n", "g"]
    assert anonsql.check(db, "t", aliases, k=2).ok and not anonsql.check(db, "t", aliases, k=5).ok
    assert anonsql.check(db, "t", qi, k=1).ok
    assert anonsql.profile(db, "t", qi=qi, class_column="c").class_distribution == {"n": 4, "y": 8}
    assert len(aliases) > 100 and anonsql.k_anonymize(db, "t", aliases, "c", 2, out="t_all").ok  # no CONCAT limit
    assert anonsql.k_anonymize(db, "t", qi, "c", 2, out="t_k").ok
    assert anonsql.check(db, "t_k", qi, k=2).ok
    assert anonsql.nbc_views(db, "t", "c", aliases).P == {"n": 4, "y": 8}
    assert anonsql.nbc_publish(db, "t", "c", qi, 2, "pub").ok
    assert anonsql.evaluate_classifiers(db, "t", "t_k", qi, "c", key="k", folds=2).ok
    assert anonsql.protect_table(db, "p", "k", target="c", rows="1", out="p_p").ok
    assert anonsql.select_features(db, "b", "c", 2, key="k", out="b_f").ok
    assert anonsql.containment(db, "b", class_column="c", key="k").ac >= 1
    assert anonsql.k_anonymize(db, "t", qi, "c", 2, in_place=True).ok


def test_a_column_stored_in_nfd_is_found_typed_in_nfc(db, engine, make_table, capsys):
    """A column spelled in Unicode NFD ('e' + combining accent, as macOS file names and some
    exports write it) typed in NFC was 'unknown' in a message listing a name that looked the same
    (issue 36): names now match up to NFC, then up to NFC and case."""
    import unicodedata

    from anonsql.cli import main

    stored = unicodedata.normalize("NFD", "Género")
    typed = unicodedata.normalize("NFC", "Género")
    assert stored != typed
    make_table("t", {"id": [1, 2, 3, 4], stored: ["f", "f", "m", "m"], "cls": ["y", "n", "y", "n"]})
    table = catalog.get_table(engine, "t")
    assert table.column(typed).name == stored and table.column(typed.upper()).name == stored
    assert anonsql.check(db, "t", [typed], k=2).ok
    assert main(["check", "--db", db, "--table", "t", "--qi", typed.lower(), "--k", "3"]) == 1
    assert "Traceback" not in capsys.readouterr().err
