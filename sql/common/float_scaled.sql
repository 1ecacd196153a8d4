-- y = |v|·2^(53−e0), exactly: an integer in [2^52, 2^55) for a double v ≠ 0 and e0 its binary
-- exponent within one (common/float_exponent.sql). The scaling is two powers of two, each
-- exact, so a subnormal or a huge v never leaves the doubles' range on the way (a fragment of
-- common/float_key.sql).
SELECT ABS($v) * POWER(CAST(2 AS DOUBLE), FLOOR((53 - $e0) / 2))
       * POWER(CAST(2 AS DOUBLE), 53 - $e0 - FLOOR((53 - $e0) / 2))
