-- The PRIVATE audit of a run (<out>_private_audit): every cell with its TRUE value ($value:
-- BIGINT for counts), its rows (or contributors) n, its status (s safe, u primary, x secondary,
-- z forced), its reason (the rule a primary fails: frequency, <n>-dominance, p%, empty; secondary;
-- forced; structural zero; safe), the details (the numbers behind the rule, or the primary a
-- secondary protects), the attacker's interval [lower, upper] of the hidden cells (over whole
-- numbers for counts) and, for primaries, the LP's interval over the reals [lp_lower, lp_upper].
CREATE TABLE $out ($label VARCHAR, grouping_id INTEGER, level INTEGER, $value, n BIGINT,
                   status VARCHAR, reason VARCHAR, detail VARCHAR, lower DOUBLE PRECISION, upper DOUBLE PRECISION,
                   lp_lower DOUBLE PRECISION, lp_upper DOUBLE PRECISION)
