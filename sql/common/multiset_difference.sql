-- How far the projections of $a and $b on $col are from equal as multisets: the sum over
-- distinct rows r of |N_a(r) - N_b(r)|, i.e. the rows of either table with no counterpart in
-- the other, duplicates counted (EXCEPT ALL both ways, in one scan of each table). 0 <=> equal.
-- GROUP BY's equality is EXCEPT's (NULL equal to NULL). $side is a name none of $col uses.
SELECT COALESCE(SUM(ABS(d)), 0) AS n
FROM (
  SELECT SUM($side) AS d
  FROM (
    SELECT $col, 1 AS $side FROM $a
    UNION ALL
    SELECT $col, -1 AS $side FROM $b
  ) AS both_tables
  GROUP BY $col
) AS per_row
