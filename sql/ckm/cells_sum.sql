-- The cells of a magnitude table (embedded as $cells by sql/ckm/publish_sum.sql and recount_sum.sql).
-- Each contributor w ($who: the --contributor column, else the record key's unit) sums its rows'
-- measure x ($measure) in every cell of the grouping sets (labels and GROUPING(d_1..d_D) as in
-- sql/ckm/cells.sql). Per cell c: the count n_c (rows), the cell key ck_c (sum of the rows' record
-- keys mod 2^32: the count table's key), the total X_c, the mean contribution X_c / contributors
-- and the sum of the $top_k largest contributions x_(1) + ... + x_(k) (cellKey's top_contr).
WITH hashed AS (
  SELECT $dim, $who AS ckm_who, CAST($measure AS DOUBLE PRECISION) AS ckm_x, $h AS ckm_hash FROM $src
), keyed AS (
  SELECT $dim, ckm_who, ckm_x, $rkey AS ckm_rkey FROM hashed
), per AS (
  SELECT $label, $gid AS ckm_gid, COUNT(*) AS ckm_rows, SUM(ckm_rkey) AS ckm_keys, SUM(ckm_x) AS ckm_amount
  FROM keyed
  GROUP BY $sets
), ranked AS (
  SELECT $dim, ckm_gid, ckm_rows, ckm_keys, ckm_amount,
         ROW_NUMBER() OVER (PARTITION BY ckm_gid, $dim ORDER BY ckm_amount DESC) AS ckm_rank
  FROM per
)
SELECT $dim, ckm_gid, SUM(ckm_rows) AS ckm_n, SUM(ckm_keys) % 4294967296 AS ckm_ck, SUM(ckm_amount) AS ckm_total,
       SUM(ckm_amount) / COUNT(*) AS ckm_mean, SUM(CASE WHEN ckm_rank <= $top_k THEN ckm_amount ELSE 0 END) AS ckm_top
FROM ranked
GROUP BY ckm_gid, $dim
