-- Set-based write-back of one column: every decided cell becomes NULL (ν) in one UPDATE.
UPDATE $out AS t SET $col = NULL
FROM $decisions AS d
WHERE t.$key = d.row_key AND d.column_name = $col_name
