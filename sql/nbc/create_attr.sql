-- Published N^i_{t,c} (Section 6.2.4): one row per (attribute i, value t, class c).
CREATE TABLE $out ("attribute" VARCHAR, "value" VARCHAR, "class" VARCHAR, "count" DECIMAL(38, 0))
