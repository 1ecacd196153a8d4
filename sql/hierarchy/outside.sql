-- Values of a column outside its declared hierarchy ($outside: the hierarchy's own test,
-- e.g. NaN or ±inf for intervals, a value no taxonomy node names): how many rows, and one of
-- them for the error line. NULL is ⊥, inside every hierarchy.
SELECT COUNT(*) AS n, MIN(CAST($col AS VARCHAR)) AS example FROM $tbl WHERE $outside
