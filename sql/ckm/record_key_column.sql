-- The record key r_x of a row x read from a declared column h of keys in [0, 1) (as R's cellKey
-- stores them), in units of 2^-32: floor(r_x * 2^32), a whole number in [0, 2^32).
SELECT CAST(FLOOR($h * 4294967296) AS BIGINT)
