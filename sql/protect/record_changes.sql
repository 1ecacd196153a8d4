-- Record, before the update, every cell of one column that the decisions turn NULL.
INSERT INTO $changes
SELECT t.$key, CAST($col_name AS VARCHAR), CAST(t.$col AS VARCHAR), CAST(NULL AS VARCHAR)
FROM $out AS t JOIN $decisions AS d ON t.$key = d.row_key
WHERE d.column_name = $col_name AND t.$col IS NOT NULL
