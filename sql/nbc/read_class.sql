-- A published P_c table, counts as text so that no driver rounds a 38-digit integer.
SELECT CAST(p."class" AS VARCHAR) AS class_label, CAST(p."count" AS VARCHAR) AS n
FROM $tbl AS p
