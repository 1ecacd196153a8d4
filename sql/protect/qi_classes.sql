-- The equivalence classes E of the quasi-identifiers y = (A_1, ..., A_m), NULL (⊥) a value
-- of its own: their values, their NULL-safe group key $g (sql/common/group_key.sql) and |E|.
-- protect --k keeps every |E| >= k; without --k, the smallest |E| is the k the table had.
SELECT $qi, $g AS g, COUNT(*) AS n
FROM $tbl
GROUP BY $qi
