-- N(x_j, c) for every attribute j in ONE scan: one grouping set (A_j, C) per attribute.
-- g_j = GROUPING(A_j) is 0 on the rows that count attribute j; x_j NULL gives N(⊥_j, c).
SELECT GROUPING($attr) AS g, $attr, $cls, COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($attr, $cls))
