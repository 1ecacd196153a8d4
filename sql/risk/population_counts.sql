-- Each sample class E_k over the quasi-identifiers (NULL = ⊥ a value of its own) with its sample
-- count f_k and its population count F_k, the rows of the population table $population holding
-- the same values: one GROUP BY over both tables stacked, so ⊥ meets ⊥ and each table is read once.
-- Only the sample's classes (f_k > 0) are kept.
SELECT f, big_f
FROM (
  SELECT SUM($in_sample) AS f, SUM(1 - $in_sample) AS big_f
  FROM (
    SELECT $qi, 1 AS $in_sample FROM $tbl
    UNION ALL
    SELECT $population_qi, 0 AS $in_sample FROM $population
  ) AS both_tables
  GROUP BY $qi
) AS e
WHERE f > 0
