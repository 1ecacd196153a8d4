-- The distinct tuples of the columns a run reads, with their counts N(tuple): naive Bayes's
-- N(v), N(v, x_a) and ID3's training tuples all follow from them (NULL is ν, a value of its own).
SELECT $col, COUNT(*) AS n
FROM $tbl
GROUP BY $col
