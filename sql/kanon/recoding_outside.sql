-- Global recoding's independent check (issue 33), per quasi-identifier: published values that
-- are not ⊥ and not, at the chosen level, the label of at least as many SOURCE rows ($label
-- computed from the source table itself). A value the hierarchy does not give, or gives to more
-- rows than the source holds under it, is counted. Must be 0.
SELECT COUNT(*) AS outside
FROM (SELECT $col AS v, COUNT(*) AS n FROM $out WHERE $col IS NOT NULL GROUP BY $col) AS o
LEFT JOIN (SELECT $label AS v, COUNT(*) AS n FROM $src GROUP BY $label) AS s ON o.v = s.v
WHERE s.v IS NULL OR o.n > s.n
