-- Local recoding's k check (issue 33), on the published table alone: the classes (rows sharing
-- every quasi-identifier's published value, ⊥ a value of its own) below k, and all the rows.
SELECT COALESCE(SUM(CASE WHEN n < $k THEN 1 ELSE 0 END), 0) AS small, COALESCE(SUM(n), 0) AS rows
FROM (SELECT COUNT(*) AS n FROM $out GROUP BY $qi) AS g
