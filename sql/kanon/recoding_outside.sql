-- Global recoding's independent check (issue 33), per quasi-identifier: published (value, class)
-- pairs whose value is not ⊥ and not, at the chosen level, the label of at least as many SOURCE
-- rows of that class ($label computed from the source table itself; $cls the class column, or
-- the one constant label without one). A value the hierarchy does not give, or gives to more
-- rows of a class than the source holds under it, is counted. Must be 0.
SELECT COUNT(*) AS outside
FROM (SELECT $col AS v, $cls AS c, COUNT(*) AS n FROM $out WHERE $col IS NOT NULL GROUP BY 1, 2) AS o
LEFT JOIN (SELECT $label AS v, $cls AS c, COUNT(*) AS n FROM $src GROUP BY 1, 2) AS s
  ON o.v = s.v AND o.c IS NOT DISTINCT FROM s.c
WHERE s.v IS NULL OR o.n > s.n
