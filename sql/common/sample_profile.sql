-- Any $m rows of a table (the first the scan meets): their number |S| and, per column j,
-- d_S(A_j), the distinct non-NULL values among them. Within any subset S of the rows,
-- |S| - d_S(A_j) <= N - |dom(A_j)| (nulls and repeats only add up), so a subset with many
-- repeats proves a column far from unique without counting the whole table.
SELECT COUNT(*) AS n_rows, COUNT(DISTINCT $col) AS n_distinct
FROM (SELECT * FROM $tbl LIMIT $m) AS s
