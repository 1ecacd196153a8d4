-- Verification: every cell recounted from the source rows (n_c = COUNT(*), its cell key
-- ck_c = sum of record keys mod 2^32) next to its published value, joined on (grouping id, labels)
-- both ways: a published cell must be a cell of the source, and a cell of the source missing from
-- the published table must be one whose perturbed count is 0. The ptable lookup is redone apart
-- from SQL (anonsql.ckm.verify), never read back from the written table.
WITH hashed AS (
  SELECT $dim, $h AS ckm_hash FROM $src
), keyed AS (
  SELECT $dim, $rkey AS ckm_rkey FROM hashed
), recount AS (
  SELECT $gid AS gid, $key AS k, COUNT(*) AS ckm_n, SUM(ckm_rkey) % 4294967296 AS ckm_ck
  FROM keyed
  GROUP BY $sets
), published AS (
  SELECT grouping_id AS gid, $out_key AS k, value FROM $out
)
SELECT COALESCE(r.gid, p.gid) AS gid, COALESCE(r.k, p.k) AS k, r.ckm_n, r.ckm_ck, p.value
FROM recount AS r
FULL OUTER JOIN published AS p ON r.gid = p.gid AND r.k = p.k
