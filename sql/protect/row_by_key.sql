-- One row named by the user: key and columns of the row whose key reads as the given text
-- (a confidential cell's tuple d_i).
SELECT $key, $col
FROM $tbl
WHERE CAST($key AS VARCHAR) = $k
