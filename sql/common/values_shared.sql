-- Original values left in a pseudonymized column: distinct non-NULL values of $b.$col (as text)
-- that also occur in $a.$col; 0 <=> no original value of the source survived the pseudonyms.
-- NULL is no value: a NULL pseudonymizes to NULL (HMAC of nothing is not taken) and tells
-- nothing, so a NULL on both sides is not "an original value left".
SELECT COUNT(*) AS n
FROM (
  SELECT CAST($col AS VARCHAR) AS v FROM $a WHERE $col IS NOT NULL
  INTERSECT
  SELECT CAST($col AS VARCHAR) AS v FROM $b WHERE $col IS NOT NULL
) AS kept
