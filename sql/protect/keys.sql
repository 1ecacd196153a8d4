-- The row keys in the engine's key order (the order of protect/coded_column's rows).
SELECT $key FROM $tbl ORDER BY $key
