-- Verification (Def. 2.5): confidential cells not recorded as changed, or recorded as kept.
-- Every confidential cell must be NULL or a strict generalization: must return no row.
SELECT c.row_key, c.column_name
FROM $cells AS c
LEFT JOIN $changes AS ch ON ch."key" = c.row_key AND ch.column_name = c.column_name
WHERE ch."key" IS NULL OR ch.new_value IS NOT DISTINCT FROM ch.old_value
