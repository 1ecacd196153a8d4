-- Recursive (c, l)-diversity of a sensitive column s within the equivalence classes E over the
-- quasi-identifiers (Machanavajjhala et al. 2007; NULL, ⊥, a value of its own in both): with
-- r_1 >= r_2 >= ... >= r_m the counts of E's distinct s values, E is (c, l)-diverse when
-- r_1 < c (r_l + r_{l+1} + ... + r_m). Returns the classes that are not, and their rows.
WITH cells AS (
  SELECT DENSE_RANK() OVER (ORDER BY $qi) AS e, COUNT(*) AS n
  FROM $tbl
  GROUP BY $qi, $s
), ranked AS (
  SELECT e, n, ROW_NUMBER() OVER (PARTITION BY e ORDER BY n DESC) AS i
  FROM cells
), classes AS (
  SELECT e, MAX(n) AS r1, CAST(COALESCE(SUM(n) FILTER (WHERE i >= $l), 0) AS DOUBLE) AS tail, SUM(n) AS size
  FROM ranked
  GROUP BY e
)
SELECT COUNT(*) AS classes, COALESCE(SUM(size), 0) AS rows
FROM classes
WHERE NOT r1 < $c * tail
