-- Set-based write-back of one column: every cell decided to become ν turns NULL in one UPDATE
-- (any column type).
UPDATE $out AS t SET $col = NULL
FROM $decisions AS d
WHERE t.$key = d.row_key AND d.column_name = $col_name AND d.new_value IS NULL
