-- The distinct attribute tuples τ of the table, as text labels (the caller drops those with a
-- NULL: the NBC of Section 3 classifies complete tuples of ΠA_i).
SELECT CAST($attr AS VARCHAR) AS v
FROM $tbl
GROUP BY $attr
