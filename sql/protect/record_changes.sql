-- Record, before the update, every cell of one column that the decisions change (to a
-- taxonomy label or to NULL), with its original and its new value.
INSERT INTO $changes
SELECT t.$key, CAST($col_name AS VARCHAR), CAST(t.$col AS VARCHAR), d.new_value
FROM $out AS t JOIN $decisions AS d ON t.$key = d.row_key
WHERE d.column_name = $col_name AND t.$col IS NOT NULL
