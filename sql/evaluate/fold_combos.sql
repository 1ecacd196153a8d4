-- N_f(y, c): the rows of a table per fold f, distinct QI vector y (NULL is ⊥) and class c,
-- one row per combination, not per record. On the original these are the test tuples of
-- every fold; on a training table they are the tree's weighted training tuples.
SELECT f.fold, $qi, $cls, COUNT(*) AS n
FROM $tbl AS t
JOIN $folds AS f ON $tbl_key = f.k
GROUP BY f.fold, $qi, $cls
