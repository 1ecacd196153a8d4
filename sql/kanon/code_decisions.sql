-- The readable decisions r (original values under the real column names) coded like the rows:
-- each value y_j and the class c replaced by its dictionary code (one LEFT JOIN per column,
-- added by anonsql.kanon.rewrite), the flags kept: the relation the write-back joins on.
CREATE TEMPORARY TABLE $codes AS
SELECT $code AS y, $flag
FROM $decisions AS r
