-- Equal-width bin of a numeric value x (a fragment): the label '[lo,hi)' with
-- lo = FLOOR(x / w) * w and hi = lo + w for a whole-number width w; NULL stays NULL and NaN,
-- inf and -inf are labels of their own. $width is a literal: PostgreSQL takes no bind
-- parameters in CREATE TABLE AS.
SELECT CASE
  WHEN $col IS NULL THEN NULL
  WHEN $col = CAST('NaN' AS DOUBLE) THEN 'NaN'
  WHEN $col = CAST('Infinity' AS DOUBLE) THEN 'inf'
  WHEN $col = CAST('-Infinity' AS DOUBLE) THEN '-inf'
  ELSE '[' || CAST(CAST(FLOOR($col / $width) * $width AS BIGINT) AS VARCHAR) || ','
           || CAST(CAST(FLOOR($col / $width) * $width + $width AS BIGINT) AS VARCHAR) || ')'
END
