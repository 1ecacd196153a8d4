-- The independent check's naive Bayes statistics, from the published table: N(x_a, v) for
-- every attribute a and target value v in ONE scan over the rows whose target is known (the
-- training set; a generalized target counts under its label).
SELECT GROUPING($attr) AS g, $attr, $target AS v, COUNT(*) AS n
FROM $tbl
WHERE $target IS NOT NULL
GROUP BY GROUPING SETS (($attr, $target))
