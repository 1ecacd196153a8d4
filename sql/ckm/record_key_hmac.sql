-- The record key r_x of a row x from its unit's key u (a fragment over the column h holding the
-- keyed hash HMAC-SHA256(K, u) as 64 lowercase hex digits, the construction of --pseudonymize):
-- its first 8 hex digits as a whole number in [0, 2^32), i.e. r_x = that number / 2^32 in [0, 1)
-- kept in units of 2^-32, so that sums of keys are exact on every engine. Every row of one unit
-- gets the same key, in every table keyed by K. (BIGINT from the first digit: 15 * 2^28 > 2^31.)
SELECT CAST(STRPOS('0123456789abcdef', SUBSTR($h, 1, 1)) - 1 AS BIGINT) * 268435456
     + (STRPOS('0123456789abcdef', SUBSTR($h, 2, 1)) - 1) * 16777216
     + (STRPOS('0123456789abcdef', SUBSTR($h, 3, 1)) - 1) * 1048576
     + (STRPOS('0123456789abcdef', SUBSTR($h, 4, 1)) - 1) * 65536
     + (STRPOS('0123456789abcdef', SUBSTR($h, 5, 1)) - 1) * 4096
     + (STRPOS('0123456789abcdef', SUBSTR($h, 6, 1)) - 1) * 256
     + (STRPOS('0123456789abcdef', SUBSTR($h, 7, 1)) - 1) * 16
     + (STRPOS('0123456789abcdef', SUBSTR($h, 8, 1)) - 1)
