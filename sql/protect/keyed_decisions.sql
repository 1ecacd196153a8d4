-- An empty working relation of the decisions pivoted to one row per row key, for engines
-- without UPDATE (Spark): per changed column A_j a flag f_j (the cell changes) and its new
-- value v_j (the taxonomy label, NULL for ν), then `removed` (--delete-rows); the key typed as
-- in the source. $col lists f_0.., v_0.., removed.
CREATE TEMPORARY TABLE $decisions AS
SELECT t.$key AS row_key, $col
FROM $tbl AS t WHERE 1 = 0
