-- The ⊥ pattern s of a row (a fragment other queries embed): one character per quasi-identifier,
-- '1' where the value is NULL (⊥, suppressed), '0' where it is published.
SELECT CONCAT(CASE WHEN $col IS NULL THEN '1' ELSE '0' END)
