-- The changes table <out>_changes(key, column_name, old_value, new_value), empty. It holds
-- ORIGINAL values, confidential ones included: keep it as private as the source table.
CREATE TABLE $changes AS
SELECT t.$key AS "key", CAST(NULL AS VARCHAR) AS column_name, CAST(NULL AS VARCHAR) AS old_value,
       CAST(NULL AS VARCHAR) AS new_value
FROM $tbl AS t WHERE 1 = 0
