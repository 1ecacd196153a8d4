-- A published table as the attacker sees it: every row's labels, grouping id, taxonomy level,
-- value and status.
SELECT $label, grouping_id, level, value, status FROM $out
