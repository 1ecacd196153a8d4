-- Containment supports (Zhang et al. Def. 4): for each distinct mask a, the rows whose mask
-- contains it ($missing = 0: no word of a has a bit that b lacks). AC(e) is the support of
-- e's mask, AC(D) the smallest (Def. 6); n and n_1 per mask give DistCnt (eq. 4).
-- g ($masks) is sql/features/masks.sql, the statistic the selection starts from.
WITH g AS ($masks)
SELECT a.n, a.n1, SUM(b.n) AS support
FROM g AS a
JOIN g AS b ON $missing = 0
GROUP BY $aw, a.n, a.n1
