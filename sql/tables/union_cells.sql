-- A working table of the unions of suppressed cells whose dominance is checked (approximate
-- disclosure, sql/tables/union_dominance.sql): one row per member cell, union u's number, the
-- cell's labels as published (one text column per dimension) and its grouping id.
CREATE TEMPORARY TABLE $unions (union_id BIGINT, $label VARCHAR, grouping_id INTEGER)
