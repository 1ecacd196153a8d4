-- Rows of $a (projected on $col) with no counterpart in $b, counting duplicates:
-- 0 both ways <=> the two projections are equal as multisets.
SELECT COUNT(*) AS n
FROM (
  SELECT $col FROM $a
  EXCEPT ALL
  SELECT $col FROM $b
) AS diff
