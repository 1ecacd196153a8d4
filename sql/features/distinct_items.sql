-- The distinct items of a long (row key, item) table: its feature set I (Zhang et al. Sec. 3).
SELECT DISTINCT $item AS item FROM $tbl WHERE $item IS NOT NULL ORDER BY 1
