-- A published viewset read back in one query: the P_c rows of <out>_class (attribute NULL)
-- and the N^i_{t,c} rows of <out>_attr. Counts as exact decimal text (no driver rounds them);
-- the prior weight F_c on the P_c rows.
SELECT CAST(NULL AS VARCHAR) AS attribute, CAST(NULL AS VARCHAR) AS value_label,
       CAST(p."class" AS VARCHAR) AS class_label, CAST(p."count" AS VARCHAR) AS n, p."prior" AS prior
FROM $class_tbl AS p
UNION ALL
SELECT CAST(a."attribute" AS VARCHAR), CAST(a."value" AS VARCHAR), CAST(a."class" AS VARCHAR),
       CAST(a."count" AS VARCHAR), NULL
FROM $attr_tbl AS a
