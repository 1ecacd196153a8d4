-- Every published cell next to its value recounted from the source rows: the grouping sets
-- grouped afresh and joined on (grouping id, labels). A published value must equal the
-- recount (an empty cell has no source row and must be 0); a hidden cell's recount is the
-- true value its attacker's interval must protect.
WITH recount AS (
  SELECT $gid AS gid, $key AS k, SUM($measure) AS total
  FROM $src
  GROUP BY $sets
), published AS (
  SELECT $label, grouping_id AS gid, $out_key AS k, value, status FROM $out
)
SELECT p.*, r.total
FROM published AS p
LEFT JOIN recount AS r ON p.gid = r.gid AND p.k = r.k
