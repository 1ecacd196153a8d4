-- Numbers that read as ids, in one scan over the numeric columns: per column, its non-NULL
-- values and how many are whole numbers with at least as many digits as |x| >= $least
-- allows (a record number; stored as a float it prints as 2.98725e+13).
SELECT COUNT($col) AS n_values,
       SUM(CASE WHEN ABS($col) >= $least AND $col = FLOOR($col) THEN 1 ELSE 0 END) AS n_long
FROM $tbl
