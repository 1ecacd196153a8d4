-- N(y, c): rows per distinct quasi-identifier vector y and class c, i.e. the tuple set S
-- with its count table (Kameya & Hayashi Sec. 2.2). NULL (⊥) is a value of its own.
SELECT $qi, $cls, COUNT(*) AS n
FROM $tbl
GROUP BY $qi, $cls
