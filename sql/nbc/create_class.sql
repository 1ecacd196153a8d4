-- Published P_c (Section 6.2.4): per class, the exact integer count after Step 4 ($count:
-- "count" BIGINT, or the engine's wider exact integer type when a count needs more digits), its
-- natural log, and the prior weight F_c it was made r-close to (EST, Section 7.2; 1 = uniform,
-- SafetyTransform); "precedence" ranks the classes for ties (Section 6.1: the highest wins a tie).
CREATE TABLE $out ("class" VARCHAR, $count, "log_count" DOUBLE, "prior" BIGINT, "precedence" INTEGER)
