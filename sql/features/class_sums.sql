-- s_c(x): the rows of class c having feature x, per class c, and |E_c| (n). HamDist of every
-- feature follows in closed form (Zhang et al. Def. 8).
SELECT $cls AS class_value, COUNT(*) AS n, SUM($col) AS s
FROM $tbl
GROUP BY $cls
