-- N: the number of rows of a table.
SELECT COUNT(*) AS n FROM $tbl
