-- One scan for the per-column profile: N rows, and for every column j
-- |dom(A_j)| (distinct non-NULL values) and the number of NULL (⊥) cells.
SELECT
  COUNT(*) AS n_rows,
  COUNT(DISTINCT $col) AS n_distinct,
  COUNT(*) - COUNT($col) AS n_null
FROM $tbl
