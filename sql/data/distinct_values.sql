-- The distinct values of one column, sorted (NULL last).
SELECT DISTINCT $col FROM $tbl ORDER BY $col
