-- Write-back as ONE CREATE TABLE AS SELECT over the source (engines without UPDATE: Spark).
-- Each row t meets its decisions x by the row key; $item lists the source's columns in order,
-- a changed column A_j being `CASE WHEN x.f_j THEN x.v_j ELSE t.A_j END` (v_j: the taxonomy
-- label, NULL for ν; a column receiving labels is kept as its text), so a row without a
-- decision (no match) keeps every value; the removed tuples (--delete-rows) are left out.
CREATE TABLE $out AS
SELECT $item
FROM $src AS t LEFT JOIN $decisions AS x ON x.row_key = t.$key
WHERE x.row_key IS NULL OR NOT x.removed
