"""The cell key method over taxonomy levels (--hierarchy): every node of a stored taxonomy is a
cell whose count and cell key sum its leaves' records, recomputed here in pandas from the rows and
the tree as the test writes it; the same node in two tables has the same value; the audit
re-derives it; bad input is one error line; on DuckDB and PostgreSQL."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import anonsql
from anonsql.ckm import verify as ckm_verify
from anonsql.ckm.ptable import KEY_UNITS, ptable
from anonsql.cli import main
from anonsql.data.loading import write_frame
from anonsql.errors import AnonsqlError, VerificationError

from .conftest import table_rows
from .test_ckm import SECRET, _hmac_keys

# World > Europe (fr, de, it), America > North (us, ca) and mx: three levels, a leaf (mx) right
# under an inner node beside a subtree
TREE = {"World": ["Europe", "America"], "Europe": ["fr", "de", "it"], "America": ["North", "mx"],
        "North": ["us", "ca"]}
TOML = '[World]\nEurope = ["fr", "de", "it"]\n\n[World.America]\nNorth = ["us", "ca"]\nmx = []\n'


def _under(node: str) -> set[str]:
    """The leaves under `node` (itself when a leaf), from TREE."""
    return set().union(*(_under(c) for c in TREE[node])) if node in TREE else {node}


def _data(db, engine, tmp_path, rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"region": rng.choice(["fr", "de", "it", "us", "ca", "mx"], rows,
                                               p=[.3, .3, .05, .25, .05, .05]),
                          "sex": rng.choice(["f", "m", None], rows, p=[.48, .48, .04]),
                          "pid": rng.permutation(rows) + 500,
                          "income": rng.integers(1, 100, rows).astype(float), "firm": rng.choice(list("pqrstu"), rows)})
    write_frame(engine, frame, "census")
    (tmp_path / "regions.toml").write_text(TOML)
    anonsql.taxonomy_load(db, "regions", file=str(tmp_path / "regions.toml"))
    return frame.assign(r=_hmac_keys(frame.pid.tolist(), SECRET))


def _cells(frame: pd.DataFrame, margins: bool = True):
    """(region node, sex label, grouping id, rows of the cell) of every cell: the region's nodes in
    every grouping set (its grouping bit never set), sex or its Total."""
    for node in [*TREE, *_under("World")]:
        rows = frame[frame.region.isin(_under(node))]
        for sex, g in rows.groupby("sex", dropna=False):  # a NULL sex is a value of its own, labelled NULL
            yield node, None if pd.isna(sex) else sex, 0, g
        if margins and len(rows):
            yield node, "Total", 1, rows


def test_counts_over_taxonomy_levels_recomputed_from_the_rows(db, engine, tmp_path, monkeypatch):
    frame = _data(db, engine, tmp_path)
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    r = anonsql.ckm_table(db, "census", "region,sex", record_key="pid", hierarchy="region=regions", D=3, V=1.5,
                          js=2, out="pub")
    assert r.ok and r.hierarchy == {"region": "regions"} and "along taxonomy 'regions'" in r.lines()[0]
    t = ptable(3, 1.5, 2)
    expected = {}
    for node, sex, gid, g in _cells(frame):
        n, ck = len(g), int(g.r.sum()) % KEY_UNITS
        value = n + int(ckm_verify.lookup(t, np.array([n]), np.array([ck]))[0])
        if value:
            expected[(node, sex, gid)] = value
    got = {(a, b, g): v for a, b, g, v in table_rows(engine, "pub")}
    assert got == expected and ("World", "Total", 1) in got and ("North", "f", 0) in got
    assert ("World", None, 0) in got  # NULL sex: a value of its own
    assert r.utility["cells"] == len(list(_cells(frame)))
    # a node is the same cell as in a table where it is a plain value: the leaves and the root
    anonsql.ckm_table(db, "census", "region,sex", record_key="pid", D=3, V=1.5, js=2, out="plain")
    plain = {(a, b): v for a, b, _g, v in table_rows(engine, "plain")}
    assert {k: v for (a, b, _g), v in got.items() if (k := (a, b)) in plain} == \
        {k: v for k, v in plain.items() if k[0] != "Total"}
    assert got[("World", "Total", 1)] == plain[("Total", "Total")]
    assert anonsql.audit_table(db, "pub").ok


def test_magnitude_over_taxonomy_levels(db, engine, tmp_path, monkeypatch):
    frame = _data(db, engine, tmp_path)
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    r = anonsql.ckm_table(db, "census", "region,sex", record_key="pid", hierarchy="region=regions", D=2, V=1.0,
                          js=1, measure="income", contributor="firm", top_k=2, m=0.1, out="pub")
    assert r.ok
    t = ptable(2, 1.0, 1)
    expected = {}
    for node, sex, gid, g in _cells(frame):
        n, ck = len(g), int(g.r.sum()) % KEY_UNITS
        v = int(ckm_verify.lookup(t, np.array([n]), np.array([ck]))[0])
        top = g.groupby("firm").income.sum().sort_values(ascending=False).head(2).sum()
        if n + v:
            expected[(node, sex, gid)] = (g.income.sum() + 0.1 * top * v, n + v)
    got = {(a, b, g): (value, f) for a, b, g, value, f in table_rows(engine, "pub")}
    assert got.keys() == expected.keys()
    for cell, (value, f) in expected.items():
        assert got[cell][1] == f and got[cell][0] == pytest.approx(value, rel=1e-12)
    assert anonsql.audit_table(db, "pub").ok


def test_cli_and_audit_catch_a_changed_node(db, engine, tmp_path, capsys):
    _data(db, engine, tmp_path)
    engine.execute("CREATE TABLE keyed AS SELECT region, sex, CAST(pid AS DOUBLE PRECISION) / 1000 AS rk FROM census")
    assert main(["tables", "--db", db, "--table", "keyed", "--dims", "region,sex", "--method", "ckm",
                 "--record-key-column", "rk", "--hierarchy", "region=regions", "--compare-suppression",
                 "--out", "pub"]) == 0
    out = capsys.readouterr().out
    assert "region along taxonomy 'regions'" in out and "beside suppression on the same table" in out
    plain = anonsql.safe_table(db, "keyed", "region,sex", min_count=3, hierarchy="region=regions", out="plain")
    assert re.search(rf"suppression, min count 3\s+{plain.cells:,} ", out)  # the same grid, along the taxonomy
    assert main(["tables", "audit", "--db", db, "--published", "pub"]) == 0
    engine.execute("UPDATE pub SET value = value + 1 WHERE region = 'Europe' AND sex = 'f'")
    assert main(["tables", "audit", "--db", db, "--published", "pub"]) == 1


def test_bad_hierarchy_is_one_error_line_and_writes_nothing(db, engine, tmp_path, monkeypatch):
    _data(db, engine, tmp_path)
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    write_frame(engine, pd.DataFrame({"region": ["fr", "Europe", "xx"], "sex": ["f"] * 3, "pid": [1, 2, 3]}), "bad")
    (tmp_path / "flat.toml").write_text('World = []\n')
    cases = [("census", "region=nothere", "no stored taxonomy named 'nothere'"),
             ("census", "sex=regions", "not leaves of taxonomy 'regions'"),
             ("census", "firm=regions", "not a dimension"), ("census", "region", "--hierarchy must be"),
             ("bad", "region=regions", "not leaves of taxonomy 'regions': 'Europe', 'xx'")]
    for table, hierarchy, msg in cases:
        with pytest.raises(AnonsqlError, match=msg) as refused:
            anonsql.ckm_table(db, table, "region,sex", record_key="pid", hierarchy=hierarchy, out="pub")
        assert "\n" not in str(refused.value)
    assert main(["tables", "--db", db, "--table", "bad", "--dims", "region,sex", "--method", "ckm",
                 "--record-key", "pid", "--hierarchy", "region=regions", "--out", "pub"]) == 2
    assert anonsql.catalog.find_table(engine, "pub") is None


def test_a_wrong_node_fails_verification_and_writes_nothing(db, engine, tmp_path, monkeypatch):
    _data(db, engine, tmp_path)
    monkeypatch.setenv("ANONSQL_PSEUDONYM_KEY", SECRET)
    real = ckm_verify._roll_up
    # the verification's roll-up misses one leaf (it): Europe's and World's cells no longer match
    monkeypatch.setattr(ckm_verify, "_roll_up", lambda leaf, *a: real(leaf[leaf.region != "it"], *a))
    with pytest.raises(VerificationError, match="recount plus"):
        anonsql.ckm_table(db, "census", "region,sex", record_key="pid", hierarchy="region=regions", out="pub")
    for name in ("pub", "pub_ptable", "pub_ckm_spec"):
        assert anonsql.catalog.find_table(engine, name) is None


@pytest.mark.parametrize("method", ["ckm", "suppression"])
def test_a_release_tables_step_takes_a_hierarchy(db, engine, tmp_path, method):
    _data(db, engine, tmp_path)
    key = tmp_path / "ckm.key"
    key.write_text(SECRET)
    how = f'method = "ckm"\nrecord_key = "pid"\nkey_file = "{key}"\n' if method == "ckm" else "min_count = 3\n"
    spec = tmp_path / "release.toml"
    spec.write_text('[source]\ntable = "census"\nqi = ["region", "sex"]\n\n'
                    f'[[steps]]\nkind = "tables"\n{how}dims = ["region", "sex"]\nhierarchy = {{region = "regions"}}\n'
                    'out = "counts"\npublish = true\n\n[outputs]\ndir = "out"\n')
    assert anonsql.release_run(spec, engine).ok
    nodes = {row[0] for row in table_rows(engine, "counts")}
    assert {"World", "Europe", "America", "North"} <= nodes and "Total" not in nodes
    assert anonsql.release_verify(spec, engine).ok  # the audit along the same taxonomy
    assert SECRET not in (tmp_path / "out" / "manifest.json").read_text()
