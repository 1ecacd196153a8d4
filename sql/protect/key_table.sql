-- An empty working relation of (row key, column name) pairs, the key typed as in the source:
-- the cells a protect run turns NULL, or (column_name unused) the tuples it removes.
CREATE TEMPORARY TABLE $decisions AS
SELECT t.$key AS row_key, CAST(NULL AS VARCHAR) AS column_name FROM $tbl AS t WHERE 1 = 0
