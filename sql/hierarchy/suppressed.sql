-- The top level of every hierarchy, `*` (a fragment): ⊥, the suppressed value, as text.
SELECT CAST(NULL AS VARCHAR)
