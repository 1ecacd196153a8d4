-- The private audit of a run: every cell with its TRUE value, its rows (or contributors),
-- its status, why (the primary rule it fails, or the primary a secondary protects) and the
-- attacker's interval [lower, upper] of the hidden cells.
CREATE TABLE $out ($label VARCHAR, grouping_id INTEGER, value DOUBLE PRECISION, n BIGINT, status VARCHAR,
                   reason VARCHAR, lower DOUBLE PRECISION, upper DOUBLE PRECISION)
