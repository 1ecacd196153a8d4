-- The ⊥ patterns s in use in $published (attack/null_pattern.sql), one row each: the branches of
-- attack/linkage.sql, one per pattern.
SELECT DISTINCT $pattern AS s
FROM $published
