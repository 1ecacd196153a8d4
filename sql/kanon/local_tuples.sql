-- Local recoding (issue 33): the tuples of the suppressed table, as the pass after the loop reads
-- them: each row's labels at the global node's level (the hidden copies, as text), its published
-- pattern p (labels or ⊥), its class c, and the rows N of each.
SELECT $item, COUNT(*) AS n
FROM $tbl
GROUP BY $key
