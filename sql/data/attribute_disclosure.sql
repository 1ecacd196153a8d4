-- Attribute disclosure of a sensitive column s within the equivalence classes E over the
-- quasi-identifiers (NULL, ⊥, a value of its own in both). Per class: distinct l = the number
-- of distinct s values; entropy l = exp(H(E)), H(E) = -sum p_E(v) ln p_E(v); the distance of
-- p_E to the table's distribution p over its m sorted values v_1..v_m (NULL last), both the
-- equal distance 1/2 sum |p_E(v) - p(v)| (categories) and the ordered distance
-- 1/(m-1) sum_i |sum_{j<=i} (p_E(v_j) - p(v_j))| (numbers; Li et al. 2007, t-closeness).
-- Returns the table's l's (minima), t's (maxima) and the classes and rows below $l / above $t.
WITH cells AS (
  SELECT DENSE_RANK() OVER (ORDER BY $qi) AS e, $s AS v, COUNT(*) AS n
  FROM $tbl
  GROUP BY $qi, $s
), vals AS (
  SELECT v, SUM(n) AS n_v, ROW_NUMBER() OVER (ORDER BY v NULLS LAST) AS i
  FROM cells
  GROUP BY v
), sizes AS (
  SELECT e, SUM(n) AS size, COUNT(*) AS l,
         LN(CAST(SUM(n) AS DOUBLE)) - SUM(n * LN(CAST(n AS DOUBLE))) / SUM(n) AS h
  FROM cells
  GROUP BY e
), grid AS (
  SELECT s.e, s.size, s.l, s.h, x.i,
         CAST(COALESCE(c.n, 0) AS DOUBLE) / s.size - CAST(x.n_v AS DOUBLE) / (SELECT SUM(n_v) FROM vals) AS diff
  FROM sizes AS s
  CROSS JOIN vals AS x
  LEFT JOIN cells AS c ON c.e = s.e AND c.v IS NOT DISTINCT FROM x.v
), cumulative AS (
  SELECT e, size, l, h, diff, SUM(diff) OVER (PARTITION BY e ORDER BY i) AS cum
  FROM grid
), classes AS (
  SELECT e, MIN(size) AS size, MIN(l) AS l, MIN(h) AS h,
         SUM(ABS(diff)) / 2 AS equal_d,
         SUM(ABS(cum)) / GREATEST((SELECT COUNT(*) FROM vals) - 1, 1) AS ordered_d
  FROM cumulative
  GROUP BY e
)
SELECT
  MIN(l) AS distinct_l,
  EXP(MIN(h)) AS entropy_l,
  MAX(CASE WHEN $ordered THEN ordered_d ELSE equal_d END) AS t,
  COUNT(*) FILTER (WHERE l < $l) AS classes_below_l,
  COALESCE(SUM(size) FILTER (WHERE l < $l), 0) AS rows_below_l,
  COUNT(*) FILTER (WHERE (CASE WHEN $ordered THEN ordered_d ELSE equal_d END) > $t) AS classes_above_t,
  COALESCE(SUM(size) FILTER (WHERE (CASE WHEN $ordered THEN ordered_d ELSE equal_d END) > $t), 0) AS rows_above_t
FROM classes
