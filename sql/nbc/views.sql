-- NBC-enabling views (Section 3) in ONE scan: N^i_{t,c} = |σ_{A_i=t ∧ C=c}(T)| for every
-- attribute i through one grouping set (A_i, C) each, and P_c = |σ_{C=c}(T)| through (C).
-- g_i = GROUPING(A_i) is 0 on the rows of set i; on the P_c rows every g_i is 1.
-- Values are coded here, in their type's order (rank among the non-NULL values, 0-based; -1
-- for NULL), so identity is the database's (NaN is a value), and come as text (the published
-- labels). Read by position (user columns may share these aliases): g, codes, texts, class
-- code, class text, count.
SELECT GROUPING($attr) AS g,
       CASE WHEN $attr IS NULL THEN -1
            ELSE DENSE_RANK() OVER (PARTITION BY GROUPING($attr) ORDER BY $attr NULLS LAST) - 1 END AS code,
       CAST($attr AS VARCHAR) AS v,
       CASE WHEN $cls IS NULL THEN -1 ELSE DENSE_RANK() OVER (ORDER BY $cls NULLS LAST) - 1 END AS class_code,
       CAST($cls AS VARCHAR) AS cv,
       COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($attr, $cls), ($cls))
