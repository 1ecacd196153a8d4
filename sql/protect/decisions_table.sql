-- An empty working relation of decisions (row key, column, new value), the key typed as in the
-- source; new_value is the taxonomy label a cell becomes, NULL for ν (deletion is
-- generalization to NULL). The same shape lists the confidential cells and the removed tuples.
CREATE TEMPORARY TABLE $decisions AS
SELECT t.$key AS row_key, CAST(NULL AS VARCHAR) AS column_name, CAST(NULL AS VARCHAR) AS new_value
FROM $tbl AS t WHERE 1 = 0
