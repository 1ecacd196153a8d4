-- NBC-enabling views (Section 3) in ONE scan: N^i_{t,c} = |σ_{A_i=t ∧ C=c}(T)| for every
-- attribute i through one grouping set (A_i, C) each, and P_c = |σ_{C=c}(T)| through (C).
-- g_i = GROUPING(A_i) is 0 on the rows of set i; on the P_c rows every g_i is 1.
-- Values come typed (for their sort order) and as text (the published labels).
SELECT GROUPING($attr) AS g, $attr, CAST($attr AS VARCHAR) AS v, $cls, CAST($cls AS VARCHAR) AS cv,
       COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($attr, $cls), ($cls))
