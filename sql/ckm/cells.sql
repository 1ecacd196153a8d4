-- The cells of a count table (embedded as $cells by sql/ckm/publish.sql and recount.sql). Every
-- row x carries its record key r_x ($rkey over h: sql/ckm/record_key_hmac.sql, record_key_column.sql
-- or record_key_units.sql, in units of 2^-32). For every cell c of the grouping sets (inner cells and
-- margins; GROUPING(d_1..d_D) marks the summed dimensions, their label 'Total'): the count
-- n_c = COUNT(*) and the cell key ck_c = (sum of r_x over the rows of c) mod 2^32, the fractional
-- part of the sum of the keys.
WITH hashed AS (
  SELECT $dim, $h AS ckm_hash FROM $src
), keyed AS (
  SELECT $dim, $rkey AS ckm_rkey FROM hashed
)
SELECT $label, $gid AS ckm_gid, COUNT(*) AS ckm_n, SUM(ckm_rkey) % 4294967296 AS ckm_ck
FROM keyed
GROUP BY $sets
