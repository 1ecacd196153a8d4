-- The smallest equivalence classes with N(y) < k (the ones to show first), at most $max_groups.
-- Ordered by expressions on the input (t.), never by a bare name a QI column may share with the alias.
SELECT $qi, COUNT(*) AS size
FROM $tbl AS t
GROUP BY $qi
HAVING COUNT(*) < $k
ORDER BY COUNT(*), t.$qi
LIMIT $max_groups
