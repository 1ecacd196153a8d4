-- One column's value dictionary: each distinct non-NULL value once (protect codes them in
-- Python, by sorted value or taxonomy node; a value leaves the database once, not per row).
SELECT DISTINCT $col AS v
FROM $tbl
WHERE $col IS NOT NULL
