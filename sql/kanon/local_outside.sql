-- Local recoding's independent label check (issue 33), per quasi-identifier: published (value,
-- class) pairs whose value is not ⊥ and not, at the global node's level L or any level above it
-- below ⊥, the label of at least as many SOURCE rows of that class. $levels is the union of
-- kanon/local_level_labels.sql over those levels, computed from the source table alone (never
-- from the decisions). Must be 0.
SELECT COUNT(*) AS outside
FROM (SELECT CAST($col AS VARCHAR) AS v, $cls AS c, COUNT(*) AS n FROM $out WHERE $col IS NOT NULL GROUP BY 1, 2) AS o
LEFT JOIN (SELECT v, c, MAX(n) AS n FROM $levels GROUP BY v, c) AS s
  ON o.v = s.v AND o.c IS NOT DISTINCT FROM s.c
WHERE s.v IS NULL OR o.n > s.n
