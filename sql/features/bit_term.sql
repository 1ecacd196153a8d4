-- One feature's bit in a 62-bit mask word: $weight = 2^i when the row has feature x
-- (x ∈ CS(e), Zhang et al. Def. 3), else 0. The column holds 0 or 1 (features/word_check.sql
-- proved it first), so this is its value times 2^i (BIGINT), summed per word: no overflow, 2^62 > Σ.
SELECT CAST($col AS BIGINT) * $weight
