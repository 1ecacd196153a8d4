-- The cell key method on a count table, in one statement: the cells ($cells: sql/ckm/cells.sql,
-- each with its count n_c and cell key ck_c) joined by range to the stored ptable ($ptable: i, v,
-- lo, hi): the entry of row i = min(n_c, $top) (larger counts share the last row) whose interval
-- lo <= ck_c < hi holds the cell key gives the noise v, and the published count is n_c + v (never in
-- 1..js-1, |v| <= D). An empty cell has no row and stays 0; a cell published as 0 is left out too,
-- so a missing cell reads 0 and tells nothing about whether it was empty.
CREATE TABLE $out AS
SELECT $out_dim, CAST(c.ckm_gid AS INTEGER) AS grouping_id, CAST(c.ckm_n + p.v AS BIGINT) AS value
FROM $cells AS c
JOIN $ptable AS p ON p.i = LEAST(c.ckm_n, $top) AND c.ckm_ck >= p.lo AND c.ckm_ck < p.hi
WHERE c.ckm_n + p.v <> 0
