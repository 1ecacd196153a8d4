-- An empty working relation of generalization decisions: (row key, column, new value), the
-- key typed as in the source, new_value the taxonomy node's label (NULL: a deleted cell).
CREATE TEMPORARY TABLE $decisions AS
SELECT t.$key AS row_key, CAST(NULL AS VARCHAR) AS column_name, CAST(NULL AS VARCHAR) AS new_value
FROM $tbl AS t WHERE 1 = 0
