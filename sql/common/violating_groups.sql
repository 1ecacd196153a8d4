-- The smallest equivalence classes with N(y) < k (the ones to show first), at most $max_groups.
-- $shown is each QI as fetched: the value itself, or its text where the driver cannot convert
-- the type (anonsql.verify.shown_columns). Ordered by expressions on the input (t.), never by a bare
-- name a QI column may share with the alias. Read by position.
SELECT $shown, COUNT(*) AS size
FROM $tbl AS t
GROUP BY t.$qi
HAVING COUNT(*) < $k
ORDER BY COUNT(*), t.$qi
LIMIT $max_groups
