-- ARX's loss metric of a cell published as label L of QI j (a fragment): (leaves under L - 1)
-- / (D_j - 1), the leaves the distinct source values whose label is L, D_j all of them;
-- ⊥ (NULL) loses 1, a value kept (one leaf) 0.
SELECT CASE
  WHEN $label IS NULL THEN 1.0
  ELSE CAST(SUM($first) OVER (PARTITION BY $label) - 1 AS DOUBLE) / GREATEST(SUM($first) OVER () - 1, 1)
END
