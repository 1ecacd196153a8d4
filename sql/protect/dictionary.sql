-- One column's value dictionary in the ranks of protect/coded_column: each distinct non-NULL
-- value with its rank c (0, 1, ...), in rank order.
SELECT DISTINCT $col AS v, CAST(DENSE_RANK() OVER (ORDER BY $col) - 1 AS INTEGER) AS c
FROM $tbl
WHERE $col IS NOT NULL
ORDER BY c
