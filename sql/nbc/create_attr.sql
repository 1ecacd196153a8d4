-- Published N^i_{t,c} (Section 6.2.4): one row per (attribute i, value t, class c). $count is
-- "count", the exact integer: BIGINT, or the engine's wider exact integer type when a count needs
-- more digits (anonsql.nbc.rewrite.count_column); "log_count" its natural log in DOUBLE for
-- classifying in SQL.
CREATE TABLE $out ("attribute" VARCHAR, "value" VARCHAR, "class" VARCHAR, $count, "log_count" DOUBLE)
