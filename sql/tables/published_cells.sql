-- A published table as the attacker sees it: every row's labels, grouping id, value and status.
SELECT $label, grouping_id, value, status FROM $out
