-- Equivalence classes E over the quasi-identifiers, NULL (⊥) counting as its own value
-- (GROUP BY puts all NULLs in one group): how many classes have each size |E|.
SELECT size, COUNT(*) AS classes
FROM (
  SELECT COUNT(*) AS size
  FROM $tbl
  GROUP BY $qi
) AS e
GROUP BY size
ORDER BY size
