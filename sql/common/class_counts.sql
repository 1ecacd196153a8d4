-- N(c): rows per class label c (a NULL label is reported, and rejected where it matters).
SELECT $cls AS class_value, COUNT(*) AS n
FROM $tbl
GROUP BY $cls
