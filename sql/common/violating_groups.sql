-- The smallest equivalence classes with N(y) < k (the ones to show first), at most $max_groups.
SELECT $qi, COUNT(*) AS size
FROM $tbl
GROUP BY $qi
HAVING COUNT(*) < $k
ORDER BY size, $qi
LIMIT $max_groups
