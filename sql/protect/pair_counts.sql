-- N(v_k, v_l) of every attribute pair in ONE scan, for the mutual information of Def. 2.9:
-- the row of pair i has ga_i = gb_i = 0.
SELECT GROUPING($a) AS ga, GROUPING($b) AS gb, $a, $b, COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($a, $b))
