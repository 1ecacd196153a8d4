-- The primary rules re-checked on the published cells (value not NULL), from the source rows:
-- rows n (or contributors), total T and the largest contributions x_1, x_2 and the sum of the
-- top n_d of each cell. Must return 0: no published cell fails the minimum frequency
-- (n < $min_count, an empty cell only with $zero_unsafe), (n_d, k)-dominance or the p% rule
-- (T - x_1 - x_2 < p/100 x_1).
WITH per AS (
  SELECT $gid AS gid, $key AS k, SUM($measure) AS amount, COUNT(*) AS n
  FROM $src
  GROUP BY $sets
), ranked AS (
  SELECT gid, k, amount, n, ROW_NUMBER() OVER (PARTITION BY gid, k ORDER BY amount DESC) AS r FROM per
), cell AS (
  SELECT gid, k, SUM(n) AS n, COUNT(*) AS contributors, SUM(amount) AS total,
         SUM(amount) FILTER (WHERE r <= $dominance_n) AS top_n,
         MAX(amount) FILTER (WHERE r = 1) AS x1,
         COALESCE(MAX(amount) FILTER (WHERE r = 2), 0) AS x2
  FROM ranked
  GROUP BY gid, k
), published AS (
  SELECT grouping_id AS gid, $out_key AS k FROM $out WHERE value IS NOT NULL
)
SELECT COUNT(*) AS violations
FROM published AS p
LEFT JOIN cell AS c ON p.gid = c.gid AND p.k = c.k
WHERE (c.n IS NULL AND $zero_unsafe)
   OR (CASE WHEN $by_contributor THEN c.contributors ELSE c.n END) < $min_count
   OR ($dominance_k >= 0 AND c.total > 0 AND c.top_n > $dominance_k / 100.0 * c.total)
   OR ($p_percent >= 0 AND c.total > 0 AND c.total - c.x1 - c.x2 < $p_percent / 100.0 * c.x1)
