-- The cell key method on one table, in one statement. Every row x carries its record key r_x
-- ($rkey over h: sql/ckm/record_key_hmac.sql or record_key_column.sql, in units of 2^-32). For
-- every cell c of the grouping sets (inner cells and margins; GROUPING(d_1..d_D) marks the summed
-- dimensions, their label 'Total') the count n_c = COUNT(*) and the cell key
-- ck_c = (sum of r_x over the rows of c) mod 2^32, the fractional part of the sum of the keys.
-- The ptable ($ptable: i, v, lo, hi) gives for original count i and cell key ck the noise v of
-- the entry whose interval lo <= ck < hi holds ck (row i = min(n_c, $top): larger counts share
-- the last row); the published count is n_c + v, never in 1..js-1, |v| <= D. An empty cell has
-- no row and stays 0; a cell published as 0 is left out too, so a missing cell reads 0 and tells
-- nothing about whether it was empty.
CREATE TABLE $out AS
WITH hashed AS (
  SELECT $dim, $h AS ckm_hash FROM $src
), keyed AS (
  SELECT $dim, $rkey AS ckm_rkey FROM hashed
), cells AS (
  SELECT $label, $gid AS ckm_gid, COUNT(*) AS ckm_n, SUM(ckm_rkey) % 4294967296 AS ckm_ck
  FROM keyed
  GROUP BY $sets
)
SELECT $out_dim, CAST(c.ckm_gid AS INTEGER) AS grouping_id, CAST(c.ckm_n + p.v AS BIGINT) AS value
FROM cells AS c
JOIN $ptable AS p ON p.i = LEAST(c.ckm_n, $top) AND c.ckm_ck >= p.lo AND c.ckm_ck < p.hi
WHERE c.ckm_n + p.v <> 0
