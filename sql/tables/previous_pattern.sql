-- The suppression pattern of a previously published table of the same shape (--previous): every
-- cell's labels and grouping id, and whether it was hidden (the published table's status
-- 'suppressed', or its private audit's u primary / x secondary).
SELECT $label, grouping_id, CASE WHEN status IN ('suppressed', 'u', 'x') THEN 1 ELSE 0 END AS hidden
FROM $prev
