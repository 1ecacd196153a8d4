-- A published N^i_{t,c} table, counts as text so that no driver rounds a 38-digit integer.
SELECT CAST(a."attribute" AS VARCHAR) AS attribute, CAST(a."value" AS VARCHAR) AS value_label,
       CAST(a."class" AS VARCHAR) AS class_label, CAST(a."count" AS VARCHAR) AS n
FROM $tbl AS a
