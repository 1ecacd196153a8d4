-- The distinct containment sets CS(e) of the rows (Zhang et al. Def. 3) as 62-bit mask
-- words w_0, w_1, ... with n(g) rows and n_1(g) rows of class C_1 each ($cls may be the
-- constant 0 when no class is given). Equal masks are the groups of equal projections
-- (k-anonymity, DistCnt); the statistic every method starts from, and the CTE g of
-- sql/features/supports.sql. The words are computed once in the inner query and grouped
-- by name ($w: r.w_0, r.w_1, ...).
SELECT $w, COUNT(*) AS n, SUM(CASE WHEN r.c = $c1 THEN 1 ELSE 0 END) AS n1
FROM (SELECT $word AS w, $cls AS c FROM $tbl) AS r
GROUP BY $w
