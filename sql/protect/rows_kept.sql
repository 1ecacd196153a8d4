-- Verification: the output's rows, and the source keys missing from it (every row must be
-- kept but the removed tuples).
SELECT (SELECT COUNT(*) FROM $out) AS n,
       (SELECT COUNT(*) FROM $tbl AS s LEFT JOIN $out AS o ON o.$key = s.$key WHERE o.$key IS NULL) AS missing
