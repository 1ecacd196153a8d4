-- The exact value of a double $v as text that is the same on every engine, where their own
-- texts differ (25.0 and 25, 1e+20 and 1.0E20): ±M p E, meaning ±M·2^E with the integer M in
-- [2^52, 2^53), built by arithmetic IEEE 754 makes exact everywhere. $y = |v|·2^(53−e0) is an
-- integer in [2^52, 2^55) (common/float_scaled.sql, $e0 from common/float_exponent.sql, maybe
-- one off); s ∈ {0, 1, 2}, its bits beyond 53, corrects that: M = y/2^s, E = e0 − 53 + s.
-- -1 is '-4503599627370496p-52'; 0 and -0 are '0'; NaN and ±Infinity are spelled out; NULL stays NULL.
SELECT CASE
  WHEN $v IS NULL THEN NULL
  WHEN $v = 0 THEN '0'
  WHEN $v = CAST('NaN' AS DOUBLE) THEN 'NaN'
  WHEN $v = CAST('Infinity' AS DOUBLE) THEN 'Infinity'
  WHEN $v = CAST('-Infinity' AS DOUBLE) THEN '-Infinity'
  ELSE CASE WHEN $v < 0 THEN '-' ELSE '' END
    || CAST(CAST($y / CASE WHEN $y >= 18014398509481984 THEN 4 WHEN $y >= 9007199254740992 THEN 2 ELSE 1 END
                 AS BIGINT) AS VARCHAR)
    || 'p' || CAST(CAST($e0 - 53 + CASE WHEN $y >= 18014398509481984 THEN 2 WHEN $y >= 9007199254740992 THEN 1
                                         ELSE 0 END AS BIGINT) AS VARCHAR)
END
