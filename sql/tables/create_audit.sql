-- The private audit of a run: every cell with its TRUE value, its rows (or contributors),
-- its status, why (the primary rule it fails, the primary a secondary protects, or forced)
-- and the attacker's interval [lower, upper] of the hidden cells.
CREATE TABLE $out ($label VARCHAR, grouping_id INTEGER, level INTEGER, value DOUBLE PRECISION, n BIGINT,
                   status VARCHAR, reason VARCHAR, lower DOUBLE PRECISION, upper DOUBLE PRECISION)
