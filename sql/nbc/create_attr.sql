-- Published N^i_{t,c} (Section 6.2.4): one row per (attribute i, value t, class c). "count" is
-- the exact integer as decimal text (any number of digits; PostgreSQL turns it into NUMERIC,
-- nbc/count_numeric.sql), "log_count" its natural log in DOUBLE for classifying in SQL.
CREATE TABLE $out ("attribute" VARCHAR, "value" VARCHAR, "class" VARCHAR, "count" VARCHAR, "log_count" DOUBLE)
