-- Verification of a magnitude table: every cell counted afresh from the source ($cells:
-- sql/ckm/cells_sum.sql: count, cell key, total, mean and top-k contributions) next to its published
-- count and total, joined on (grouping id, labels) both ways; the lookup and the noise are redone
-- apart from SQL (anonsql.ckm.verify).
WITH recount AS (
  SELECT ckm_gid AS gid, $key AS k, ckm_n, ckm_ck, ckm_total, ckm_mean, ckm_top FROM $cells AS c
), published AS (
  SELECT grouping_id AS gid, $key AS k, value, frequency FROM $out
)
SELECT COALESCE(r.gid, p.gid) AS gid, COALESCE(r.k, p.k) AS k, r.ckm_n, r.ckm_ck, p.frequency, r.ckm_total,
       r.ckm_mean, r.ckm_top, p.value
FROM recount AS r
FULL OUTER JOIN published AS p ON r.gid = p.gid AND r.k = p.k
