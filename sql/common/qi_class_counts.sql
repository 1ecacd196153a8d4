-- N(y, c): rows per distinct quasi-identifier vector y and class c, i.e. the tuple set S
-- with its count table (Kameya & Hayashi Sec. 2.2). NULL (⊥) is a value of its own.
-- Values are coded HERE, so identity is the database's (NaN, ±inf, HUGEINT, DECIMAL(38) stay
-- exact): code = rank among the distinct non-NULL values in the type's order, 0-based, -1 for
-- ⊥; label = the value's text. $group_key (common/group_key.sql over y and c) names the group
-- for set-based write-back. Read by position (user columns may share these aliases):
-- codes y_1..y_m, labels y_1..y_m, class code, class label, N(y, c), group key.
SELECT CASE WHEN $qi IS NULL THEN -1 ELSE DENSE_RANK() OVER (ORDER BY $qi NULLS LAST) - 1 END AS code,
       CAST($qi AS VARCHAR) AS label,
       CASE WHEN $cls IS NULL THEN -1 ELSE DENSE_RANK() OVER (ORDER BY $cls NULLS LAST) - 1 END AS class_code,
       CAST($cls AS VARCHAR) AS class_label,
       COUNT(*) AS n,
       $group_key AS group_key
FROM $tbl
GROUP BY $qi, $cls
