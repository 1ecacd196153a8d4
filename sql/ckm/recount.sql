-- Verification: every cell counted afresh from the source ($cells: sql/ckm/cells.sql, its count
-- n_c and cell key ck_c) next to its published count, joined on (grouping id, labels) both ways: a
-- published cell must be a cell of the source, and a cell of the source missing from the published
-- table must be one whose perturbed count is 0. The ptable lookup is redone apart from SQL
-- (anonsql.ckm.verify), never read back from the written table.
WITH recount AS (
  SELECT ckm_gid AS gid, $key AS k, ckm_n, ckm_ck FROM $cells AS c
), published AS (
  SELECT grouping_id AS gid, $key AS k, value FROM $out
)
SELECT COALESCE(r.gid, p.gid) AS gid, COALESCE(r.k, p.k) AS k, r.ckm_n, r.ckm_ck, p.value
FROM recount AS r
FULL OUTER JOIN published AS p ON r.gid = p.gid AND r.k = p.k
