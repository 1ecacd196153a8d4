-- The changes table's rows, for the report.
SELECT * FROM $changes ORDER BY "key", column_name
