-- N(x_j, c) for every attribute j in ONE scan: one grouping set (A_j, C) per attribute.
-- g_j = GROUPING(A_j) is 0 on the rows that count attribute j; there x_j is coded as in
-- common/qi_class_counts.sql (rank among the non-NULL values, 0-based; -1 for ⊥, giving
-- N(⊥_j, c)) with its text label. Read by position (user columns may share these aliases):
-- g_1..g_m, codes, labels, class code, class label, count.
SELECT GROUPING($attr) AS g,
       CASE WHEN $attr IS NULL THEN -1
            ELSE DENSE_RANK() OVER (PARTITION BY GROUPING($attr) ORDER BY $attr NULLS LAST) - 1 END AS code,
       CAST($attr AS VARCHAR) AS label,
       CASE WHEN $cls IS NULL THEN -1 ELSE DENSE_RANK() OVER (ORDER BY $cls NULLS LAST) - 1 END AS class_code,
       CAST($cls AS VARCHAR) AS class_label,
       COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($attr, $cls))
