-- N̂ = Σ_i w_i: the population size the sampling weights stand for (a NULL weight counts as 0).
SELECT COALESCE(SUM($w), 0) AS total
FROM $tbl
