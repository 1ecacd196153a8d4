-- The code of a value x_j (a fragment; $code is the dictionary's code of x_j, joined by SQL
-- equality): -1 for ⊥ (NULL), -2 for a value the dictionary lacks (a row written after the
-- statistics were counted), which no decision names.
SELECT CASE WHEN $col IS NULL THEN -1 ELSE COALESCE($code, -2) END
