-- The record key r_x of a row x read from a declared column h of whole numbers in [0, 2^32):
-- the key already in units of 2^-32 (r_x = h / 2^32), summed as it is.
SELECT CAST($h AS BIGINT)
