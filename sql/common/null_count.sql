-- Rows whose value in the given column is NULL (e.g. class labels that must not be missing).
SELECT COUNT(*) AS n FROM $tbl WHERE $col IS NULL
