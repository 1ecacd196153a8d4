"""Fingerprints compare values, not each engine's printing of them (issue 29): a double enters a
fingerprint as its exact value ±M·2^E (sql/common/float_key.sql), the same text on DuckDB,
PostgreSQL and Spark (tests/test_spark.py runs the Spark half and a whole release-like sequence)."""

from __future__ import annotations

import math

import pandas as pd

from anonsql import catalog, sql
from anonsql.data.loading import write_frame
from anonsql.release.stats import fingerprint, float_key

#: Round numbers (25.0 prints as 25 on PostgreSQL), 1e20 (1.0E20 on Spark), -0.0, 0.1, the
#: extremes, subnormals, powers of two and their neighbours (where ln|x|/ln 2 rounds).
DOUBLES = [25.0, 0.5, 1e20, -0.0, 0.1, -1.0, 2.0**53, 1.7976931348623157e308, 2.2250738585072014e-308, 5e-324,
           math.log(7), -math.pi, *(2.0**k for k in range(-1074, 1024, 61)),
           *(math.nextafter(2.0**k, 0) for k in range(-1000, 1000, 97)),
           *(math.nextafter(2.0**k, math.inf) for k in range(-1000, 1000, 97))]


def exact(x: float) -> str:
    """Python's own decomposition x = ±M·2^E, M in [2^52, 2^53): the oracle of float_key."""
    m, e = math.frexp(abs(x))
    return "0" if x == 0 else ("-" if x < 0 else "") + f"{int(m * 2**53)}p{e - 53}"


def float_keys(engine, table: str) -> list[str]:
    query = sql.sqlglot.select(float_key(sql.column("x")).as_("k")).from_(table)
    return sorted(k for (k,) in engine.fetch_all(*sql.bind(query, engine.dialect, {})))


def test_a_double_is_its_exact_value(engine):
    write_frame(engine, pd.DataFrame({"x": DOUBLES}), "doubles", kinds={"x": "float"})
    assert float_keys(engine, "doubles") == sorted(map(exact, DOUBLES))


def test_equal_doubles_give_equal_fingerprints_and_a_last_bit_changes_it(engine):
    """The fingerprint is still exact: one ulp apart is another fingerprint; 0 and -0.0 are equal."""
    write_frame(engine, pd.DataFrame({"x": [0.1, 0.0, 25.0]}), "a", kinds={"x": "float"})
    write_frame(engine, pd.DataFrame({"x": [25.0, -0.0, 0.1]}), "b", kinds={"x": "float"})
    write_frame(engine, pd.DataFrame({"x": [math.nextafter(0.1, 1), 0.0, 25.0]}), "c", kinds={"x": "float"})
    a, b, c = (fingerprint(engine, catalog.get_table(engine, t)) for t in "abc")
    assert a == b and a != c
