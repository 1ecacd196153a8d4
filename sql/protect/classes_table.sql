-- An empty working relation of equivalence classes named by their group key: the classes
-- whose rows get further QI cells suppressed so that the table stays k-anonymous.
CREATE TEMPORARY TABLE $classes AS
SELECT CAST(NULL AS VARCHAR) AS g
FROM $tbl AS t WHERE 1 = 0
