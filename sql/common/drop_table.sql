-- Remove a table (a replaced load target or a staging table).
DROP TABLE $tbl
