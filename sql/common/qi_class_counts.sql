-- N(y, c): rows per distinct quasi-identifier vector y and class c, i.e. the tuple set S
-- with its count table (Kameya & Hayashi Sec. 2.2). NULL (⊥) is a value of its own.
-- $group_key (sql/group_key.sql over y and c) names the group for set-based write-back.
SELECT $qi, $cls, COUNT(*) AS n, $group_key AS group_key
FROM $tbl
GROUP BY $qi, $cls
