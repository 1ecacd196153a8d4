-- N(c): rows per class label c in the type's order, NULL last (a NULL label is reported, and
-- rejected where it matters). Read by position: the label typed, as text, N(c).
SELECT $cls AS class_value, CAST($cls AS VARCHAR) AS class_label, COUNT(*) AS n
FROM $tbl
GROUP BY $cls
ORDER BY $cls NULLS LAST
