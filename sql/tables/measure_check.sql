-- A magnitude table's measure: its smallest value (the attacker's LP assumes x >= 0) and the
-- rows without a value.
SELECT MIN($measure) AS smallest, COUNT(*) - COUNT($measure) AS missing FROM $src
