-- Verification: changed cells of one column whose published value is not the recorded new
-- value (NULL or a taxonomy label). The table must hold what the changes table says: no row.
SELECT ch."key"
FROM $changes AS ch
JOIN $out AS t ON t.$key = ch."key"
WHERE ch.column_name = $col_name AND CAST(t.$col AS VARCHAR) IS DISTINCT FROM ch.new_value
