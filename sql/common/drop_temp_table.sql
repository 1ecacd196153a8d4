-- Remove a temporary working table.
DROP TABLE IF EXISTS $tbl
