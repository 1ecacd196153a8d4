-- e0 = ⌊ln|v| / ln 2⌋: the binary exponent of a double v ≠ 0, off by at most one where the
-- logarithm rounds near a power of two (a fragment of common/float_key.sql, which corrects it).
SELECT FLOOR(LN(ABS($v)) / LN(2))
