-- k-anonymity check: equivalence classes with N(y) < k, and the rows they hold.
SELECT COUNT(*) AS groups, COALESCE(SUM(size), 0) AS rows
FROM (
  SELECT COUNT(*) AS size
  FROM $tbl
  GROUP BY $qi
  HAVING COUNT(*) < $k
) AS e
