-- The attacker's value of one quasi-identifier seen through a ⊥ pattern $pattern (a fragment): ⊥
-- where the pattern suppresses position $at (1-based), else the attacker's value $col.
SELECT CASE WHEN SUBSTRING($pattern, $at, 1) = '1' THEN NULL ELSE $col END
