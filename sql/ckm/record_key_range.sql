-- A declared record key column must hold a key in [0, $upper) on every row (upper 1 for keys in
-- [0, 1), 2^32 for keys in units of 2^-32): how many rows do not (NULL or out of range). The keys
-- themselves are never read back: they are as secret as the noise they decide.
SELECT COUNT(*) - COUNT(CASE WHEN $h >= 0 AND $h < $upper THEN 1 END) AS bad
FROM $src
