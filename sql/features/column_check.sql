-- Per feature column: the cells that are not 0 or 1, NULL included (NULL IN (0, 1) is not
-- true). Features must be binary; a column with any is examined by sql/null_count.sql.
SELECT SUM(CASE WHEN $col IN (0, 1) THEN 0 ELSE 1 END) AS bad
FROM $tbl
