-- Per-attribute utility (the release's value distributions, after ARX's utility views): rows
-- per value of one column $acol of the published table $after beside the rows of the same value
-- ($bcol) of the baseline $before, one GROUP BY over the value's text on each side (NULL, ⊥, a
-- value of its own), joined by a GROUP BY of their union (PostgreSQL takes no FULL JOIN on
-- IS NOT DISTINCT FROM). The $top values by their larger count come back; the rest are "other".
-- The baseline's counts are facts of the source: the page showing them is a private artefact.
WITH counts AS (
  SELECT CAST($acol AS VARCHAR) AS v, CAST(NULL AS BIGINT) AS n_before, COUNT(*) AS n_after
  FROM $after GROUP BY CAST($acol AS VARCHAR)
  UNION ALL
  SELECT CAST($bcol AS VARCHAR) AS v, COUNT(*) AS n_before, CAST(NULL AS BIGINT) AS n_after
  FROM $before GROUP BY CAST($bcol AS VARCHAR))
SELECT v, COALESCE(MAX(n_before), 0) AS n_before, COALESCE(MAX(n_after), 0) AS n_after
FROM counts
GROUP BY v
ORDER BY GREATEST(COALESCE(MAX(n_after), 0), COALESCE(MAX(n_before), 0)) DESC, v NULLS FIRST
LIMIT $top
