-- Every row of a small table (a CKM table's ptable or spec), in a stable order.
SELECT * FROM $tbl ORDER BY 1, 2
