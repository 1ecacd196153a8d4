-- How far one column A pins rows down on its own (the near-unique measure of a direct
-- identifier): |dom(A)|, its distinct non-NULL values, and the rows whose value at most
-- $handful rows share (each lies within a handful of rows by A alone). One GROUP BY per
-- column, not COUNT(DISTINCT) over many: PostgreSQL sorts every COUNT(DISTINCT), it hashes
-- a GROUP BY.
SELECT COUNT(*) AS n_distinct, COALESCE(SUM(CASE WHEN g.n <= $handful THEN g.n ELSE 0 END), 0) AS n_few
FROM (SELECT COUNT(*) AS n FROM $tbl WHERE $col IS NOT NULL GROUP BY $col) AS g
