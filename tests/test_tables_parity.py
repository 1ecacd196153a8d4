"""Parity with the free reference: the test problems GaussSuppression and sdcTable document, with
their numbers (fixtures/sdc_reference/README.md): the same primaries, never more secondaries, and
every primary protected against anonsql's attacker (over whole numbers for counts)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import anonsql
from anonsql.catalog import get_table
from anonsql.data.loading import write_frame
from anonsql.tables import verify
from anonsql.tables.job import policy
from anonsql.tables.rules import Rules
from anonsql.tables.spec import Spec

from .conftest import table_rows

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "sdc_reference"

# SuppressSmallCounts(mun_accidents, maxN = 3, protectZeros = FALSE): its primaries and its secondaries.
MUN_PRIMARY = {("Total", "light"), ("k2", "none"), ("k3", "light"), ("k3", "none"), ("k3", "serious"),
               ("k4", "light"), ("k5", "Total"), ("k5", "serious")}
MUN_SECONDARY = {("Total", "none"), ("k1", "Total"), ("k1", "serious"), ("k2", "serious"), ("k4", "none")}
# SuppressDominantCells(magnitude1, sector4 x geo, company, pPercent = 10): primaries, secondaries.
MAGNITUDE_PRIMARY = {("Total", "Iceland"), ("Total", "Portugal"), ("Agriculture", "Total"),
                     ("Agriculture", "Portugal"), ("Agriculture", "Spain"), ("Entertainment", "Iceland"),
                     ("Entertainment", "Portugal"), ("Governmental", "Portugal"), ("Governmental", "Spain"),
                     ("Industry", "Portugal"), ("Industry", "Spain")}
MAGNITUDE_SECONDARIES = 3
#: What a frequency run with --min-count 4 asks of every primary, with what its policy tells the attacker:
#: whole numbers, every hidden cell >= 1, not inside [1, 3] (anonsql.tables.job.policy).
MUN_POLICY = policy(Spec(["mun", "inj"], [[0, 1]], rules=Rules(min_count=4)))


def _statuses(engine, name: str) -> dict[str, set]:
    out: dict[str, set] = {"u": set(), "x": set()}
    for r in table_rows(engine, f"{name}_private_audit"):
        if r[6] in out:
            out[r[6]].add((r[0], r[1]))
    return out


def _accidents(engine) -> None:
    counts = pd.read_csv(REFERENCE / "mun_accidents.csv")
    rows = [(m, i) for m, i, n in counts.itertuples(index=False) for _ in range(n)]  # one row per accident
    write_frame(engine, pd.DataFrame(rows, columns=["mun", "inj"]), "accidents")


def test_gausssuppression_small_counts_mun_accidents(db, engine):
    _accidents(engine)
    r = anonsql.safe_table(db, "accidents", "mun,inj", min_count=4, out="pub")
    got = _statuses(engine, "pub")
    assert r.ok and got["u"] == MUN_PRIMARY
    assert len(got["x"]) <= len(MUN_SECONDARY)
    # no primary pinned nor inside [1, 3] for the attacker who knows the policy, over whole numbers
    result = verify.attack(engine, get_table(engine, "pub"), ["mun", "inj"], None, None, MUN_POLICY.floor, True)
    truth = {(row[0], row[1]): row[4] for row in table_rows(engine, "pub_private_audit")}
    hidden = {i.labels: i for i in result.intervals}
    assert set(hidden) == got["u"] | got["x"] and MUN_POLICY.floor == 1 and MUN_POLICY.integer
    assert all(MUN_POLICY.holds(truth[c], hidden[c].lower, hidden[c].upper) for c in got["u"])


def test_gausssuppression_pattern_leaves_small_counts_to_the_policy_aware_attacker(db, engine):
    """GaussSuppression's own pattern, published as anonsql would, against anonsql's attacker: it
    knows every hidden count is a whole number >= 1 (empty cells are published and never hidden,
    in both tools), and pins three primaries inside [1, 2]: why anonsql's pattern differs."""
    _accidents(engine)
    anonsql.safe_table(db, "accidents", "mun,inj", min_count=4, out="pub")
    hide = MUN_PRIMARY | MUN_SECONDARY
    rows = [(*r[:4], None if (r[0], r[1]) in hide else r[4], "suppressed" if (r[0], r[1]) in hide else "published",
             None, None) for r in table_rows(engine, "pub_private_audit")]
    frame = pd.DataFrame(rows, columns=["mun", "inj", "grouping_id", "level", "value", "status", "lower", "upper"])
    write_frame(engine, frame.convert_dtypes(), "gauss")
    truth = {(r[0], r[1]): r[4] for r in table_rows(engine, "pub_private_audit")}
    result = verify.attack(engine, get_table(engine, "gauss"), ["mun", "inj"], None, None, MUN_POLICY.floor, True)
    exposed = {i.labels for i in result.intervals if i.labels in MUN_PRIMARY
               and not MUN_POLICY.holds(truth[i.labels], i.lower, i.upper)}
    assert exposed == {("k2", "none"), ("k3", "light"), ("k3", "none")}


def test_gausssuppression_p_percent_magnitude1(db, engine):
    write_frame(engine, pd.read_csv(REFERENCE / "magnitude1.csv"), "firms")
    r = anonsql.safe_table(db, "firms", "sector4,geo", measure="value", contributor="company", min_count=1,
                           p_percent=10, out="pub")
    got = _statuses(engine, "pub")
    assert r.ok and got["u"] == MAGNITUDE_PRIMARY and r.reasons["p%"] == len(MAGNITUDE_PRIMARY)
    assert len(got["x"]) <= MAGNITUDE_SECONDARIES
    assert {c.name for c in r.checks} >= {"the attacker's LP on the published table leaves every primary its "
                                           "protection", "no union of a dominance primary's suppressed companions "
                                           "is dominated (approximate disclosure)"}


def test_sdctable_singletons_need_one_secondary(db, engine):
    write_frame(engine, pd.DataFrame({"region": ["a", "b", "b", "c"]}), "people")
    r = anonsql.safe_table(db, "people", "region", min_count=2, out="pub")
    audit = {row[0]: row[5] for row in table_rows(engine, "pub_private_audit")}
    assert r.ok and {k for k, s in audit.items() if s == "u"} == {"a", "c"}
    assert sum(s == "x" for s in audit.values()) <= 1  # sdcTable's SIMPLEHEURISTIC with detectSingletons


def test_gausssuppression_p_percent_one_way_without_total(db, engine):
    """SuppressDominantCells(d, pPercent = 7, numVar = "num", formula = ~v1 - 1), each record its own
    contributor: v1..v4 primary (T - x_1 - x_2 = 0), v5 safe (100 - 50 - 25 >= 7% of 50), nothing else."""
    num = [100, 90, 10, 80, 20, 70, 30, 50, 25, 25, 40, 20, 20, 20, 25, 25, 25, 25]
    v1 = ["v1"] + ["v2"] * 2 + ["v3"] * 2 + ["v4"] * 2 + ["v5"] * 3 + ["v6"] * 4 + ["v7"] * 4
    write_frame(engine, pd.DataFrame({"v1": v1, "num": num, "record": range(len(num))}), "d")
    r = anonsql.safe_table(db, "d", "v1", margins="none", measure="num", contributor="record", min_count=1,
                           p_percent=7, out="pub")
    got = {row[0]: row[5] for row in table_rows(engine, "pub_private_audit")}
    assert r.ok and {k for k, s in got.items() if s == "u"} == {"v1", "v2", "v3", "v4"}
    assert not any(s == "x" for s in got.values())
