-- The largest contributions x_1 >= x_2 >= ... >= x_t of every cell, for the (n,k)-dominance and
-- p% rules: each contributor's sum per cell of every grouping set, ranked within the cell.
WITH per AS (
  SELECT $dim, $gid AS gid, SUM($measure) AS amount
  FROM $src
  GROUP BY $sets
), ranked AS (
  SELECT $dim, gid, amount, ROW_NUMBER() OVER (PARTITION BY gid, $dim ORDER BY amount DESC) AS r
  FROM per
)
SELECT $dim, gid, r, amount FROM ranked WHERE r <= $top
