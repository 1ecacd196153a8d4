-- Quantile cut points of a numeric or date column: the smallest value of each of $quantiles
-- equal-count tiles (NULL, NaN and ±inf left out: they keep labels of their own). Equal
-- values may straddle tiles; the caller keeps the distinct cut points, so a value always
-- lands in one bin.
SELECT tile, MIN(v) AS lower_bound, MAX(v) AS upper_bound
FROM (
  SELECT $col AS v, NTILE($quantiles) OVER (ORDER BY $col) AS tile
  FROM $tbl
  WHERE $col IS NOT NULL AND NOT $special
) AS tiles
GROUP BY tile
ORDER BY tile
