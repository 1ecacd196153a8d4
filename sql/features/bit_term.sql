-- One feature's bit in a 62-bit mask word: $weight = 2^i when the row has feature x
-- (x ∈ CS(e), Zhang et al. Def. 3), else 0. The job sums these per word (BIGINT: no overflow).
SELECT CASE WHEN $col = 1 THEN CAST($weight AS BIGINT) ELSE CAST(0 AS BIGINT) END
