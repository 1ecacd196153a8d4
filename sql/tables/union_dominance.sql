-- Approximate disclosure through a union of suppressed cells (Hundepool et al. 2012, 4.2): the
-- hidden cells U of one additive relation whose total is published sum to a value the attacker
-- computes (the total minus its published cells). Pooled from the source rows, each contributor's
-- sum over U's cells, ranked x_1 >= x_2 >= ..., and T = sum of U. Returns the unions the rules
-- call dominated, as a published cell would be: (n,k)-dominance x_1 + ... + x_n > k/100 T
-- ($dominance_n, $dominance_k; k < 0: no such rule), p% T - x_1 - x_2 < p/100 x_1 ($p_percent;
-- < 0: none); `needed`, how much the union's total must grow for both to hold: the rules' upper
-- protection levels 100/k (x_1 + ... + x_n) - T and p/100 x_1 - (T - x_1 - x_2).
WITH per AS (
  SELECT $gid AS gid, $key AS k, $who AS who, SUM($measure) AS amount
  FROM $src
  GROUP BY $sets
), pooled AS (
  SELECT u.union_id, p.who, SUM(p.amount) AS amount
  FROM per AS p
  JOIN $unions AS u ON p.gid = u.grouping_id AND p.k = $union_key
  GROUP BY u.union_id, p.who
), ranked AS (
  SELECT union_id, amount, ROW_NUMBER() OVER (PARTITION BY union_id ORDER BY amount DESC) AS r FROM pooled
), pooled_top AS (
  SELECT union_id, SUM(amount) AS total,
         COALESCE(SUM(amount) FILTER (WHERE r <= $dominance_n), 0) AS top_n,
         COALESCE(MAX(amount) FILTER (WHERE r = 1), 0) AS x1,
         COALESCE(MAX(amount) FILTER (WHERE r = 2), 0) AS x2
  FROM ranked
  GROUP BY union_id
)
SELECT union_id,
       GREATEST(CASE WHEN $dominance_k >= 0 THEN 100.0 / $dominance_k * top_n - total ELSE 0 END,
                CASE WHEN $p_percent >= 0 THEN $p_percent / 100.0 * x1 - (total - x1 - x2) ELSE 0 END) AS needed
FROM pooled_top
WHERE total > 0
  AND (($dominance_k >= 0 AND top_n > $dominance_k / 100.0 * total)
       OR ($p_percent >= 0 AND total - x1 - x2 < $p_percent / 100.0 * x1))
ORDER BY union_id
