-- Original values left in a pseudonymized column: distinct values of $b.$col (as text) that
-- also occur in $a.$col; 0 <=> no original value of the source survived the pseudonyms.
SELECT COUNT(*) AS n
FROM (
  SELECT CAST($col AS VARCHAR) AS v FROM $a
  INTERSECT
  SELECT CAST($col AS VARCHAR) AS v FROM $b
) AS kept
