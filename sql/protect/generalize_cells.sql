-- Set-based write-back of one column: every cell decided to generalize becomes its taxonomy
-- node's label in one UPDATE (the column holds text by now).
UPDATE $out AS t SET $col = d.new_value
FROM $decisions AS d
WHERE t.$key = d.row_key AND d.column_name = $col_name AND d.new_value IS NOT NULL
