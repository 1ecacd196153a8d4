-- The cell key method on a magnitude table, in one statement: the cells ($cells:
-- sql/ckm/cells_sum.sql) and one ptable lookup by (min(n_c, $top), ck_c) giving the noise v, as for
-- counts (sql/ckm/publish.sql). The published count (frequency) is n_c + v; the published total
-- (value) X_c + $m * s_c * v, the scale s_c the sum of the top_k largest contributions, or with
-- $by_mean the mean contribution (zero mean, as v; |noise| <= $m * s_c * D). A cell whose count is
-- published as 0 is left out, an empty cell has no row.
CREATE TABLE $out AS
SELECT $out_dim, CAST(c.ckm_gid AS INTEGER) AS grouping_id,
       CAST(c.ckm_total + $m * (CASE WHEN $by_mean THEN c.ckm_mean ELSE c.ckm_top END) * p.v AS DOUBLE PRECISION)
         AS value,
       CAST(c.ckm_n + p.v AS BIGINT) AS frequency
FROM $cells AS c
JOIN $ptable AS p ON p.i = LEAST(c.ckm_n, $top) AND c.ckm_ck >= p.lo AND c.ckm_ck < p.hi
WHERE c.ckm_n + p.v <> 0
