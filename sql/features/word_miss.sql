-- 1 when mask word $a is not contained in word $b (a bit of a is missing from b), else 0.
-- Summed over the words, 0 means CS(a) ⊆ CS(b).
SELECT CASE WHEN ($a & $b) = $a THEN 0 ELSE 1 END
