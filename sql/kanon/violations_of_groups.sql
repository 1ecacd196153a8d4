-- k-anonymity check on the grouped relation of the written table (common/qi_class_groups.sql:
-- one row per QI vector y and class c with its N(y, c), NULL a value of its own): the
-- equivalence classes with N(y) = Σ_c N(y, c) < k, and the rows they hold. The figures of
-- common/violations_summary.sql on the rows, read from the groups the recount wrote instead of
-- another pass over the rows (PostgreSQL, 10^6 rows: 0.40 s -> 0.02 s).
SELECT COUNT(*) AS groups, COALESCE(SUM(size), 0) AS rows
FROM (
  SELECT SUM(n) AS size
  FROM $groups
  GROUP BY $y
  HAVING SUM(n) < $k
) AS e
