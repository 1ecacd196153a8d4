-- The row key of a protect run must identify rows: no NULL keys, no duplicates.
SELECT COUNT(*) AS n, COUNT($key) AS known, COUNT(DISTINCT $key) AS distinct_keys FROM $tbl
