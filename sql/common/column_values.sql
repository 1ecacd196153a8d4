-- The distinct values of every column of the grouped relation S (common/qi_class_groups.sql) in
-- ONE pass over it: one grouping set per column, each row holding one column's value (the other
-- columns NULL). The value dictionaries (common/value_dictionary.sql) are built from this small
-- relation instead of from S once per column (PostgreSQL, 199,000 groups of 9 columns: 0.23 s
-- -> 0.13 s; DuckDB reads S itself, see anonsql.stats._value_dictionaries).
CREATE TEMPORARY TABLE $values AS
SELECT $col
FROM $groups
GROUP BY GROUPING SETS (($col))
