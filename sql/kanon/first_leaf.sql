-- 1 on one base row per non-NULL source value x_j of QI j (a fragment): counts each leaf once.
SELECT CASE WHEN $leaf IS NOT NULL AND ROW_NUMBER() OVER (PARTITION BY $leaf) = 1 THEN 1 ELSE 0 END
