-- The dictionary of a column A_j: each distinct non-NULL value x (typed as in the table) with
-- its code, the 0-based rank in the type's order, and its exact text. Values equal in SQL
-- (numeric 1.0 and 1.00, double -0.0 and 0.0, interval '1 day' and '24 hours') are one group
-- here as in every GROUP BY, so they share one code; ⊥ has none (its code is -1).
CREATE TEMPORARY TABLE $dict AS
SELECT $col AS value, DENSE_RANK() OVER (ORDER BY $col) - 1 AS code, CAST($col AS VARCHAR) AS label
FROM $tbl
WHERE $col IS NOT NULL
GROUP BY $col
