-- A published viewset read back in one query: the P_c rows of <out>_class (attribute NULL)
-- and the N^i_{t,c} rows of <out>_attr. Counts as text: no driver rounds a 38-digit integer.
SELECT CAST(NULL AS VARCHAR) AS attribute, CAST(NULL AS VARCHAR) AS value_label,
       CAST(p."class" AS VARCHAR) AS class_label, CAST(p."count" AS VARCHAR) AS n
FROM $class_tbl AS p
UNION ALL
SELECT CAST(a."attribute" AS VARCHAR), CAST(a."value" AS VARCHAR), CAST(a."class" AS VARCHAR),
       CAST(a."count" AS VARCHAR)
FROM $attr_tbl AS a
