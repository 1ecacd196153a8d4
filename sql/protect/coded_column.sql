-- One column of the microdata as integer codes, one row per table row in the engine's key
-- order: the value's rank among the column's distinct values (protect/dictionary's c: 0, 1,
-- ...), -1 for NULL (ν). A join with the small dictionary: no value text leaves per row.
SELECT COALESCE(d.c, -1) AS c
FROM $tbl AS t
LEFT JOIN (
  SELECT v, CAST(DENSE_RANK() OVER (ORDER BY v) - 1 AS INTEGER) AS c
  FROM (SELECT DISTINCT $col AS v FROM $tbl WHERE $col IS NOT NULL) AS s
) AS d ON t.$col = d.v
ORDER BY t.$key
