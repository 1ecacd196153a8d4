-- Verification of a magnitude table over taxonomy levels: each contributor w's share of every
-- leaf cell (a dimension with a taxonomy at its leaves, the source's own values; the grouping sets
-- and GROUPING(d_1..d_D) as in sql/ckm/cells_sum.sql): its rows, the sum of their record keys
-- mod 2^32 and the sum of their measure x. anonsql.ckm.verify adds them up each taxonomy node's
-- leaves apart from SQL, then takes each cell's count, cell key, total, mean and top-k contributions.
WITH hashed AS (
  SELECT $dim, $who AS ckm_who, CAST($measure AS DOUBLE PRECISION) AS ckm_x, $h AS ckm_hash FROM $src
), keyed AS (
  SELECT $dim, ckm_who, ckm_x, $rkey AS ckm_rkey FROM hashed
)
SELECT $label, $gid AS ckm_gid, ckm_who, COUNT(*) AS ckm_rows, SUM(ckm_rkey) % 4294967296 AS ckm_keys,
       SUM(ckm_x) AS ckm_amount
FROM keyed
GROUP BY $sets
