-- The rows the job published and proved, read back for dbt to write as the Python model.
SELECT * FROM $tbl
