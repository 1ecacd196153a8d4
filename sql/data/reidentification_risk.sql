-- Re-identification risk over the quasi-identifiers, equivalence classes E with NULL (⊥) as a
-- value of its own: a record's prosecutor risk is 1/|E|. Returns max 1/|E| (= 1/k), the mean
-- over records (= classes / N), the records whose risk exceeds $threshold, and the sample
-- uniques (records alone in their class).
SELECT
  1.0 / MIN(size) AS max_risk,
  CAST(COUNT(*) AS DOUBLE) / SUM(size) AS mean_risk,
  COALESCE(SUM(size) FILTER (WHERE 1.0 / size > $threshold), 0) AS records_above,
  COUNT(*) FILTER (WHERE size = 1) AS sample_uniques
FROM (
  SELECT COUNT(*) AS size
  FROM $tbl
  GROUP BY $qi
) AS e
