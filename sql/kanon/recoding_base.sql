-- The lattice's base relation for global recoding (issue 33): the source grouped by the label
-- of every level of every quasi-identifier's hierarchy ($label: c_j_l, level 0 the value, the
-- top level ⊥ = NULL), N = anonsql_n rows per combination; every lattice node is a coarser
-- grouping of it, so the search scans this small relation, never the rows again. Beside each
-- label, the search utility's loss of a cell generalized to it ($loss: loss_j_l; ARX's loss
-- metric (leaves under the label - 1) / (D_j - 1), D_j the distinct values of QI j, ⊥ loses 1
-- (kanon/label_loss.sql), or the MAR cost (kanon/label_kl.sql), whose $label then also holds the
-- class anonsql_c), leaves counted once each ($first: first_j = 1 on one row per source value).
CREATE TEMPORARY TABLE $base AS
SELECT *, $loss FROM (
  SELECT *, $first FROM (SELECT $label, COUNT(*) AS anonsql_n FROM $src GROUP BY $key) AS g
) AS f
