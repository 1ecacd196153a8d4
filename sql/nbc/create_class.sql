-- Published P_c (Section 6.2.4): per class, the integer count after Step 4 and the prior
-- weight F_c it was made r-close to (EST, Section 7.2; 1 = uniform, SafetyTransform).
CREATE TABLE $out ("class" VARCHAR, "count" DECIMAL(38, 0), "prior" BIGINT)
