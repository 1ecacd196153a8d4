-- For a reviewer (the end of an --emit-sql script; the job's own check redoes the lookup apart from
-- SQL, anonsql.ckm.verify): every cell counted afresh from the source ($cells: its count n_c and
-- cell key ck_c), its noise v looked up in the written ptable ($ptable, row min(n_c, $top), the
-- interval lo <= ck_c < hi), beside the published count ($count: value, or a magnitude table's
-- frequency), joined on (grouping id, labels) both ways. Must return no rows: every published
-- count is n_c + v, and a cell is missing only where n_c + v = 0.
WITH recount AS (
  SELECT ckm_gid AS gid, $key AS k, ckm_n, ckm_ck FROM $cells AS c
), expected AS (
  SELECT r.gid, r.k, r.ckm_n + p.v AS value
  FROM recount AS r
  JOIN $ptable AS p ON p.i = LEAST(r.ckm_n, $top) AND r.ckm_ck >= p.lo AND r.ckm_ck < p.hi
), published AS (
  SELECT grouping_id AS gid, $key AS k, $count AS value FROM $out
)
SELECT COALESCE(e.gid, b.gid) AS gid, COALESCE(e.k, b.k) AS cell, e.value AS expected, b.value AS published
FROM expected AS e
FULL OUTER JOIN published AS b ON e.gid = b.gid AND e.k = b.k
WHERE COALESCE(e.value, 0) <> COALESCE(b.value, 0)
