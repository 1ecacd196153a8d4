-- The smallest equivalence classes with N(y) < k (the ones to show first), at most $max_groups.
-- Values are shown as the database prints them (text): exact for DECIMAL(38), NaN, time zones,
-- and fetchable whatever the type. Ordered by expressions on the input (t.), never by a bare
-- name a QI column may share with the alias. Read by position.
SELECT CAST(t.$qi AS VARCHAR) AS label, COUNT(*) AS size
FROM $tbl AS t
GROUP BY t.$qi
HAVING COUNT(*) < $k
ORDER BY COUNT(*), t.$qi
LIMIT $max_groups
