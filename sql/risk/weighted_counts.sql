-- Each sample class E_k over the quasi-identifiers (NULL = ⊥ a value of its own) with its sample
-- count f_k and the estimate of its population count from the sampling weights w_i (each record
-- stands for w_i people, Horvitz-Thompson): F̂_k = Σ_{i ∈ E_k} w_i. A NULL weight counts as 0.
SELECT COUNT(*) AS f, COALESCE(SUM($w), 0) AS big_f
FROM $tbl
GROUP BY $qi
