-- Naive Bayes statistics of every fold f in ONE scan of a training table D (the anonymized
-- table, or the original for the baseline), its rows placed in folds by the key:
--   N_f(x_j, c) for every quasi-identifier A_j (the set (fold, A_j, C); NULL x_j is ⊥_j), and
--   N_f(c) (the set (fold, C)). g_j = GROUPING(A_j) is 0 exactly on attribute j's rows.
-- Fold f trains on the other folds: N(x_j, c) - N_f(x_j, c) and N(c) - N_f(c).
SELECT f.fold, GROUPING($qi) AS g, $qi, $cls, COUNT(*) AS n
FROM $tbl AS t
JOIN $folds AS f ON $tbl_key = f.k
GROUP BY GROUPING SETS ((f.fold, $qi, $cls), (f.fold, $cls))
