-- The rows an algorithm may change (Hintoglu 2011: the tuples of one class holding one value,
-- DECP's "next tuple" and INCP's class): key and columns of the rows with c1 = v1 AND c2 = v2
-- (one condition is given twice when there is only one). Sorted by key in Python.
SELECT $key, $col
FROM $tbl
WHERE $c1 = $v1 AND $c2 = $v2
