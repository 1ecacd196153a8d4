-- Rows, and rows with a 1 per derived 0/1 column: the check and the density of a binarized table.
SELECT COUNT(*) AS n, SUM($col) AS s
FROM $tbl
