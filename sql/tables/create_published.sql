-- The published table: one row per cell, its label in every dimension ('Total' in a margin),
-- the grouping id GROUPING(d_1..d_D), the value (NULL when suppressed) and the status
-- (s safe, u primary, x secondary) and the attacker's bounds of hidden cells (when asked for).
CREATE TABLE $out ($label VARCHAR, grouping_id INTEGER, value DOUBLE PRECISION, status VARCHAR,
                   lower DOUBLE PRECISION, upper DOUBLE PRECISION)
