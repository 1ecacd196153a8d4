-- N(v) of every attribute in ONE scan (one grouping set per attribute; g_j = 0 marks the rows
-- of attribute j, a NULL value there counts ν): the first-order distributions of Def. 2.7.
SELECT GROUPING($attr) AS g, $attr, COUNT(*) AS n
FROM $tbl
GROUP BY GROUPING SETS (($attr))
