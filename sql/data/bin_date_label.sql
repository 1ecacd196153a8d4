-- Equal-width bin of a date x (a fragment): w days counted from 1970-01-01, the label
-- '[lo,hi)' with lo = 1970-01-01 + FLOOR(d / w) * w days, d = x - 1970-01-01, hi = lo + w;
-- NULL stays NULL. $width is a literal (no bind parameters in CREATE TABLE AS).
SELECT CASE
  WHEN $col IS NULL THEN NULL
  ELSE '[' || CAST(DATE '1970-01-01' + CAST(FLOOR(($col - DATE '1970-01-01') / $width) * $width AS INTEGER) AS VARCHAR)
           || ',' || CAST(DATE '1970-01-01' + CAST(FLOOR(($col - DATE '1970-01-01') / $width) * $width + $width AS INTEGER) AS VARCHAR) || ')'
END
