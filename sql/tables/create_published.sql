-- The published table: one row per cell, its label in every dimension ('Total' in a margin, a
-- taxonomy node's label along a --hierarchy), the grouping id GROUPING(d_1..d_D), the level
-- (taxonomy levels above the leaves, summed over the dimensions; 0 without --hierarchy), the
-- value ($value: BIGINT for counts, DOUBLE PRECISION for sums; NULL when suppressed), the status
-- ('published' or 'suppressed', the same for every hidden cell: primaries and secondaries are
-- told apart only in the private audit) and the attacker's bounds of hidden cells (when asked for).
CREATE TABLE $out ($label VARCHAR, grouping_id INTEGER, level INTEGER, $value, status VARCHAR,
                   lower DOUBLE PRECISION, upper DOUBLE PRECISION)
