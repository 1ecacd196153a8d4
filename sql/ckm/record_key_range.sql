-- A declared record key column must hold keys in [0, 1) on every row: how many rows do not
-- (NULL or out of range), and the smallest and largest key.
SELECT COUNT(*) - COUNT(CASE WHEN $h >= 0 AND $h < 1 THEN 1 END) AS bad, MIN($h) AS smallest, MAX($h) AS largest
FROM $src
