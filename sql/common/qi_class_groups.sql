-- The tuple set S with its counts N(y, c), kept as a small temporary table: one row per
-- distinct quasi-identifier vector y and class c, NULL (⊥) a value of its own. The value
-- dictionaries (common/value_dictionary.sql) and the coded counts (common/qi_class_counts.sql)
-- read it, never the rows again. Internal column names (the table is ours): y_1..y_m, c, n.
CREATE TEMPORARY TABLE $groups AS
SELECT $qi AS y, $cls AS c, COUNT(*) AS n
FROM $tbl
GROUP BY $qi, $cls
