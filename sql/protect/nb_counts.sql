-- The independent check's naive Bayes statistics, from the published table: N(x_a, c) for
-- every predictor a in ONE scan over the rows whose class c is known (the training set).
SELECT GROUPING($attr) AS g, $attr, $cls AS c, COUNT(*) AS n
FROM $tbl
WHERE $cls IS NOT NULL
GROUP BY GROUPING SETS (($attr, $cls))
